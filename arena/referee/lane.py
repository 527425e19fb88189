"""Hand lanes, as the referee sees them: a hand's common decisions played by the seats' server itself, off the
referee's loop (the C++ bot server plays them on gRPC's threads with the compiled engine: arena.transport.lanes).

The table's fast path (arena.referee.fast) opens a lane when the seat to act, and the others it can, are served
by one such server (``Seat.lane_place``); the lane plays plain, legal, timely answers and asks the next seat, as
the fast path would, and ends at anything else: the hand over, a seat it does not ask, an answer it does not take,
a clock run out, a stream gone. The fast path then takes what it played (``LaneResult``: the decisions, each seat's
time bank, the request left open) and goes on from there exactly as if it had played them itself: the same
request ids, records and clocks (tests/transport/test_lanes.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from arena.engine import Hand


@dataclass(slots=True)
class LaneResult:
    """What a lane played: one ``(seat, request_id, kind, amount, elapsed_s, event_index, comment)`` per decision (kind:
    ActionKind's value; amount: for RAISE; comment: as the referee keeps it, arena.text.comment), each seat's time bank
    after them (``BotClock.bank_ms``), the request it wrote and left unanswered (``(seat, request_id, sent, allowance_s,
    action_ms_left, bank_ms_left)``, sent on ``time.monotonic``'s clock) or None, and the hand's next request id."""

    records: list[tuple[int, int, int, int, float, int, str]]
    open: tuple[int, int, float, float, int, int] | None
    banks: list[float]
    next_request_id: int


class LaneOwner(Protocol):
    """Who opened a lane (the table's fast path): told once what it played, when it ends."""

    def laned(self, result: LaneResult) -> None: ...


class LaneHost(Protocol):
    """A server that plays hands' decisions in lanes."""

    def open(self, owner: LaneOwner, places: Sequence[LanePlace | None], hand: Hand, table_id: str, hand_id: str,
             names: tuple[str, ...], timeouts: frozenset[int], first_request_id: int,
             clocks: Sequence[tuple[float, float]]) -> Callable[[bool], None] | None:
        """Open a lane for ``hand`` (left alone by the caller until its owner is told) and write its first request;
        ``places``: one per seat (None: a seat the lane does not ask), ``clocks`` each seat's per-action limit and
        bank in ms. Returns what ends it early (with True: its result is dropped, the table is stopped), or None
        when no lane could be opened (nothing was sent)."""
        ...


@dataclass(slots=True)
class LanePlace:
    """Where a seat can be asked by a lane: its ``host`` and what the host needs of it (``ticket``)."""

    host: LaneHost
    ticket: object
