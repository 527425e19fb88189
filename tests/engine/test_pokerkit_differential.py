"""PokerKit (a dev dependency, never the engine) as an oracle for thousands of random hands.

Each hand is played with random legal actions chosen from *our* engine's ``legal_actions()``; the same action is
applied to a PokerKit state dealt the same cards (hole cards, burns and board dealt explicitly from the engine's
deck; posting, bet collection, showdown and chip pushing automated). After every action the seat to act, the
amount to call, the raise bounds, the stacks and the bets must agree, and every action the engine offers must be
accepted by PokerKit. At the end the stacks must agree exactly, except for odd chips of split pots (R10.4).

Seats: PokerKit's player 0 is the first seat left of the button (heads-up: the big blind, because PokerKit reads
the blinds heads-up in reverse), so the engine's button is seat ``n - 1`` and player ``i`` is engine seat ``i``.

PokerKit and RULES.md differ in a few places; each difference is named below (``KNOWN``), has a minimal
reproduction at the end of this file, and is tolerated only where its exact condition holds:

* ``A`` PokerKit refuses a raise that no opponent could answer (every other player still in has at most the
  current bet in stack + bet); the engine closes raising only when nobody else has chips at all (R5.6). The raise
  is returned uncalled (R10.2), so no chips change hands.
* ``B`` Re-opening by short all-ins (R7.4): PokerKit counts an all-in raise of less than a big blind as a full raise
  when it is at least the street's largest increment so far, and it forgets that several short all-ins reopened the
  betting once another short all-in follows. The engine follows R7.4 (a full raise is at least the largest
  increment *and* one big blind; short all-ins that add up to one reopen).
* ``C`` Fixed-limit cap (R7.6): PokerKit counts an all-in for less than a full unit as one of the street's raises;
  the engine counts only full bets and raises.

Two things are bridged rather than compared: PokerKit asks the big blind for a check that has no alternative when
everybody else is all-in (the engine deals on, R5.6), and PokerKit picks the heads-up first actor wrongly when the
small blind equals the big blind (so heads-up tables here have a small blind below the big blind). Pot-limit uses
PokerKit's generic ``State`` with ``BettingStructure.POT_LIMIT`` and the hold'em streets (PokerKit ships pot-limit
Omaha but no pot-limit hold'em class); fixed-limit uses the same streets with the pre-flop cap one below the
others, as R7.6 counts the big blind as the first bet (PokerKit's ``FixedLimitTexasHoldem`` allows four raises on
every street).
"""

from __future__ import annotations

import random
import warnings
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, NoReturn

import pytest
from pokerkit import (
    Automation,
    BettingStructure,
    Card,
    Deck,
    Mode,
    NoLimitTexasHoldem,
    Opening,
    StandardHighHand,
    State,
)
from pokerkit import Street as PkStreet

from arena.cards import format_card
from arena.engine import ActionKind, AnteMode, Event, EventKind, Hand, LegalActions, Structure, TableConfig
from tests.soak import scaled

HANDS_PER_STRUCTURE = scaled(400)  # ``make soak``: 4,000
SEEDS = {Structure.NO_LIMIT: 20_240_601, Structure.FIXED_LIMIT: 20_240_602, Structure.POT_LIMIT: 20_240_603}

PK_CARDS: tuple[Card, ...] = tuple(Card.parse("".join(format_card(c) for c in range(52))))
AUTOMATIONS = (
    Automation.ANTE_POSTING,
    Automation.BET_COLLECTION,
    Automation.BLIND_OR_STRADDLE_POSTING,
    Automation.HOLE_CARDS_SHOWING_OR_MUCKING,
    Automation.HAND_KILLING,
    Automation.CHIPS_PUSHING,
    Automation.CHIPS_PULLING,
)
KNOWN = {
    "B": "re-opening by short all-ins differs (engine follows R7.4)",
    "C": "PokerKit counts a short all-in toward the fixed-limit cap (engine counts full bets only, R7.6)",
}
_ACTIONS = frozenset({EventKind.FOLD, EventKind.CHECK, EventKind.CALL, EventKind.BET, EventKind.RAISE})
_BETS = frozenset({EventKind.BET, EventKind.RAISE})

Bounds = tuple[int, int] | None


# ----------------------------------------------------------------- PokerKit side


def pokerkit_state(config: TableConfig, stacks: list[int]) -> State:
    """A PokerKit state for ``config``: antes are dead money (``ante_trimming_status=False``) as in R3.2."""
    n = len(stacks)
    if config.ante_mode is AnteMode.EACH:
        antes: Any = config.ante
    elif config.ante_mode is AnteMode.BIG_BLIND:
        antes = {1: config.ante}  # player 1 is the big blind (heads-up PokerKit reverses, giving player 0)
    else:
        antes = 0
    blinds = (config.small_blind, config.big_blind)
    if config.structure is Structure.NO_LIMIT:
        return NoLimitTexasHoldem.create_state(
            AUTOMATIONS, False, antes, blinds, config.big_blind, list(stacks), n, mode=Mode.TOURNAMENT
        )
    fixed = config.structure is Structure.FIXED_LIMIT
    small = config.small_bet if fixed else config.big_blind
    big = config.big_bet if fixed else config.big_blind
    cap = config.raise_cap if fixed else None
    pre_cap = config.raise_cap - 1 if fixed else None  # R7.6: pre-flop the big blind counts as the bet
    streets = (
        PkStreet(False, (False, False), 0, False, Opening.POSITION, small, pre_cap),
        PkStreet(True, (), 3, False, Opening.POSITION, small, cap),
        PkStreet(True, (), 1, False, Opening.POSITION, big, cap),
        PkStreet(True, (), 1, False, Opening.POSITION, big, cap),
    )
    structure = BettingStructure.FIXED_LIMIT if fixed else BettingStructure.POT_LIMIT
    return State(
        AUTOMATIONS, Deck.STANDARD, (StandardHighHand,), streets, structure, False, antes, blinds, 0,
        list(stacks), n, mode=Mode.TOURNAMENT,
    )


def deal_pokerkit(state: State, hand: Hand, deck: list[int]) -> None:
    """Deal whatever PokerKit waits for, from the engine's deck: hole cards one at a time, burns, board."""
    b = 2 * hand.num_seats
    board = [deck[b + 1], deck[b + 2], deck[b + 3], deck[b + 5], deck[b + 7]]
    burns = [deck[b], deck[b + 4], deck[b + 6]]
    while True:
        if state.can_deal_hole():
            player = state.hole_dealee_index
            state.deal_hole((PK_CARDS[hand.hole[player][len(state.hole_cards[player])]],), player)
        elif state.can_burn_card():
            state.burn_card(PK_CARDS[burns[len(state.burn_cards)]])
        elif state.can_deal_board():
            dealt = len(state.board_cards)
            state.deal_board([PK_CARDS[c] for c in board[dealt : 3 if dealt == 0 else dealt + 1]])
        else:
            return


def pokerkit_bounds(state: State) -> Bounds:
    low = state.min_completion_betting_or_raising_to_amount
    high = state.max_completion_betting_or_raising_to_amount
    return None if low is None else (low, high)


def pokerkit_accepts(state: State, kind: ActionKind, amount: int, legal: LegalActions) -> bool:
    if kind is ActionKind.FOLD:
        return bool(state.can_fold())
    if kind is ActionKind.CHECK:
        return bool(state.can_check_or_call()) and state.checking_or_calling_amount == 0
    if kind is ActionKind.CALL:
        return bool(state.can_check_or_call()) and state.checking_or_calling_amount == legal.call_amount
    return bool(state.can_complete_bet_or_raise_to(amount))


def apply_pokerkit(state: State, kind: ActionKind, amount: int) -> None:
    if kind is ActionKind.FOLD:
        state.fold()
    elif kind in (ActionKind.CHECK, ActionKind.CALL):
        state.check_or_call()
    else:
        state.complete_bet_or_raise_to(amount)


# ----------------------------------------------------------------- known differences


def street_actions(hand: Hand) -> list[Event]:
    street = int(hand.street)
    return [e for e in hand.events if e.street == street and e.kind in _ACTIONS]


def nobody_can_answer_a_raise(hand: Hand, seat: int) -> bool:
    """PokerKit's condition: no other player still in has more than the current bet in stack + bet."""
    return not any(
        other != seat and not hand.folded[other] and hand.stacks[other] + hand.bets[other] > hand.current_bet
        for other in range(hand.num_seats)
    )


def only_all_ins_since_acted(hand: Hand, seat: int) -> bool:
    """The seat acted on this street and every bet or raise since was an all-in (the R7.4 territory)."""
    actions = street_actions(hand)
    mine = [i for i, e in enumerate(actions) if e.seat == seat]
    return bool(mine) and all(e.all_in for e in actions[mine[-1] + 1 :] if e.kind in _BETS)


@dataclass(frozen=True)
class StreetModel:
    """This street replayed by RULES.md alone: full bets and raises (R7.2, R7.6), all of them, and whether the
    betting is reopened for a seat that already acted (R7.4)."""

    full_bets: int
    all_bets: int
    reopened: bool


def street_model(hand: Hand, seat: int) -> StreetModel:
    cfg = hand.config
    preflop = hand.street == 0
    if cfg.structure is Structure.FIXED_LIMIT:
        largest = cfg.small_bet if hand.street <= 1 else cfg.big_bet  # R7.6 unit
    else:
        largest = cfg.big_blind  # R7.1, R7.2: at least one big blind
    posts = [e.amount for e in hand.events if e.kind in (EventKind.POST_SMALL_BLIND, EventKind.POST_BIG_BLIND)]
    current = max(posts, default=0) if preflop else 0
    full = all_bets = 1 if preflop else 0  # R7.6: pre-flop the big blind counts as the bet
    acted: int | None = None
    for e in street_actions(hand):
        if e.kind in _BETS:
            all_bets += 1
            if e.amount - current >= largest:  # a full bet or raise; a short all-in is not (R7.4)
                largest = e.amount - current
                full += 1
            current = e.amount
        if e.seat == seat:
            acted = current
    return StreetModel(full, all_bets, acted is None or current - acted >= largest)


def classify(hand: Hand, seat: int, ours: Bounds, theirs: Bounds) -> str | None:
    """Which known difference explains raise bounds that differ, or None when none does (then it is a bug)."""
    model = street_model(hand, seat)
    if ours is not None and theirs is None:
        cap = hand.config.raise_cap
        if hand.config.structure is Structure.FIXED_LIMIT and model.full_bets < cap <= model.all_bets:
            return "C"
    if (
        (ours is None) != (theirs is None)
        and only_all_ins_since_acted(hand, seat)
        and (ours is not None) == model.reopened  # the engine does what R7.4 says, PokerKit does not
    ):
        return "B"
    return None


# ----------------------------------------------------------------- random hands


@dataclass
class Spec:
    """One random hand: table, stacks and deck (button on the last seat)."""

    config: TableConfig
    stacks: list[int]
    deck: list[int]
    moves: list[tuple[int, str, int]] = field(default_factory=list)

    def __str__(self) -> str:
        cfg = self.config
        return (
            f"TableConfig({cfg.small_blind}, {cfg.big_blind}, {cfg.structure}, ante={cfg.ante}, "
            f"ante_mode={cfg.ante_mode}, raise_cap={cfg.raise_cap}), stacks={self.stacks}, "
            f"button={len(self.stacks) - 1},\n  deck={self.deck},\n  moves={self.moves}"
        )


def random_spec(rng: random.Random, structure: Structure) -> Spec:
    n = rng.randint(2, 9)
    big = rng.choice([2, 10, 100, 1000])
    small = rng.choice([big // 2, big // 2, 1] + ([big] if n > 2 else []))  # heads-up: PokerKit needs small < big
    mode = rng.choice([AnteMode.NONE, AnteMode.NONE, AnteMode.EACH, AnteMode.BIG_BLIND])
    ante = 0 if mode is AnteMode.NONE else rng.choice([1, max(1, big // 10), max(1, big // 2), big])
    raise_cap = rng.choice([2, 3, 4, 4, 4, 5]) if structure is Structure.FIXED_LIMIT else 4
    config = TableConfig(small, big, structure, ante, mode, raise_cap=raise_cap)
    stacks = []
    for _ in range(n):
        r = rng.random()
        if r < 0.15:
            stacks.append(rng.randint(1, big + ante + 1))  # may not cover the blinds and antes (R3.3)
        elif r < 0.6:
            stacks.append(rng.randint(2 * big, 40 * big))
        else:
            stacks.append(rng.randint(40 * big, 300 * big))
    deck = list(range(52))
    rng.shuffle(deck)
    return Spec(config, stacks, deck)


def choose(rng: random.Random, options: list[tuple[ActionKind, int]]) -> tuple[ActionKind, int]:
    weights = [
        {ActionKind.FOLD: 2.0, ActionKind.CHECK: 3.0, ActionKind.CALL: 3.0}.get(kind, 0.7) for kind, _ in options
    ]
    return rng.choices(options, weights)[0]


def options_of(rng: random.Random, legal: LegalActions) -> list[tuple[ActionKind, int]]:
    options: list[tuple[ActionKind, int]] = []
    if legal.can_fold:
        options.append((ActionKind.FOLD, 0))
    if legal.can_check:
        options.append((ActionKind.CHECK, 0))
    if legal.call_amount > 0:
        options.append((ActionKind.CALL, 0))
    if legal.max_raise_to > 0:
        low, high = legal.min_raise_to, legal.max_raise_to
        options += [(ActionKind.RAISE, low), (ActionKind.RAISE, high), (ActionKind.RAISE, rng.randint(low, high))]
    return list(dict.fromkeys(options))


def split_pots(hand: Hand) -> list[list[tuple[int, int]]]:
    """(seat, share) of the winners of each pot that was split at showdown."""
    shares: dict[int, list[tuple[int, int]]] = {}
    for e in hand.events:
        if e.kind is EventKind.WIN_POT:
            shares.setdefault(e.pot, []).append((e.seat, e.amount))
    return [w for w in shares.values() if len(w) > 1]


def odd_chips_follow_r10_4(hand: Hand) -> bool:
    """Each split pot is shared equally, odd chips one by one from the first winner left of the button (R10.4)."""
    n = hand.num_seats
    for winners in split_pots(hand):
        ordered = sorted(winners, key=lambda w: (w[0] - hand.button - 1) % n)
        amounts = [a for _, a in ordered]
        if max(amounts) - min(amounts) > 1 or amounts != sorted(amounts, reverse=True):
            return False
    return True


class Disagreement(AssertionError):
    pass


def play_both(spec: Spec, rng: random.Random, seen: Counter[str]) -> None:
    """Play one hand in the engine and PokerKit side by side; raise ``Disagreement`` on an unexplained difference."""
    n = len(spec.stacks)
    hand = Hand(spec.config, spec.stacks, spec.deck, button=n - 1)
    state = pokerkit_state(spec.config, spec.stacks)

    def fail(what: str) -> NoReturn:
        raise Disagreement(f"{what}\n  {spec}\n  engine: {hand!r}\n  pokerkit: stacks={state.stacks} "
                           f"bets={state.bets} actor={state.actor_index}")

    deal_pokerkit(state, hand, spec.deck)
    while True:
        actor = state.actor_index
        if actor is not None and actor != hand.to_act:
            # PokerKit asks for a check that has no alternative where the engine deals on (R5.6)
            if state.checking_or_calling_amount != 0 or pokerkit_bounds(state) is not None or hand.to_act is not None:
                fail(f"PokerKit's player {actor} is to act, the engine's seat {hand.to_act}")
            state.check_or_call()
            seen["pokerkit-only check (R5.6)"] += 1
            deal_pokerkit(state, hand, spec.deck)
            continue
        if hand.is_over:
            break
        seat = hand.to_act
        if actor is None:
            fail(f"the engine's seat {seat} is to act, PokerKit has nobody to act")
        if list(state.stacks) != hand.stacks or list(state.bets) != hand.bets:
            fail("stacks or bets differ during play")
        legal = hand.legal_actions()
        if state.checking_or_calling_amount != legal.call_amount:
            fail(f"call amounts differ: engine {legal.call_amount}, PokerKit {state.checking_or_calling_amount}")
        ours: Bounds = (legal.min_raise_to, legal.max_raise_to) if legal.max_raise_to else None
        theirs = pokerkit_bounds(state)
        known = None
        if ours != theirs:
            known = classify(hand, seat, ours, theirs)
            if known is None:
                fail(f"raise bounds differ for seat {seat}: engine {ours}, PokerKit {theirs}")
            seen[known] += 1
        options = options_of(rng, legal)
        while True:
            kind, amount = choose(rng, options)
            if pokerkit_accepts(state, kind, amount, legal):
                break
            if known is None or kind is not ActionKind.RAISE:
                fail(f"PokerKit refuses {kind.name} {amount} that the engine offers to seat {seat} ({legal})")
            seen[f"{known}: refused"] += 1
            options.remove((kind, amount))  # a known difference: play on with another of the choices
        spec.moves.append((seat, kind.name, amount))
        apply_pokerkit(state, kind, amount)
        hand.apply(seat, kind, amount)
        deal_pokerkit(state, hand, spec.deck)
    if state.status:
        fail("the engine's hand is over but PokerKit's is not")
    if not odd_chips_follow_r10_4(hand):
        fail(f"split pots are not shared as R10.4 says: {split_pots(hand)}")
    ours_final, theirs_final = hand.stacks, list(state.stacks)
    if ours_final != theirs_final:
        # R10.4: the engine splits each pot chip by chip from the button's left; PokerKit kills the losing hands,
        # merges the pots the same winners share and gives each whole remainder to the first winner.
        splits = split_pots(hand)
        sharers = {seat for w in splits for seat, _ in w}
        slack = sum(len(w) - 1 for w in splits)
        diffs = [a - b for a, b in zip(ours_final, theirs_final, strict=True)]
        if (
            not splits
            or sum(ours_final) != sum(theirs_final)
            or any(d and s not in sharers for s, d in enumerate(diffs))
            or any(abs(d) > slack for d in diffs)
        ):
            fail(f"final stacks differ: engine {ours_final}, PokerKit {theirs_final}")
        seen["odd chips of a split pot"] += 1
    seen["hands"] += 1
    seen["showdowns"] += bool(hand.hand_values)
    seen["split pots"] += bool(split_pots(hand))


@pytest.mark.parametrize("structure", list(SEEDS), ids=lambda s: s.name.lower())
def test_engine_agrees_with_pokerkit_on_random_hands(structure: Structure) -> None:
    rng = random.Random(SEEDS[structure])
    seen: Counter[str] = Counter()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a PokerKit warning (e.g. a card dealt twice) is a rigging mistake
        for _ in range(HANDS_PER_STRUCTURE):
            play_both(random_spec(rng, structure), rng, seen)
    assert seen["hands"] == HANDS_PER_STRUCTURE
    assert seen["showdowns"] > HANDS_PER_STRUCTURE // 4 and seen["split pots"] > 0
    print(f"\n{structure.name}: " + ", ".join(f"{k} {v}" for k, v in sorted(seen.items())))


# ----------------------------------------------------------------- the known differences, one hand each


def _start(config: TableConfig, stacks: list[int]) -> tuple[Hand, State]:
    deck = list(range(52))
    hand = Hand(config, stacks, deck, button=len(stacks) - 1)
    state = pokerkit_state(config, stacks)
    deal_pokerkit(state, hand, deck)
    return hand, state


def _both(hand: Hand, state: State, *moves: tuple[int, ActionKind, int]) -> None:
    deck = list(range(52))
    for seat, kind, amount in moves:
        assert state.actor_index == seat == hand.to_act
        apply_pokerkit(state, kind, amount)
        hand.apply(seat, kind, amount)
        deal_pokerkit(state, hand, deck)


def test_agreement_no_raise_that_nobody_can_answer() -> None:
    """Seat 2 is all-in for 1000; the blinds have chips but cannot cover 1000. Both engines let seat 3 only call
    or fold: a raise could never be answered (R5.6), every chip of it would come back uncalled (R10.2)."""
    hand, state = _start(TableConfig(50, 100), [400, 600, 1000, 5000])
    _both(hand, state, (2, ActionKind.RAISE, 1000))
    legal = hand.legal_actions()
    assert (legal.seat, legal.call_amount, legal.max_raise_to) == (3, 1000, 0)
    assert pokerkit_bounds(state) is None
    assert nobody_can_answer_a_raise(hand, 3)


def test_known_difference_b_short_all_in_below_a_big_blind() -> None:
    """Flop: seat 0 checks, seat 1 bets all-in 30, seat 2 raises all-in to 80, seat 3 calls. Seat 0 acted and faces
    80 in short all-ins, less than a big blind: the engine says call or fold (R7.4); PokerKit reopens."""
    hand, state = _start(TableConfig(50, 100), [5000, 130, 180, 5000])
    _both(
        hand, state,
        (2, ActionKind.CALL, 0), (3, ActionKind.CALL, 0), (0, ActionKind.CALL, 0), (1, ActionKind.CHECK, 0),
        (0, ActionKind.CHECK, 0), (1, ActionKind.RAISE, 30), (2, ActionKind.RAISE, 80), (3, ActionKind.CALL, 0),
    )
    legal = hand.legal_actions()
    assert (legal.seat, legal.call_amount, legal.max_raise_to) == (0, 80, 0)
    assert pokerkit_bounds(state) == (180, 4900)
    assert classify(hand, 0, None, (180, 4900)) == "B"


def test_known_difference_b_short_all_ins_that_add_up_reopen() -> None:
    """Seat 2 raises to 300 (+200); all-ins to 400 and 500 add up to a full raise, one to 550 follows. Seat 2 may
    raise again (R7.4: short all-ins that together reach a full raise reopen); PokerKit forgets the reopening."""
    hand, state = _start(TableConfig(50, 100), [5000, 5000, 5000, 400, 500, 550])
    _both(
        hand, state,
        (2, ActionKind.RAISE, 300), (3, ActionKind.RAISE, 400), (4, ActionKind.RAISE, 500),
        (5, ActionKind.RAISE, 550), (0, ActionKind.CALL, 0), (1, ActionKind.CALL, 0),
    )
    legal = hand.legal_actions()
    assert (legal.seat, legal.min_raise_to, legal.max_raise_to) == (2, 750, 5000)
    assert pokerkit_bounds(state) is None
    assert classify(hand, 2, (750, 5000), None) == "B"


def test_known_difference_c_short_all_in_and_the_fixed_limit_cap() -> None:
    """Fixed-limit 50/100, cap 4: the big blind, raises to 200 and 300, then an all-in to 350 (short). The engine
    still allows the fourth bet (450); PokerKit counted the short all-in as the third raise and closes the street."""
    hand, state = _start(TableConfig(50, 100, Structure.FIXED_LIMIT), [350, 5000, 5000, 5000])
    _both(hand, state, (2, ActionKind.RAISE, 200), (3, ActionKind.RAISE, 300), (0, ActionKind.RAISE, 350))
    legal = hand.legal_actions()
    assert (legal.seat, legal.min_raise_to, legal.max_raise_to) == (1, 450, 450)
    assert pokerkit_bounds(state) is None
    assert classify(hand, 1, (450, 450), None) == "C"
    assert set(KNOWN) == {"B", "C"}
