"""Hand lanes, as the referee sees them: a hand's common decisions played by the seats' server itself, off the
referee's loop (the C++ bot server plays them on gRPC's threads with the compiled engine: arena.transport.lanes).

The table's fast path (arena.referee.fast) opens a lane when the seat to act, and the others it can, are served
by one such server (``Seat.lane_place``); the lane plays plain, legal, timely answers and asks the next seat, as
the fast path would, and ends at anything else: the hand over, a seat it does not ask, an answer it does not take,
a clock run out, a stream gone. The fast path then takes what it played (``LaneResult``: the decisions, each seat's
time bank, the request left open) and goes on from there exactly as if it had played them itself: the same
request ids, records and clocks (tests/transport/test_lanes.py).

A lane can also go on to the table's next hand (the hand chain): armed with it (``LaneHandle.arm``), a lane whose hand
ends writes every seat's HandEnd, the next hand's HandStarts and its first request at once, and tells its owner the
hand is done (``LaneOwner.hand_done``); the next hand's fast path adopts it (``LaneHandle.adopt``). Python's work at
a hand's end (its record, the sinks, the tallies) then runs while the bots play the next hand, off the path from
one hand's last answer to the next hand's first request. The table arms a lane only when nothing it hands the
finished hand to is durable storage (``TableRunner.chains``): the bots hear the result before it is stored.
"""

from __future__ import annotations

from collections.abc import Sequence
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
    """Who opened a lane (the table's fast path): told once what it played, when it ends, or when its hand is over
    and the lane went on to the next one armed (``hand_done``: ``result.open`` is None)."""

    def laned(self, result: LaneResult) -> None: ...

    def hand_done(self, result: LaneResult) -> None: ...


class LaneHandle(Protocol):
    """A running lane, as its opener holds it."""

    def recall(self, discard: bool = False) -> None:
        """End it if it runs, and tell its owner what it played (``discard``: nobody, the table is stopped)."""
        ...

    def arm(self, hand: Hand, hand_id: str, places: Sequence[LanePlace], starts: Sequence[bytes],
            from_seats: Sequence[int], first_request_id: int) -> bool:
        """Let the lane go on to ``hand`` (left alone by the caller until the lane says it did, or ends) when its own
        hand ends: every seat's HandEnd and its HandStart of ``hand`` (``starts``, by seat of ``hand``) written, then
        the first request from ``first_request_id``. ``places``: each seat's of ``hand``; ``from_seats``: the seat of
        the lane's hand each seat of ``hand`` is held by now. False: it cannot (the lane ended, or asks another
        stream)."""
        ...

    def adopt(self, owner: LaneOwner) -> None:
        """``owner`` (the fast path of the hand the lane went on to) takes it."""
        ...


class LaneHost(Protocol):
    """A server that plays hands' decisions in lanes."""

    def open(self, owner: LaneOwner, places: Sequence[LanePlace | None], hand: Hand, table_id: str, hand_id: str,
             names: tuple[str, ...], timeouts: frozenset[int], first_request_id: int,
             clocks: Sequence[tuple[float, float]]) -> LaneHandle | None:
        """Open a lane for ``hand`` (left alone by the caller until its owner is told) and write its first request;
        ``places``: one per seat (None: a seat the lane does not ask), ``clocks`` each seat's per-action limit and
        bank in ms. Returns the lane, or None when no lane could be opened (nothing was sent)."""
        ...


@dataclass(slots=True)
class LanePlace:
    """Where a seat can be asked by a lane: its ``host`` and what the host needs of it (``ticket``)."""

    host: LaneHost
    ticket: object
