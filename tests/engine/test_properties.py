"""Property tests of the rules engine over random tables, driven by hypothesis (RULES.md R1-R10).

Tables have 2 to 22 seats, every betting structure, no ante, an ante for every seat or a big-blind ante, uneven
stacks (some smaller than the blinds and antes), a random button, a random deck and sometimes entry blinds. The
hands are played with random legal actions that hypothesis draws, so a failure shrinks to a short hand.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from arena.engine import (
    ActionKind,
    AnteMode,
    EventKind,
    Hand,
    IllegalActionError,
    LegalActions,
    RuleError,
    Street,
    Structure,
    TableConfig,
    seat_view,
)
from tests.soak import scaled

# examples per property below: 50 to 150 (hypothesis's default is 100; they were four times that until the whole
# suite had to fit in five minutes); ``make soak`` runs ten times as many
BASE = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

DRAWN_ACTIONS = 80  # actions chosen by hypothesis in one hand; the rest check or call
Move = tuple[int, Any, Any]  # (seat, kind, amount): kind and amount may be deliberately malformed


@dataclass(frozen=True)
class Table:
    """Everything needed to start one hand."""

    config: TableConfig
    stacks: tuple[int, ...]
    button: int
    deck: tuple[int, ...]
    entry_blinds: tuple[int, ...]

    def hand(self) -> Hand:
        return Hand(self.config, self.stacks, self.deck, button=self.button, entry_blinds=self.entry_blinds)


@st.composite
def tables(draw: st.DrawFn, max_seats: int = 22) -> Table:
    """A random table: seats, structure, stakes, antes, uneven stacks, button, deck and entry blinds."""
    n = draw(st.integers(2, max_seats))
    structure = draw(st.sampled_from(Structure))
    big = draw(st.one_of(st.sampled_from([2, 10, 100]), st.integers(1, 500)))
    small = draw(st.one_of(st.just(big // 2), st.integers(0, big)))
    mode = draw(st.sampled_from(AnteMode))
    ante = 0 if mode is AnteMode.NONE else draw(st.integers(1, 2 * big))
    extra: dict[str, Any] = {}
    if structure is Structure.FIXED_LIMIT:
        extra = {
            "small_bet": draw(st.one_of(st.just(0), st.integers(1, 2 * big))),
            "big_bet": draw(st.one_of(st.just(0), st.integers(1, 4 * big))),
            "raise_cap": draw(st.integers(1, 6)),
            "uncapped_heads_up": draw(st.booleans()),
        }
    config = TableConfig(
        small, big, structure, ante, mode,
        reveal_all=draw(st.booleans()), chip=draw(st.sampled_from([1, 1, 1, 5])), **extra,
    )
    short = big + ante + 1  # stacks up to here may not cover the forced bets (R3.3)
    stack = st.one_of(st.integers(1, short), st.integers(1, 50 * big), st.integers(50 * big, 400 * big))
    stacks = tuple(draw(st.lists(stack, min_size=n, max_size=n)))
    button = draw(st.integers(0, n - 1))
    deck = tuple(draw(st.permutations(range(52))))
    entry = draw(st.one_of(st.just(()), st.lists(st.integers(0, n - 1), max_size=3, unique=True).map(tuple)))
    return Table(config, stacks, button, deck, entry)


# ----------------------------------------------------------------- helpers


def snapshot(hand: Hand) -> tuple[object, ...]:
    """Everything an illegal action must leave unchanged (R6.3)."""
    return (
        list(hand.stacks),
        list(hand.bets),
        list(hand.committed),
        list(hand.dead),
        list(hand.folded),
        hand.to_act,
        hand.street,
        list(hand.board),
        len(hand.events),
        hand.current_bet,
        None if hand.payoffs is None else list(hand.payoffs),
        hand.legal_actions() if hand.to_act is not None else None,
    )


def all_in_equivalent(hand: Hand, legal: LegalActions) -> tuple[ActionKind, int]:
    """What ALL_IN stands for (ActionKind docs): a raise to ``max_raise_to`` when raising is open (the whole stack
    in no-limit), else a call, else a check."""
    if legal.max_raise_to > 0:
        return ActionKind.RAISE, legal.max_raise_to
    return (ActionKind.CALL, 0) if legal.call_amount > 0 else (ActionKind.CHECK, 0)


def offered(hand: Hand, legal: LegalActions, draw_amount: Callable[[int, int], int]) -> list[tuple[ActionKind, int]]:
    """Every choice the seat is offered: check or call first (so shrinking tends to passive play), then fold,
    then raises to the minimum, the maximum and a drawn amount in between, then all-in (always allowed)."""
    moves: list[tuple[ActionKind, int]] = []
    if legal.can_check:
        moves.append((ActionKind.CHECK, 0))
    if legal.call_amount > 0:
        moves.append((ActionKind.CALL, 0))
    if legal.can_fold:
        moves.append((ActionKind.FOLD, 0))
    if legal.max_raise_to > 0:
        moves.append((ActionKind.RAISE, legal.min_raise_to))
        moves.append((ActionKind.RAISE, legal.max_raise_to))
        moves.append((ActionKind.RAISE, draw_amount(legal.min_raise_to, legal.max_raise_to)))
    moves.append((ActionKind.ALL_IN, 0))
    return moves


def action_bound(table: Table) -> int:
    """An upper bound on the actions of a hand.

    On a street every full bet or raise adds at least the smallest unit (R7.2, R7.6) and every seat goes all-in at
    most once, so a street has at most ``total // unit + n`` bets and raises, with at most ``n`` actions after each.
    """
    cfg = table.config
    n = len(table.stacks)
    unit = min(cfg.big_blind, cfg.small_bet, cfg.big_bet) if cfg.structure is Structure.FIXED_LIMIT else cfg.big_blind
    return 4 * n * (sum(table.stacks) // unit + n + 2)


def check_in_play(hand: Hand, total: int) -> None:
    """Invariants of a hand under way: conservation (R10.5), pots (R10.1), who acts and what they may do."""
    assert sum(hand.stacks) + hand.pot_total == total
    assert all(s >= 0 for s in hand.stacks)
    assert all(0 <= b <= c for b, c in zip(hand.bets, hand.committed, strict=True))
    assert sum(p.amount for p in hand.pots()) == hand.pot_total
    for pot in hand.pots():
        assert all(not hand.folded[s] for s in pot.eligible)
    seat = hand.to_act
    assert seat is not None
    assert not hand.folded[seat] and hand.stacks[seat] > 0
    legal = hand.legal_actions()
    owed = hand.current_bet - hand.bets[seat]
    assert legal.seat == seat
    assert legal.can_check == (owed == 0) and legal.can_fold == (owed > 0)
    assert legal.call_amount == min(max(owed, 0), hand.stacks[seat])
    if legal.max_raise_to:
        assert hand.current_bet < legal.min_raise_to <= legal.max_raise_to <= hand.bets[seat] + hand.stacks[seat]
    else:
        assert legal.min_raise_to == 0


def check_cards(table: Table, hand: Hand) -> None:
    """Hole cards and board come from the deck in dealing order (R4.1, R1.4), and no card is dealt twice (R1.1)."""
    n = len(table.stacks)
    deck = table.deck
    cards = [c for hole in hand.hole for c in hole] + list(hand.board)
    assert len(cards) == len(set(cards))
    for seat in range(n):
        k = (seat - table.button - 1) % n
        assert hand.hole[seat] == (deck[k], deck[n + k])
    b = 2 * n
    full_board = [deck[b + 1], deck[b + 2], deck[b + 3], deck[b + 5], deck[b + 7]]
    assert list(hand.board) == full_board[: len(hand.board)]
    assert len(hand.board) in (0, 3, 4, 5)
    if hand.street in (Street.PREFLOP, Street.FLOP, Street.TURN, Street.RIVER):
        assert len(hand.board) == (0, 3, 4, 5)[hand.street]


def check_settled(table: Table, hand: Hand, total: int) -> None:
    """A finished hand: stacks add up (R10.5), payoffs sum to zero, every chip put in was won or returned."""
    assert hand.is_over and hand.to_act is None and hand.payoffs is not None
    assert sum(hand.stacks) == total
    assert sum(hand.payoffs) == 0
    assert hand.payoffs == [s - s0 for s, s0 in zip(hand.stacks, table.stacks, strict=True)]
    assert all(s >= 0 for s in hand.stacks)
    wins = [e for e in hand.events if e.kind is EventKind.WIN_POT]
    assert sum(e.amount for e in wins) == hand.pot_total
    assert all(not hand.folded[e.seat] for e in wins)
    with pytest.raises(RuleError, match=r"R6\.3"):
        hand.legal_actions()


def check_views(hand: Hand) -> None:
    """A seat's view shows its own hole cards and nobody else's until they are shown at showdown (R4.2, R8.4)."""
    n = hand.num_seats
    shows = [e for e in hand.events if e.kind is EventKind.SHOW]
    if shows:
        assert hand.is_over and hand.street is Street.SHOWDOWN
    for e in shows:
        assert e.cards == hand.hole[e.seat]
    shown = {c for e in shows for c in e.cards}
    for seat in range(n):
        view = seat_view(hand, seat)
        assert view.hole_cards == hand.hole[seat]
        assert (view.legal is not None) == (seat == hand.to_act)
        visible = set(view.hole_cards) | set(view.board) | {c for e in view.history for c in e.cards}
        others = {c for t in range(n) if t != seat for c in hand.hole[t]}
        assert visible & others <= shown, f"seat {seat} sees {sorted(visible & others - shown)} of other seats"
        if not hand.is_over:
            assert not visible & others


def play(
    table: Table,
    data: st.DataObject,
    each_step: Callable[[Hand, LegalActions, list[tuple[ActionKind, int]]], None] | None = None,
    after_each: Callable[[Hand], None] | None = None,
) -> Hand:
    """Play one hand with legal actions drawn by hypothesis, checking the invariants after every action."""
    hand = table.hand()
    total = sum(table.stacks)

    def draw_amount(low: int, high: int) -> int:
        return data.draw(st.integers(low, high), label="amount")

    bound = action_bound(table)
    drawn = actions = 0
    folding = data.draw(st.booleans(), label="fold often")  # so that hands also end uncontested (R5.5)
    check_cards(table, hand)
    if after_each:
        after_each(hand)
    for _ in range(bound):
        if hand.is_over:
            break
        check_in_play(hand, total)
        legal = hand.legal_actions()
        moves = offered(hand, legal, draw_amount)
        if each_step:
            each_step(hand, legal, moves)
        if drawn < DRAWN_ACTIONS:
            choices = moves + [(ActionKind.FOLD, 0)] * 30 if folding and legal.can_fold else moves
            kind, amount = data.draw(st.sampled_from(choices), label="action")
            drawn += 1
        else:  # check or call from here on, so long hands fit in hypothesis's data budget and still finish
            kind, amount = moves[0]
        hand.apply(legal.seat, kind, amount)
        actions += 1
        check_cards(table, hand)
        if after_each:
            after_each(hand)
    assert hand.is_over, f"hand not over after {bound} actions"
    check_settled(table, hand, total)
    event(f"{table.config.structure.name}, {'showdown' if hand.hand_values else 'uncontested'}")
    event(f"actions: {'<10' if actions < 10 else '<40' if actions < 40 else '40+'}")
    return hand


# ----------------------------------------------------------------- properties


@settings(BASE, max_examples=scaled(150))
@given(table=tables(), data=st.data())
def test_random_play_conserves_chips_and_ends(table: Table, data: st.DataObject) -> None:
    """Chips are conserved after every action and at the end; hands end within a bounded number of actions."""
    play(table, data)


@settings(BASE, max_examples=scaled(50))
@given(table=tables(), data=st.data())
def test_every_offered_action_is_accepted(table: Table, data: st.DataObject) -> None:
    """Each choice in ``legal_actions()`` (fold, check, call, raise to min, max and between) and ALL_IN are
    accepted; ALL_IN does exactly what the top raise, else the call, else the check does."""

    def try_all(hand: Hand, legal: LegalActions, moves: list[tuple[ActionKind, int]]) -> None:
        for kind, amount in moves:
            trial = copy.deepcopy(hand)
            before = len(trial.events)
            trial.apply(legal.seat, kind, amount)  # must not raise
            assert len(trial.events) > before
            assert sum(trial.stacks) + (0 if trial.is_over else trial.pot_total) == sum(table.stacks)
            if kind is ActionKind.ALL_IN:
                same = copy.deepcopy(hand)
                same.apply(legal.seat, *all_in_equivalent(hand, legal))
                assert snapshot(same) == snapshot(trial)
                assert same.events == trial.events

    play(table, data, each_step=try_all)


def illegal_moves(hand: Hand, legal: LegalActions, data: st.DataObject) -> list[Move]:
    """Actions the rules refuse at this point (R6.1, R6.3, R7): each is tried and must change nothing."""
    seat = legal.seat
    n = hand.num_seats
    all_in = hand.bets[seat] + hand.stacks[seat]
    moves: list[Move] = []
    if legal.call_amount > 0:
        moves.append((seat, ActionKind.CHECK, 0))  # check facing a bet
    else:
        moves.append((seat, ActionKind.FOLD, 0))  # fold when checking is free
        moves.append((seat, ActionKind.CALL, 0))  # call with nothing to call
    if legal.max_raise_to > 0:
        low, high = legal.min_raise_to, legal.max_raise_to
        moves.append((seat, ActionKind.RAISE, low - 1))
        moves.append((seat, ActionKind.RAISE, high + 1))
        moves.append((seat, ActionKind.RAISE, data.draw(st.integers(high + 1, high + 10 * all_in + 10))))
        moves.append((seat, ActionKind.RAISE, data.draw(st.integers(-all_in, low - 1))))
        moves.append((seat, ActionKind.RAISE, low + 0.5))
        moves.append((seat, ActionKind.RAISE, float(low)))
        moves.append((seat, ActionKind.RAISE, str(low)))
    else:
        moves.append((seat, ActionKind.RAISE, data.draw(st.integers(0, all_in + 10))))  # raising is closed
        moves.append((seat, ActionKind.RAISE, all_in))
    moves.append((seat, ActionKind.RAISE, -1))
    moves.append((seat, ActionKind.RAISE, -data.draw(st.integers(1, all_in + 1))))
    moves.append((seat, ActionKind.RAISE, None))
    moves.append((seat, 99, 0))  # not an action kind
    other = data.draw(st.sampled_from([s for s in range(-1, n + 1) if s != seat]), label="other seat")
    for kind in ActionKind:
        moves.append((other, kind, legal.min_raise_to or hand.current_bet + hand.config.big_blind))
    return moves


@settings(BASE, max_examples=scaled(75))
@given(table=tables(), data=st.data())
def test_actions_not_offered_are_refused_and_change_nothing(table: Table, data: st.DataObject) -> None:
    """Every action not offered raises ``IllegalActionError`` naming a rule, and the state is left as it was."""

    def probe(hand: Hand, legal: LegalActions, _moves: list[tuple[ActionKind, int]]) -> None:
        for seat, kind, amount in illegal_moves(hand, legal, data):
            before = snapshot(hand)
            with pytest.raises(IllegalActionError) as info:
                hand.apply(seat, kind, amount)
            assert info.value.rule.startswith("R"), info.value
            assert snapshot(hand) == before, (seat, kind, amount)

    hand = play(table, data, each_step=probe)
    before = snapshot(hand)
    for seat in range(hand.num_seats):  # nothing is accepted once the hand is over
        for kind in ActionKind:
            with pytest.raises(IllegalActionError):
                hand.apply(seat, kind, hand.config.big_blind)
    assert snapshot(hand) == before


@settings(BASE, max_examples=scaled(60))
@given(table=tables(max_seats=10), data=st.data())
def test_seat_view_never_shows_another_seats_hole_cards(table: Table, data: st.DataObject) -> None:
    """Before the showdown no seat's view holds another seat's hole cards; after it only the shown ones."""
    play(table, data, after_each=check_views)
