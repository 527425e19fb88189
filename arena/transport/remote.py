"""A seat played by a remote bot over a BotService.Play stream (see proto/arena/v1/bot.proto): one per table, over
the endpoint its token or key names (``arena.transport.endpoint``), which knows the stream that plays it now.

The referee never waits on the network: sending only queues a message for the stream's writer, and an answer
is awaited only under the referee's clock. A bot that drops its stream can reconnect with its token; it is
dealt in again from the next hand (R2.2's "dealt in"), and meanwhile its seat is played by the time-out policy.

One stream may host the seat at several tables at once (a match played on several tables, ``Join.max_tables``):
each table's request is open on its own, under its own clock, until the Action that names it arrives.
"""

from __future__ import annotations

from collections.abc import Callable

from arena.engine import Action, Hand, IllegalActionError
from arena.referee import (
    Answer,
    Decision,
    HandRecord,
    HandStart,
    Introduction,
    InvalidAction,
    Request,
    Seat,
    SeatUnavailable,
    Waiter,
    WireRequest,
)
from arena.referee.lane import LanePlace
from arena.referee.match import MatchResult
from arena.transport import convert, wire
from arena.transport.endpoint import Endpoint
from arena.transport.lanes import LaneTicket
from arena.transport.session import BotSession, Outgoing, error_message
from arena_sdk.pb import bot_pb2, poker_pb2


class RemoteSeat(Seat):
    """A participant's seat at one table, played over its ``endpoint`` (a match seat's token, or a league bot's
    key): it asks the endpoint for the session that answers now, and keeps no connection state of its own. ``name``
    is the endpoint's, the name the operator gave it: the one other bots, results and leaderboards show. What the
    bot says of itself in its Join is the endpoint's ``introduction``, for the records."""

    times_itself = True
    notifications_queue = True
    wire_requests = True
    opens_requests = True
    reads_view = False  # the request's bytes come from Decision.view_wire when there are some

    def __init__(
        self,
        endpoint: Endpoint,
        match_id: str,
        table_id: str,
        config: poker_pb2.TableConfig,
        policy: bot_pb2.ActionClockPolicy,
        hands_total: int,
        tables: int = 1,
    ) -> None:
        self.endpoint = endpoint
        self.name = endpoint.name
        self.tables = tables  # tables the match is played on at once: the most this seat can be given
        self.match_id = match_id
        self.table_id = table_id
        self.config = config
        self.policy = policy
        self.hands_total = hands_total
        self._seat = 0
        # the tables where a hand of this seat is being played, each with the session that was asked for it when
        # it began: a bot that joined since then (its stream had broken) is dealt in from that table's next hand
        self._hands: dict[str, BotSession | None] = {}
        self._requests: dict[str, wire.RequestBuilder] = {}  # one per table: each remembers its hand's history

    @property
    def token(self) -> str:
        """The token a stream joins this seat with (a match's; '' for a league's, which join with their key)."""
        return self.endpoint.token

    @property
    def session(self) -> BotSession | None:
        """The stream that answers for this seat now (the newest that joined with its token or key)."""
        return self.endpoint.session

    @property
    def connected(self) -> bool:
        """Whether the bot can be asked to act now (a bot that rejoined mid-hand waits for the table's next hand;
        with several tables, it plays on at the tables whose hand began after it joined)."""
        session = self.endpoint.session
        if session is None or not self.endpoint.live:
            return False
        return not self._hands or session in self._hands.values()  # by identity (a session has no __eq__)

    @property
    def has_joined(self) -> bool:
        """Whether a stream ever joined with this seat's token or key."""
        return self.endpoint.joins > 0

    @property
    def max_tables(self) -> int:
        """The tables the bot said it takes at once (Join.max_tables; 1 until it joins, or if it said 0)."""
        session = self.endpoint.session
        return session.max_tables if session is not None else 1

    async def wait_connected(self, timeout_s: float) -> bool:
        await self.endpoint.wait_joined(timeout_s)
        return self.connected

    @property
    def introduction(self) -> Introduction | None:
        """What the bot's latest Join said about it, once it joined."""
        return self.endpoint.introduction

    def first_seat(self, seat: int) -> None:
        self._seat = seat  # what a Welcome says until the first HandStart

    def welcome(self, session: BotSession) -> None:
        """A stream joined over the endpoint: tell it where this seat plays (the endpoint calls this)."""
        session.tables_welcomed += min(session.max_tables, self.tables)
        if session.tables_welcomed > 1:  # requests of several tables: worth a loop turn to send them in one write
            session.conn.gathers = True
        session.send(
            bot_pb2.RefereeMessage(
                welcome=bot_pb2.Welcome(
                    match_id=self.match_id,
                    seat=self._seat,
                    table_id=self.table_id,
                    config=self.config,
                    clock_policy=self.policy,
                    protocol_version=convert.PROTOCOL_VERSION,
                    hands_total=self.hands_total,
                    tables=min(session.max_tables, self.tables),
                    batches=session.join.batches,
                )
            )
        )

    def _send(self, message: Outgoing, on_sent: Callable[[], None] | None = None) -> None:
        session = self.endpoint.session
        if session is not None:
            session.send(message, on_sent)

    # ------------------------------------------------------------------ the Seat interface

    def _asked(self, decision: Request) -> BotSession | None:
        """The session to ask ``decision`` through: None if there is none now, or if the one that was dealt this
        table's hand is gone (a bot that rejoined is dealt in from the next hand)."""
        session = self.endpoint.session
        hands = self._hands
        if session is None or not self.endpoint.live or (decision.table_id in hands and
                                                         hands[decision.table_id] is not session):
            return None
        return session

    def _builder(self, table_id: str) -> wire.RequestBuilder:
        builder = self._requests.get(table_id)
        if builder is None:
            builder = self._requests[table_id] = wire.RequestBuilder()
        return builder

    def _request(self, decision: Decision) -> bytes:
        return self._builder(decision.table_id).serialized(decision, decision.timeouts)

    async def decide(self, decision: Decision, retry: bool) -> Answer:
        session = self._asked(decision)
        if session is None:
            raise SeatUnavailable(f"{self.name} is not connected")
        return await session.ask(decision, None if retry else self._request(decision))

    def open_request(self, decision: Decision, waiter: Waiter) -> Callable[[], None] | None:
        session = self._asked(decision)
        if session is None:
            return None
        return session.open(decision, self._request(decision), waiter)

    def open_wire(self, request: WireRequest, waiter: Waiter) -> Callable[[], None] | None:
        session = self._asked(request)
        if session is None:
            return None
        return session.open(request, self._builder(request.table_id).request_wire(request), waiter)

    def lane_place(self, table_id: str, hand_id: str, starting_stack: int, hand: Hand) -> LanePlace | None:
        session = self.endpoint.session
        if session is None or not self.endpoint.live or self._hands.get(table_id) is not session:
            return None
        call = session.conn.native
        if call is None or call.server.lanes is None:
            return None
        head, tail = self._builder(table_id).lane_parts(table_id, hand_id, hand.config, hand.num_seats, starting_stack)
        return LanePlace(call.server.lanes, LaneTicket(call, session, head, tail))

    def adopt_wire(self, request: WireRequest, waiter: Waiter) -> Callable[[], None] | None:
        session = self._asked(request)
        if session is None:
            return None
        return session.adopt(request, waiter)

    async def rejected(self, decision: Decision, error: IllegalActionError | InvalidAction, retries_left: int) -> None:
        self._send(bot_pb2.RefereeMessage(action_rejected=bot_pb2.ActionRejected(
            table_id=decision.table_id, hand_id=decision.hand_id, request_id=decision.request_id,
            rule=error.rule, message=str(error), retries_left=retries_left,
        )))

    async def timed_out(self, decision: Decision, action: Action, reason: str) -> None:
        text = {
            "timeout": "your clock ran out",
            "illegal": "your retries after illegal actions are used up",
            "absent": "you were not connected",
        }.get(reason, reason)
        self._send(error_message(
            bot_pb2.ERROR_CODE_TIMEOUT, f"{text}: the referee played {action} for you (check if free, else fold)",
            request_id=decision.request_id, table_id=decision.table_id, hand_id=decision.hand_id,
        ))

    async def hand_started(self, start: HandStart) -> None:
        self._seat = start.seat
        self._hands[start.table_id] = self.endpoint.session
        self._send(start.wire or wire.hand_start_bytes(start))

    def hand_chained(self, seat: int) -> None:
        # (the lane wrote the HandStart to the stream of the session dealt the hand before, which is asked: a bot that
        # joined again since is dealt in from the next hand, as a rejoined bot always is)
        self._seat = seat

    async def hand_finished(self, record: HandRecord, seat: int) -> None:
        self._hands.pop(record.table_id, None)
        self._send(wire.hand_end_bytes(record, seat))

    async def match_finished(self, result: object, participant: int) -> None:
        if isinstance(result, MatchResult):
            self._send(bot_pb2.RefereeMessage(match_end=convert.match_end(result, participant)))
        self.endpoint.release(self)

    async def forfeited(self, reason: str) -> None:
        session = self.endpoint.session
        if session is not None:  # a lane asks no forfeited bot (the fast path's to_ask)
            session.recall_lanes()
        self._send(error_message(bot_pb2.ERROR_CODE_FORFEIT, reason, fatal=False))
