"""Seats: the referee's view of a player. One job, ``decide``; implementations are remote bots over gRPC
(arena.transport), in-process Python bots, or plain functions (tests, replays).
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from dataclasses import dataclass

from arena.engine import Action, Hand, IllegalActionError
from arena.referee.lane import LanePlace
from arena.referee.records import Answer, Decision, HandRecord, Waiter, WireRequest

UNLIMITED_TABLES = 1 << 20


class SeatUnavailable(Exception):
    """The seat cannot answer now (its bot is disconnected or crashed); the time-out policy acts for it."""


class InvalidAction(ValueError):
    """An answer that is not even an action (no kind, garbage); refused like an illegal action (R6.1)."""

    rule = "R6.1"


@dataclass(slots=True)  # not frozen: built for every decision, and a frozen __init__ costs ten times more
class HandStart:
    """What a seat learns when a hand starts: which seat it holds, its hole cards, and every seat's stack, bet and
    committed chips once the blinds and antes are posted."""

    match_id: str
    table_id: str
    hand_id: str
    hand_number: int
    seat: int
    button: int
    hole_cards: tuple[int, ...]
    stacks: tuple[int, ...]
    names: tuple[str, ...]
    bets: tuple[int, ...] = ()
    committed: tuple[int, ...] = ()
    # For a seat that is sent its messages as bytes (Seat.wire_requests): the compiled engine's encoding of the
    # RefereeMessage holding this HandStart (Hand.start_wire); empty when the engine has none
    wire: bytes = b""


@dataclass(frozen=True, slots=True)
class Introduction:
    """What a bot said about itself when it joined (the protocol's Join). Recorded with the results, never trusted
    as its identity: the seat's name is the one the operator gave it."""

    bot_name: str
    bot_version: str
    language: str


class Seat(abc.ABC):
    """A player as the referee sees it. Only ``decide`` is required; notifications default to nothing."""

    name: str = "seat"
    times_itself: bool = False  # True: ``decide`` arms ``decision.timer`` on what it waits for (no timeout block)
    notifications_queue: bool = False  # True: the notifications below only queue a message, never wait
    wire_requests: bool = False  # True: ``decide`` sends the request as bytes; the table fills Decision.view_wire
    opens_requests: bool = False  # True: ``open_request`` asks without waiting (arena.referee.fast)
    # False: ``decide`` and ``open_request`` read of ``decision.view`` only the seat, its cards, the legal actions and
    # the config, so that a table with the compiled engine (Decision.view_wire) leaves the rest of the view out
    reads_view: bool = True

    @property
    def connected(self) -> bool:
        """Whether the seat can answer right now."""
        return True

    @property
    def has_joined(self) -> bool:
        """Whether the seat's bot ever joined (a bot that joined and dropped is absent, not a no-show)."""
        return self.connected

    async def wait_connected(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for the seat to be able to answer; return whether it can."""
        return self.connected

    @property
    def introduction(self) -> Introduction | None:
        """What the seat's bot said about itself when it joined, if it did (remote bots)."""
        return None

    @property
    def max_tables(self) -> int:
        """How many hands (at different tables) the seat may be in at once. A seat that keeps nothing between
        requests takes any number; a remote bot takes what its Join said (1 unless it said more)."""
        return UNLIMITED_TABLES

    def first_seat(self, seat: int) -> None:
        """Before the match: the seat this seat object holds in its first hand."""

    @abc.abstractmethod
    async def decide(self, decision: Decision, retry: bool) -> Answer:
        """Answer ``decision`` (on a retry after a rejection, the same request), with a comment or not; may raise
        ``SeatUnavailable``."""

    def open_request(self, decision: Decision, waiter: Waiter) -> Callable[[], None] | None:
        """Send ``decision``'s request and leave its answer (or the error instead) to ``waiter``, without waiting
        (a seat that says ``opens_requests``, under the decision's clock as ``decide``), and return what withdraws
        the request unanswered (the table was stopped); None, with nothing sent, when the seat cannot be asked now:
        the table then asks through ``decide``."""
        return None

    def open_wire(self, request: WireRequest, waiter: Waiter) -> Callable[[], None] | None:
        """``open_request`` for a seat that is sent requests as bytes and reads no view (``wire_requests`` and not
        ``reads_view``), with the compiled engine: the request's bytes come whole from ``request.hand.request_wire``
        (arena.transport.wire.RequestBuilder.request_wire), in one call. None when the seat cannot be asked now (the
        table then builds the Decision and asks through ``decide``)."""
        return None

    def lane_place(self, table_id: str, hand_id: str, starting_stack: int, hand: Hand) -> LanePlace | None:
        """Where a lane can ask this seat in ``hand`` (arena.referee.lane), or None: the table asks it itself."""
        return None

    def adopt_wire(self, request: WireRequest, waiter: Waiter) -> Callable[[], None] | None:
        """``open_wire`` for a request a lane wrote already (nothing is sent): its answer, or the error instead,
        goes to ``waiter``. None when the seat cannot be asked now."""
        return None

    async def rejected(self, decision: Decision, error: IllegalActionError | InvalidAction, retries_left: int) -> None:
        """Tell the seat its last action was refused and how many more tries it has."""

    async def timed_out(self, decision: Decision, action: Action, reason: str) -> None:
        """Tell the seat the referee acted for it (``reason`` says why: time-out, retries used up)."""

    async def hand_started(self, start: HandStart) -> None:
        """A hand begins; the seat holds ``start.seat``."""

    def hand_chained(self, seat: int) -> None:
        """A lane went on to the table's next hand (the hand chain, arena.referee.lane): its bot has that hand's
        HandStart already, from the lane, and holds ``seat`` in it. Only a seat with a ``lane_place`` is told this."""

    async def hand_finished(self, record: HandRecord, seat: int) -> None:
        """A hand is over; ``seat`` was this seat's position in it."""

    async def match_finished(self, result: object, participant: int) -> None:
        """The match is over (``result`` is the MatchResult)."""

    async def forfeited(self, reason: str) -> None:
        """The seat has too many violations: the rest of the match is played for it."""


class FunctionSeat(Seat):
    """A seat that answers with a plain function of the decision (tests, baselines, replays)."""

    def __init__(self, name: str, choose: Callable[[Decision], Answer]) -> None:
        self.name = name
        self._choose = choose

    async def decide(self, decision: Decision, retry: bool) -> Answer:
        return self._choose(decision)
