"""A seat played by a remote bot over one BotService.Play stream (see proto/arena/v1/bot.proto).

The referee never waits on the network: sending only queues a message for the stream's writer, and an answer
is awaited only under the referee's clock. A bot that drops its stream can reconnect with its token; it is
dealt in again from the next hand (R2.2's "dealt in"), and meanwhile its seat is played by the time-out policy.

One stream may host the seat at several tables at once (a match played on several tables, ``Join.max_tables``):
each table's request is open on its own, under its own clock, until the Action that names it arrives.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from collections.abc import Callable

from arena.engine import Action, IllegalActionError
from arena.referee import (
    Decision,
    HandRecord,
    HandStart,
    Introduction,
    InvalidAction,
    MixedAction,
    Seat,
    SeatUnavailable,
)
from arena.referee.match import MatchResult
from arena.transport import convert, wire
from arena.transport.session import BotSession, Connection, Outgoing, error_message
from arena_sdk.pb import bot_pb2, poker_pb2

log = logging.getLogger("arena.transport")


class SeatState(enum.Enum):
    """Where a remote seat stands with its bot."""

    WAITING = "waiting"  # no stream has joined with its token yet
    LIVE = "live"  # a stream is attached: the bot is asked (where a hand began before it joined: from the next)
    DROPPED = "dropped"  # its stream ended: the time-out policy plays for it until it joins again
    FINISHED = "finished"  # the match is over for it


class RemoteSeat(Seat):
    """A participant's seat answered by whichever connection last joined with its token. ``name`` is the name the
    operator gave the seat: the one other bots, results and leaderboards show. What the bot says of itself in its
    Join (``bot_name``, ``bot_version``, ``language``) is kept as its ``introduction``, for the records."""

    times_itself = True
    notifications_queue = True

    def __init__(
        self,
        name: str,
        token: str,
        match_id: str,
        table_id: str,
        config: poker_pb2.TableConfig,
        policy: bot_pb2.ActionClockPolicy,
        hands_total: int,
        tables: int = 1,
    ) -> None:
        self.name = name
        self.tables = tables  # tables the match is played on at once: the most this seat can be given
        self.token = token
        self.match_id = match_id
        self.table_id = table_id
        self.config = config
        self.policy = policy
        self.hands_total = hands_total
        self.bot_name = ""
        self.bot_version = ""
        self.language = ""
        self.joins = 0
        self.participant = -1
        self.finished = False
        self.hosted = False  # played on a stream that outlives the match (``adopt``): never closed at its end
        self._session: BotSession | None = None
        self._ready = asyncio.Event()
        self._in_hand: set[str] = set()  # tables where a hand of this seat is being played
        self._stale: set[str] = set()  # of those, the tables whose hand began before the current stream joined
        self._seat = 0
        self.on_join: Callable[[RemoteSeat, str, bot_pb2.Join], None] | None = None  # told of every join
        self._requests: dict[str, wire.RequestBuilder] = {}  # one per table: each remembers its hand's history

    # ------------------------------------------------------------------ connection life

    @property
    def state(self) -> SeatState:
        """Where the seat stands with its bot."""
        if self.finished:
            return SeatState.FINISHED
        if self._session is not None and self._session.live:
            return SeatState.LIVE
        return SeatState.DROPPED if self.joins else SeatState.WAITING

    @property
    def session(self) -> BotSession | None:
        """The stream that answers for this seat now (the newest that joined with its token)."""
        return self._session

    @property
    def live(self) -> bool:
        """Whether a stream is attached (and the match is not over for the seat)."""
        return self.state is SeatState.LIVE

    @property
    def has_joined(self) -> bool:
        """Whether a stream ever joined with this seat's token."""
        return self.joins > 0

    @property
    def connected(self) -> bool:
        """Whether the bot can be asked to act now (a bot that rejoined mid-hand waits for the table's next hand;
        with several tables, it plays on at the tables whose hand began after it joined)."""
        return self.live and not (self._stale and self._stale >= self._in_hand)

    @property
    def max_tables(self) -> int:
        """The tables the bot said it takes at once (Join.max_tables; 1 until it joins, or if it said 0)."""
        return self._session.max_tables if self._session is not None else 1

    async def wait_connected(self, timeout_s: float) -> bool:
        try:
            await asyncio.wait_for(self._ready.wait(), timeout_s)
        except TimeoutError:
            log.warning("%s did not connect within %.1f s; its seat is played by the time-out policy", self.name,
                        timeout_s)
        return self.connected

    @property
    def introduction(self) -> Introduction | None:
        """What the bot's latest Join said about it, once it joined."""
        if not self.joins:
            return None
        return Introduction(self.bot_name, self.bot_version, self.language)

    def first_seat(self, seat: int) -> None:
        self._seat = seat  # what a Welcome says until the first HandStart

    @property
    def connection(self) -> Connection | None:
        """The connection of the stream that answers for this seat now."""
        return self._session.conn if self._session is not None else None

    def attach(self, conn: Connection, join: bot_pb2.Join) -> None:
        """Seat a newly joined stream and welcome it. The newest stream with the token wins: one already attached
        (a connection cut silently, or a bot that restarted) is told why and closed."""
        old = self._session.conn if self._session is not None else None
        if old is not None and old is not conn:
            old.send(error_message(
                bot_pb2.ERROR_CODE_BAD_TOKEN,
                "another connection joined with your token; this one is closed (the newest connection plays)",
                fatal=True,
            ))
            old.close("ALREADY_EXISTS", "replaced by a newer connection with the same token")
            self._fail_pending(f"{self.name} reconnected")
        self._seat_session(BotSession(conn, join), conn.peer)
        if self.finished:
            conn.close()

    def adopt(self, session: BotSession, peer: str = "") -> None:
        """Play this seat on a stream that outlives the match (a league member's, arena.league): the stream is
        sent this match's Welcome, and is left open when the match ends. Called again when the member rejoins."""
        self.hosted = True
        if self._session is not None and self._session is not session:
            self._fail_pending(f"{self.name} reconnected")
        self._seat_session(session, peer)

    def _seat_session(self, session: BotSession, peer: str) -> None:
        join = session.join
        self._session = session
        self.joins += 1
        if self.on_join is not None:
            self.on_join(self, peer, join)
        self.bot_name = join.bot_name
        self.bot_version = join.bot_version
        self.language = join.language
        self._stale = set(self._in_hand)
        self._ready.set()
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
                    batches=join.batches,
                )
            )
        )

    def detach(self, conn: Connection) -> None:
        """The stream ended: the seat is unavailable until the bot joins again."""
        if self._session is None or self._session.conn is not conn:
            return
        self._fail_pending(f"{self.name} disconnected")
        self._session = None
        self._ready.clear()

    def _fail_pending(self, why: str) -> None:
        if self._session is not None:
            self._session.fail(SeatUnavailable(why))

    def _send(self, message: Outgoing, on_sent: Callable[[], None] | None = None) -> None:
        if self._session is not None:
            self._session.send(message, on_sent)

    # ------------------------------------------------------------------ answers from the bot

    def answers(self, message: poker_pb2.Action) -> bool:
        """Whether ``message`` answers a request open on the current stream (see ``BotSession.answers``)."""
        return self._session is not None and self._session.answers(message)

    def deliver(self, message: poker_pb2.Action) -> None:
        """An Action arrived on the current stream (see ``BotSession.deliver``)."""
        if self._session is not None:
            self._session.deliver(message)

    # ------------------------------------------------------------------ the Seat interface

    async def decide(self, decision: Decision, retry: bool) -> Action | MixedAction:
        session = self._session
        if session is None or not session.live or decision.table_id in self._stale:
            raise SeatUnavailable(f"{self.name} is not connected")
        request = None
        if not retry:
            builder = self._requests.get(decision.table_id)
            if builder is None:
                builder = self._requests[decision.table_id] = wire.RequestBuilder()
            request = builder.serialized(decision, decision.timeouts)
        return await session.ask(decision, request)

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
        self._in_hand.add(start.table_id)
        self._stale.discard(start.table_id)
        self._seat = start.seat
        self._send(wire.hand_start_bytes(start))

    async def hand_finished(self, record: HandRecord, seat: int) -> None:
        self._in_hand.discard(record.table_id)
        self._stale.discard(record.table_id)
        self._send(wire.hand_end_bytes(record, seat))

    async def match_finished(self, result: object, participant: int) -> None:
        self.finished = True
        if isinstance(result, MatchResult):
            self._send(bot_pb2.RefereeMessage(match_end=convert.match_end(result, participant)))
        if self._session is not None and not self.hosted:
            self._session.conn.close()

    async def forfeited(self, reason: str) -> None:
        self._send(error_message(bot_pb2.ERROR_CODE_FORFEIT, reason, fatal=False))
