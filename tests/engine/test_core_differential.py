"""The compiled engine (``arena.engine._core``) against its Python reference (``arena.engine.hand``): both are driven
with the same random legal and illegal actions and must agree on the whole state after every one, and on every
error (type, rule and message).

Tables come from the property tests' strategy (2 to 22 seats, NL/PL/FL, antes of every mode, short stacks, odd
chips, entry blinds). Two drivers: hypothesis (shrinks a difference to a short hand) and a seeded generator (for
volume). ``ARENA_DIFFERENTIAL_EXAMPLES`` scales both: the default keeps this file to a few seconds. For volume:
``ARENA_DIFFERENTIAL_EXAMPLES=12000 pytest tests/engine/test_core_differential.py -k seeded -n 2 --timeout=0`` plays
48,000 hands, about 1.1 million legal and illegal actions, every state compared (13 minutes on 2 cores, 2026-12-04).
"""

from __future__ import annotations

import os
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.engine import ActionKind, AnteMode, RuleError, Street, Structure, TableConfig, hand_class
from arena.engine.hand import Hand
from tests.engine.test_properties import BASE, DRAWN_ACTIONS, Table, illegal_moves, offered, tables

SCALE = int(os.environ.get("ARENA_DIFFERENTIAL_EXAMPLES", "0")) or None
PYTHON = hand_class("python")
COMPILED = hand_class("compiled")
Outcome = tuple[str, ...] | None  # an error as (type, message, rule, seat, action), or None


def state(hand: Hand) -> tuple[object, ...]:
    """Everything a caller can read of a hand, with types: the two engines must agree on all of it."""
    try:
        legal: object = hand.legal_actions()
    except RuleError as exc:
        legal = ("refused", exc.rule, str(exc))
    seen = (
        hand.num_seats, hand.button, hand.small_blind_seat, hand.big_blind_seat, hand.starting_stacks,
        hand.stacks, hand.bets, hand.committed, hand.dead, hand.folded, hand.board, hand.hole, hand.events,
        hand.street, hand.to_act, hand.payoffs, list(hand.shown.items()), list(hand.hand_values.items()),
        hand.is_over, hand.pot_total, hand.current_bet, hand.pots(), legal,
        [hand.is_active(seat) for seat in range(hand.num_seats)], hand.config,
    )
    return (*seen, repr(seen), repr(hand))  # repr tells an EventKind from an int and a tuple from a list


def outcome(call: Any, *args: Any) -> Outcome:
    """Run ``call``; the error it raised as comparable text, or None."""
    try:
        call(*args)
    except RuleError as exc:
        return (type(exc).__name__, str(exc), exc.rule, repr(getattr(exc, "seat", None)), getattr(exc, "action", ""))
    except (TypeError, ValueError, IndexError) as exc:  # odd input that no rule names: only the kind must agree
        return (type(exc).__name__,)
    return None


def both(reference: Hand, compiled: Hand, seat: Any, kind: Any, amount: Any) -> bool:
    """Apply one action to both engines; they must agree on whether it is refused, why, and the state after."""
    expected = outcome(reference.apply, seat, kind, amount)
    got = outcome(compiled.apply, seat, kind, amount)
    assert got == expected, (seat, kind, amount)
    assert state(compiled) == state(reference), (seat, kind, amount)
    return expected is None


def twins(table: Table) -> tuple[Hand, Hand]:
    """The table's hand in both engines, checked equal."""
    args = (table.config, table.stacks, table.deck)
    reference = PYTHON(*args, button=table.button, entry_blinds=table.entry_blinds)
    compiled = COMPILED(*args, button=table.button, entry_blinds=table.entry_blinds)
    assert state(compiled) == state(reference)
    return reference, compiled


@settings(BASE, max_examples=SCALE or 80)
@given(table=tables(), data=st.data())
def test_both_engines_agree_on_every_state_and_error(table: Table, data: st.DataObject) -> None:
    """Random legal actions, each step preceded now and then by an illegal one: same state and same errors."""
    reference, compiled = twins(table)
    drawn = 0
    folding = data.draw(st.booleans(), label="fold often")
    while not reference.is_over:
        legal = reference.legal_actions()
        if data.draw(st.integers(0, 3), label="probe") == 0:
            seat, kind, amount = data.draw(st.sampled_from(illegal_moves(reference, legal, data)), label="illegal")
            assert not both(reference, compiled, seat, kind, amount)
        moves = offered(reference, legal, lambda low, high: data.draw(st.integers(low, high), label="amount"))
        if drawn < DRAWN_ACTIONS:
            choices = moves + [(ActionKind.FOLD, 0)] * 30 if folding and legal.can_fold else moves
            kind, amount = data.draw(st.sampled_from(choices), label="action")
            drawn += 1
        else:
            kind, amount = moves[0]
        assert both(reference, compiled, legal.seat, kind, amount)
    for seat in (0, reference.num_seats - 1):  # nothing is taken once the hand is over
        assert not both(reference, compiled, seat, ActionKind.RAISE, reference.config.big_blind)
    assert state(reference.copy()) == state(compiled.copy())


# Not a seat's number, a stack or a card. (A bool as a button or an entry seat is left out: Python takes True for
# seat 1 and keeps the bool in the events, the compiled engine keeps the 1. Stacks above 2**53 are left out too: the
# compiled engine refuses them, ConfigError R11.1.)
odd = st.sampled_from([0.5, 1.0, None, "7", 10**20, -(10**20)])


@settings(BASE, max_examples=SCALE or 150)
@given(
    button=st.one_of(st.integers(-1, 24), odd),
    stacks=st.lists(st.one_of(st.integers(-2, 10**6), st.sampled_from([0.5, 1.0, True, None, "7"])), max_size=24),
    deck=st.one_of(st.permutations(range(52)), st.lists(st.one_of(st.integers(-1, 52), odd, st.just(True)),
                                                         max_size=60)),
    entry=st.lists(st.one_of(st.integers(-1, 24), odd), max_size=4),
)
def test_both_engines_refuse_the_same_setups(button: Any, stacks: list[Any], deck: list[Any], entry: list[Any]) -> None:
    """Bad seat counts, buttons, stacks, decks and entry blinds: the same error (or the same hand) from both."""
    config = TableConfig(50, 100)
    made: dict[str, Hand] = {}

    def make(engine: type[Hand], name: str) -> None:
        made[name] = engine(config, stacks, deck, button, entry)

    expected = outcome(make, PYTHON, "python")
    assert outcome(make, COMPILED, "compiled") == expected
    if expected is None:
        assert state(made["compiled"]) == state(made["python"])


def random_table(rng: random.Random) -> Table:
    """A random table as ``tables()`` draws them, from a seeded generator (for the volume driver)."""
    n = rng.randint(2, 22)
    structure = rng.choice(list(Structure))
    big = rng.choice([2, 10, 100, rng.randint(1, 500)])
    small = rng.choice([big // 2, rng.randint(0, big)])
    mode = rng.choice(list(AnteMode))
    ante = 0 if mode is AnteMode.NONE else rng.randint(1, 2 * big)
    extra: dict[str, Any] = {}
    if structure is Structure.FIXED_LIMIT:
        extra = {
            "small_bet": rng.choice([0, rng.randint(1, 2 * big)]),
            "big_bet": rng.choice([0, rng.randint(1, 4 * big)]),
            "raise_cap": rng.randint(1, 6),
            "uncapped_heads_up": rng.random() < 0.5,
        }
    config = TableConfig(small, big, structure, ante, mode, reveal_all=rng.random() < 0.5,
                         chip=rng.choice([1, 1, 1, 5]), **extra)
    short = big + ante + 1
    ranges = [(1, short), (1, 50 * big), (50 * big, 400 * big)]
    stacks = tuple(rng.randint(*rng.choice(ranges)) for _ in range(n))
    deck = list(range(52))
    rng.shuffle(deck)
    entry = tuple(rng.sample(range(n), rng.randint(0, min(3, n)))) if rng.random() < 0.5 else ()
    return Table(config, stacks, rng.randrange(n), tuple(deck), entry)


def random_moves(hand: Hand, rng: random.Random) -> list[tuple[Any, Any, Any]]:
    """Legal and illegal actions for the seat to act (and others), as the hypothesis driver tries them."""
    legal = hand.legal_actions()
    seat = legal.seat
    moves: list[tuple[Any, Any, Any]] = [(seat, k, a) for k, a in offered(hand, legal, rng.randint)]
    top = hand.bets[seat] + hand.stacks[seat]
    moves += [(seat, ActionKind.CHECK, 0), (seat, ActionKind.FOLD, 0), (seat, ActionKind.CALL, 0),
              (seat, ActionKind.RAISE, rng.randint(-5, top + 10)), (seat, ActionKind.RAISE, legal.min_raise_to - 1),
              (seat, ActionKind.RAISE, legal.max_raise_to + 1), (seat, ActionKind.RAISE, 1.5),
              (seat, 99, 0), (rng.randint(-1, hand.num_seats), rng.choice(list(ActionKind)), legal.min_raise_to)]
    return moves


@pytest.mark.parametrize("seed", range(4))
def test_both_engines_agree_over_many_seeded_hands(seed: int) -> None:
    """Volume: seeded random tables and actions (half of the attempts illegal), the states compared each time."""
    rng = random.Random(seed)
    attempts = 0
    for _ in range(SCALE or 30):
        reference, compiled = twins(random_table(rng))
        for _ in range(2000):
            if reference.is_over:
                break
            moves = random_moves(reference, rng)
            legal_count = len(moves) - 9
            pick = moves[rng.randrange(legal_count)] if rng.random() < 0.6 else rng.choice(moves)
            both(reference, compiled, *pick)
            attempts += 1
            if rng.random() < 0.02:
                reference, compiled = reference.copy(), compiled.copy()
        while not reference.is_over:  # long hands: check or call to the end
            legal = reference.legal_actions()
            assert both(reference, compiled, legal.seat, ActionKind.CHECK if legal.can_check else ActionKind.CALL, 0)
            attempts += 1
        assert compiled.street is Street.SHOWDOWN
    if SCALE:
        print(f"seed {seed}: {SCALE} hands, {attempts:,} actions tried (legal and illegal), every state equal")
