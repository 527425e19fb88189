"""What the referee hands to seats (``Decision``) and to records (``HandRecord``): plain engine-level data."""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Protocol

from arena.engine import Action, Event, LegalActions, TableConfig
from arena.engine.view import SeatView
from arena.referee.clock import TurnTimer
from arena.referee.status import DecisionHow


@dataclass(slots=True)  # not frozen: built for every decision, and a frozen __init__ costs ten times more
class Decision:
    """Everything the referee tells a seat when asking it to act: its view, the names at the table, its clock."""

    match_id: str
    table_id: str
    hand_id: str
    hand_number: int
    request_id: int
    view: SeatView  # for a seat that does not read it (Seat.reads_view) and view_wire: seat, cards, legal, config
    names: tuple[str, ...]
    starting_stack: int
    action_ms_left: int
    bank_ms_left: int
    timeouts: frozenset[int] = frozenset()  # indexes into the history of actions the referee made for a seat
    timer: TurnTimer = field(default_factory=lambda: TurnTimer(float("inf")))  # the request's clock (see TurnTimer)
    # For a seat that sends requests as bytes (Seat.wire_requests): the compiled engine's encoding of the request's
    # fields that come from the hand (hole cards to history, Hand.view_wire); empty when the engine has none
    view_wire: bytes = b""


class Request(Protocol):
    """What a bot's session keeps of a request open on it: its ids and its clock (a ``Decision``, or the fast
    path's ``WireRequest``)."""

    table_id: str
    hand_id: str
    request_id: int
    timer: TurnTimer


class WireHand(Protocol):
    """What the fast path reads of a hand of the compiled engine (arena.engine._core.Hand) for a ``WireRequest``."""

    @property
    def config(self) -> TableConfig: ...

    @property
    def num_seats(self) -> int: ...

    def legal_actions(self) -> LegalActions: ...

    def request_wire(self, seat: int, names: tuple[str, ...], timeouts: frozenset[int], action_ms_left: int,
                     bank_ms_left: int, head: bytes, request_id: int, tail: bytes) -> bytes: ...


@dataclass(slots=True)
class WireRequest:
    """A request of the table's fast path (arena.referee.fast) to a seat that is sent the compiled engine's bytes
    (``Seat.open_wire``): its ids, its clock and what the hand's ``request_wire`` needs beside the hand, where a
    ``Decision`` holds a view as well. The Decision is built only if the general path takes the decision over; its
    request is the same, to the byte (tests/referee/test_fast_path.py)."""

    table_id: str
    hand_id: str
    request_id: int
    timer: TurnTimer
    hand: WireHand  # the hand in play, as it stands when the request is made
    seat: int
    names: tuple[str, ...]
    timeouts: frozenset[int]
    starting_stack: int
    action_ms_left: int
    bank_ms_left: int


@dataclass(frozen=True, slots=True)
class MixedAction:
    """A bot's answer that leaves the choice to the referee: actions with the probabilities to play them with. The
    referee draws one from the match's secret seed (arena.deals.policy_draw), so the probabilities are exactly the
    ones the action was played with, and AIVAT can take the luck of the draw out (arena.ratings.aivat)."""

    choices: tuple[tuple[Action, float], ...]


@dataclass(frozen=True, slots=True)
class Commented:
    """A bot's answer with its decision comment (proto Action.comment, already cleaned: arena.text.comment). The
    referee stores the comment with the action it goes with and never sends it to any bot."""

    answer: Action | MixedAction
    comment: str


Answer = Action | MixedAction | Commented
"""What a seat answers a decision with: an action, a mixed action, or either with a comment."""


class Waiter(Protocol):
    """What waits for a request's answer where a seat opened it (``Seat.open_request``): an ``asyncio.Future``, or
    the table's own waiter (arena.referee.fast), which acts on the answer as soon as it is given."""

    def done(self) -> bool:
        """Whether the answer (or the error instead) was given already."""
        ...

    def set_result(self, answer: Answer, /) -> None:
        """The answer."""
        ...

    def set_exception(self, error: BaseException, /) -> None:
        """No answer: the clock ran out (TimeoutError), the bot is gone (SeatUnavailable), or what it sent was not
        an action (InvalidAction)."""
        ...


@dataclass(slots=True)  # not frozen: built for every decision, and a frozen __init__ costs ten times more
class DecisionRecord:
    """How one action came about (``how``: arena.referee.status.DecisionHow); ``rejected`` lists the refused
    attempts as ``rule: message``; ``comment`` is what the bot said of the action it played (empty: nothing)."""

    seat: int
    participant: int
    request_id: int
    action: Action
    elapsed_ms: float
    how: DecisionHow
    event_index: int
    rejected: tuple[str, ...] = ()
    policy: tuple[tuple[Action, float], ...] = ()  # the mixed action it was drawn from (MixedAction), if any
    comment: str = ""  # the bot's decision comment (Commented), for the records and spectators of finished hands


TRANSIENT = "transient"  # a field's metadata key: what only this process uses, never encoded with the record


@dataclass(slots=True)
class HandRecord:
    """A finished hand with every card and action, as the referee saw it (records keep all cards, R8.4)."""

    match_id: str
    table_id: str
    hand_id: str
    hand_number: int
    deal: int
    rotation: int
    seating: tuple[int, ...]
    button: int
    config: TableConfig
    starting_stacks: tuple[int, ...]
    deck: tuple[int, ...]
    hole: tuple[tuple[int, ...], ...]
    board: tuple[int, ...]
    events: tuple[Event, ...]
    payoffs: tuple[int, ...]
    final_stacks: tuple[int, ...]
    decisions: list[DecisionRecord] = field(default_factory=list)
    names: tuple[str, ...] = ()
    started_at: float = 0.0
    finished_at: float = 0.0
    # For seats that are sent the hand's end as bytes: the compiled engine's encoding of each seat's RefereeMessage
    # holding its HandEnd (Hand.end_wire); empty when the engine has none, and once the seats are told. Not part of
    # what the hand was: not compared, not shown, not sent with the record (TRANSIENT: arena.runner.codec leaves it
    # out)
    end_wire: tuple[bytes, ...] = field(default=(), compare=False, repr=False, metadata={TRANSIENT: True})
    # The compiled engine's events as bytes (Hand.packed_events), for the scoring worker: empty when the engine has
    # none, and once the sinks have it. Transient as end_wire is
    packed_events: bytes = field(default=b"", compare=False, repr=False, metadata={TRANSIENT: True})


class HandSink(Protocol):
    """Where finished hands go (a database, PHH files, a spectator feed); called once per hand, in order."""

    def hand_finished(self, record: HandRecord) -> Awaitable[None] | None:
        """Store or forward one finished hand; it must be durable when this returns, or, if this returns an
        awaitable, once that is done (the table awaits it before the next sink or any bot hears of the hand: a writer
        that stores the hands of several tables in one transaction, ``arena.runner.executor.MatchWriter``). A sink
        that stores nothing (a spectator feed, a tally) says so with ``durable = False``: where every sink does, the
        bots may hear a hand's result before the sinks have it (the hand chain: arena.referee.lane)."""
        ...
