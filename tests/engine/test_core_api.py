"""The compiled engine's C API (arena/engine/core_api.h: the capsule ``arena.engine._core._C_API``, with which the
bots' C++ server plays decisions on its own threads) against the same engine's Python API, which
test_core_differential.py checks against the Python reference.

The API is called through _core's test hooks (``_api_act``, ``_api_to_act``, ``_api_event_count``,
``_api_request_wire``), which take its function pointers from the published capsule and call them without the GIL.
Seeded random tables (2 to 22 seats, most cut to 9 or fewer; NL/PL/FL, antes of every mode, short stacks, odd chips,
entry blinds) are played out, 2,100 decisions in all; at every decision a spread of actions (every kind, kinds that
are none, other seats, raise amounts below, at, between and above the bounds, 0, negative, past 64 bits) is tried on
copies of the hand, one through each API: the C API must refuse exactly what ``Hand.act`` refuses, leave the state
as it was when it does, and otherwise leave the state ``Hand.act`` leaves. The request the C API encodes for the
seat to act must be the bytes of ``Hand.request_wire``. The SDK's evaluator capsule, which the showdown calls, is
checked against ``arena_sdk._eval.evaluate`` through ctypes.
"""

from __future__ import annotations

import copy
import ctypes
import random
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from arena.engine import Action, ActionKind, IllegalActionError, hand_class
from arena.engine import _core as core
from arena.engine.hand import Hand
from arena.transport import wire
from arena_sdk import _eval
from tests.engine.test_core_differential import random_table, state
from tests.engine.test_properties import Table, offered

COMPILED = hand_class("compiled")
HEADER = (Path(core.__file__).parent / "core_api.h").read_text()
ACTED = int(re.search(r"ARENA_ACTED = (\d+)", HEADER)[1])  # type: ignore[index]
REFUSED = int(re.search(r"ARENA_REFUSED = (\d+)", HEADER)[1])  # type: ignore[index]
KINDS = {kind.value for kind in ActionKind}
INT64 = (-(2**63), 2**63 - 1)
NAMES = ["", "a", "bot-7", "naïve café", "Ωmega", "日本語ボット", "🂡 ace high", "x" * 150, "tab\tand\nnewline"]
assert wire.RequestBuilder  # imported for its side effect: it sets the wire format the request encoders read


def some_table(rng: random.Random) -> Table:
    """A random table (test_core_differential's), most of them cut to 2 to 9 seats: more hands, more of them
    folded out."""
    table = random_table(rng)
    if rng.random() < 0.25:
        return table
    n = min(len(table.stacks), rng.randint(2, 9))
    entry = tuple(seat for seat in table.entry_blinds if seat < n)
    return Table(table.config, table.stacks[:n], table.button % n, table.deck, entry)


def int64(value: int) -> int:
    """``value`` as the C API takes an amount: a 64-bit int (past the bounds either way, as the Python API reads it)."""
    return max(INT64[0], min(INT64[1], value))


def candidates(hand: Hand, rng: random.Random) -> list[tuple[int, int, int]]:
    """(seat, kind as an int, amount) for the seat to act and others: every kind with amounts around the bounds."""
    legal = hand.legal_actions()
    seat = legal.seat
    n = hand.num_seats
    low, high = legal.min_raise_to, legal.max_raise_to
    top = hand.bets[seat] + hand.stacks[seat]
    bet = hand.current_bet
    raises = {0, 1, -1, low - 1, low, low + 1, high - 1, high, high + 1, top - 1, top, top + 1, bet, bet + 1,
              rng.randint(min(low, high), max(low, high)), rng.randint(0, 2 * top + 2), 2**53, 2**62, INT64[1],
              INT64[0], 10**30, -(10**30)}
    moves = {(seat, int(ActionKind.RAISE), amount) for amount in raises}
    for kind in (ActionKind.FOLD, ActionKind.CHECK, ActionKind.CALL, ActionKind.ALL_IN):
        moves |= {(seat, int(kind), 0), (seat, int(kind), rng.choice([-1, low, 10**30]))}  # the amount is ignored
    moves |= {(seat, kind, low) for kind in (0, 6, -1, 99)}  # no kind
    others = [other for other in range(n) if other != seat]
    for other in [*rng.sample(others, min(3, len(others))), -1, n, n + 7]:
        moves.add((other, rng.choice(list(ActionKind)).value, rng.choice([0, low, high])))
    return sorted(moves)


def python_act(hand: Hand, seat: int, kind: int, amount: int) -> bool:
    """``Hand.act`` with the kind as ActionKind (a kind that is none as the int): False when it is refused."""
    try:
        hand.act(seat, Action(ActionKind(kind) if kind in KINDS else kind, amount))  # type: ignore[arg-type]
    except IllegalActionError:
        return False
    return True


def check_counts(hand: Hand) -> None:
    assert core._api_to_act(hand) == (-1 if hand.to_act is None else hand.to_act)
    assert core._api_event_count(hand) == len(hand.events)


def check_request(hand: Hand, rng: random.Random) -> None:
    """The C API's request for the seat to act is Hand.request_wire's; none for another seat or a negative id."""
    seat = hand.to_act
    assert seat is not None
    events = len(hand.events)
    names = tuple(rng.choice(NAMES) for _ in range(hand.num_seats))
    timeouts = frozenset(rng.sample(range(-2, events + 4), rng.choice([0, 0, 1, 3, 6])))
    clocks = [rng.choice([0, 1, 1500, rng.randint(0, 10**6), 2**40, -5]) for _ in range(2)]
    head, tail = rng.randbytes(rng.choice([0, 5, 40])), rng.randbytes(rng.choice([0, 3, 200]))
    request_id = rng.choice([0, 1, 127, 128, rng.randint(0, 2**40), INT64[1]])
    args = (names, timeouts, *clocks, head, request_id, tail)
    expected = hand.request_wire(seat, *args)
    assert core._api_request_wire(hand, seat, *args) == expected
    assert len(expected) > 16  # so the hook's first, small buffer was too small and the size was asked for
    other = rng.choice([s for s in range(-1, hand.num_seats + 1) if s != seat])
    assert core._api_request_wire(hand, other, *args) == b""
    assert core._api_request_wire(hand, seat, names, timeouts, *clocks, head, -1, tail) == b""
    assert core._api_end_wire(hand, seat, b"", "t", "h") == b""  # the hand is not over


def try_everything(hand: Hand, rng: random.Random) -> list[tuple[int, Hand]]:
    """Every candidate on copies of ``hand``, through both APIs; the accepted ones' kinds and the hands they led
    to (through the C API)."""
    before = state(hand)
    reached: list[tuple[int, Hand]] = []
    for seat, kind, amount in candidates(hand, rng):
        by_python, by_api = copy.copy(hand), copy.copy(hand)
        acted = python_act(by_python, seat, kind, amount)
        rc = core._api_act(by_api, seat, kind, int64(amount))
        assert rc == (ACTED if acted else REFUSED), (seat, ActionKind(kind) if kind in KINDS else kind, amount)
        if acted:
            assert state(by_api) == state(by_python), (seat, kind, amount)
            check_counts(by_api)
            reached.append((kind, by_api))
        else:
            assert state(by_api) == before, (seat, kind, amount)
    assert state(hand) == before  # the copies were independent
    return reached


def check_over(hand: Hand, rng: random.Random) -> None:
    check_counts(hand)
    for kind in range(0, 7):
        assert core._api_act(hand, 0, kind, hand.config.big_blind) == REFUSED
    # every seat's HandEnd through the C API (no Python called: the hands' names from set_hand_names' table) is
    # Hand.end_wire's, with the actions the referee made for a seat flagged at random (and past the events)
    timeouts = frozenset(i for i in range(len(hand.events) + 2) if rng.random() < 0.2)
    flags = bytes(int(i in timeouts) for i in range(max(timeouts, default=-1) + 1))
    table_id, hand_id = rng.choice(NAMES), rng.choice(NAMES)
    ends = hand.end_wire(timeouts, table_id, hand_id)  # type: ignore[attr-defined]
    for seat in range(hand.num_seats):
        assert core._api_end_wire(hand, seat, flags, table_id, hand_id) == ends[seat]
    for seat in (-1, hand.num_seats):
        assert core._api_end_wire(hand, seat, flags, table_id, hand_id) == b""
    if hand.hand_values:  # the showdown evaluated by the C evaluator: arena_sdk._eval.evaluate's values
        for seat, value in hand.hand_values.items():
            assert value == _eval.evaluate([*hand.hole[seat], *hand.board])


@pytest.mark.parametrize("seed", range(3))
def test_the_c_api_acts_and_refuses_as_the_python_api_does(seed: int) -> None:
    rng = random.Random(seed)
    decisions = 0
    while decisions < 700:
        table = some_table(rng)
        hand = COMPILED(table.config, list(table.stacks), list(table.deck), button=table.button,
                        entry_blinds=table.entry_blinds)
        check_counts(hand)
        while not hand.is_over and decisions < 700:
            check_request(hand, rng)
            reached = try_everything(hand, rng)
            decisions += 1
            # on to a hand an accepted action led to: a kind drawn first (a call or check three times as often), so
            # that hands end both ways, in showdowns and folded out
            by_kind: dict[int, list[Hand]] = {}
            for kind, after in reached:
                by_kind.setdefault(kind, []).append(after)
            kinds = [kind for kind in by_kind for _ in range(3 if kind in (ActionKind.CALL, ActionKind.CHECK) else 1)]
            hand = rng.choice(by_kind[rng.choice(kinds)])
        while not hand.is_over:  # a hand cut short: called down through the C API
            legal = hand.legal_actions()
            kind = ActionKind.CHECK if legal.can_check else ActionKind.CALL
            assert core._api_act(hand, legal.seat, kind, 0) == ACTED
        check_over(hand, rng)


def test_the_state_of_anything_but_a_compiled_hand_is_refused() -> None:
    table = random_table(random.Random(7))
    reference = Hand(table.config, list(table.stacks), list(table.deck), button=table.button)
    for thing in (reference, object(), None, 3):
        with pytest.raises(TypeError, match=r"arena\.engine\._core\.Hand"):
            core._api_to_act(thing)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match=r"arena\.engine\._core\.Hand"):
            core._api_act(thing, 0, 1, 0)  # type: ignore[arg-type]


def test_without_the_wire_format_no_request_is_encoded() -> None:
    """Before arena.transport.wire sets the format (in a fresh interpreter), request_wire gives 0."""
    code = (
        "import sys\n"
        "from arena.engine import TableConfig, _core\n"
        "hand = _core.Hand(TableConfig(), [1000, 1000, 1000], list(range(52)))\n"
        "print('arena.transport.wire' in sys.modules, "
        "_core._api_request_wire(hand, hand.to_act, ('a', 'b', 'c'), (), 1, 2, b'', 1, b''))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.split() == ["False", "b''"]


def test_hands_played_through_the_c_api_on_threads_match_the_python_api() -> None:
    """Four threads play hands through the C API at once (the GIL released in every call): each hand ends as the
    same hand played with the same choices through the Python API."""
    tables = [random_table(random.Random(1000 + k)) for k in range(80)]

    def play(k: int, through_api: bool) -> Hand:
        table, rng = tables[k], random.Random(k)
        hand = COMPILED(table.config, list(table.stacks), list(table.deck), button=table.button,
                        entry_blinds=table.entry_blinds)
        while not hand.is_over:
            legal = hand.legal_actions()
            kind, amount = rng.choice(offered(hand, legal, rng.randint))
            if through_api:
                assert core._api_act(hand, legal.seat, kind.value, amount) == ACTED
            else:
                hand.apply(legal.seat, kind, amount)
        return hand

    played: dict[int, Hand] = {}
    failures: list[BaseException] = []

    def worker(first: int) -> None:
        try:
            for k in range(first, len(tables), 4):
                played[k] = play(k, True)
        except BaseException as exc:  # reported by the main thread
            failures.append(exc)

    threads = [threading.Thread(target=worker, args=(first,)) for first in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures
    for k in range(len(tables)):
        assert state(played[k]) == state(play(k, False)), k


class EvalApi(ctypes.Structure):
    """arena_sdk._eval's capsule: _eval.c's EvalApi."""

    _fields_ = [
        ("version", ctypes.c_int),
        ("evaluate", ctypes.CFUNCTYPE(ctypes.c_uint32, ctypes.POINTER(ctypes.c_int), ctypes.c_int)),
    ]


def capsule_pointer(capsule: Any, name: bytes) -> int:
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    pointer = get(capsule, name)
    assert pointer
    return int(pointer)


def test_the_evaluator_capsule_gives_evaluate_s_values() -> None:
    api = EvalApi.from_address(capsule_pointer(_eval._C_API, b"arena_sdk._eval._C_API"))
    assert api.version == 1
    rng = random.Random(5)
    cards = (ctypes.c_int * 7)()
    for _ in range(30_000):
        hand = rng.sample(range(52), rng.choice([5, 6, 7]))
        for i, card in enumerate(hand):
            cards[i] = card
        assert api.evaluate(cards, len(hand)) == _eval.evaluate(hand), hand


def test_the_engine_capsule_is_named_and_versioned_as_the_header_says() -> None:
    name = re.search(r'#define ARENA_CORE_API_CAPSULE "([^"]+)"', HEADER)[1]  # type: ignore[index]
    version = int(re.search(r"#define ARENA_CORE_API_VERSION (\d+)", HEADER)[1])  # type: ignore[index]
    assert ctypes.c_int.from_address(capsule_pointer(core._C_API, name.encode())).value == version
