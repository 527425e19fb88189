"""The referee's gRPC server: BotService for bots, ArenaService for people and tools, plus the standard health
and reflection services (so ``grpcurl`` can list and call everything).

Every way a bot can misbehave on the wire ends in a clear Error message and, when fatal, a gRPC status; none of
them reaches the referee's tables, which only ever see seats that answer, or don't, within their clock.

``WatchMatch`` with ``from_start`` replays what this process still holds of the match: the events of its last
``HISTORY_KEPT`` finished hands and status changes, not every hand of a long match (the records keep those).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from arena.referee import HandRecord
from arena.referee.match import Match, MatchSpec
from arena.transport import convert
from arena.transport.pb import arena_pb2, arena_pb2_grpc, bot_pb2, bot_pb2_grpc
from arena.transport.remote import Connection, RemoteSeat, error_message, hand_end_parts

log = logging.getLogger("arena.transport")

JOIN_TIMEOUT_S = 10.0
HISTORY_KEPT = 1000  # match events a match keeps for watchers that ask for them from the start
Context = grpc.aio.ServicerContext[Any, Any]


@dataclass(frozen=True, slots=True)
class ServerLimits:
    """Limits on what one bot connection may send: message size, and a rate (token bucket) for every message that
    is not the answer to the request the referee is waiting for (answers are never limited: a fast bot is welcome).
    """

    max_message_bytes: int = 64 * 1024
    messages_per_second: float = 50.0
    burst: int = 200


class ServerError(RuntimeError):
    """The referee cannot start serving: the address is taken or the TLS material is unusable."""


class _Bucket:
    """Token bucket: ``rate`` messages per second on average, ``burst`` at once."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.capacity = float(burst)
        self.tokens = float(burst)
        self.last = time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self.last) * self.rate)
        self.last = now
        if self.tokens < 1.0:
            return False
        self.tokens -= 1.0
        return True


@dataclass(slots=True)
class MatchEntry:
    """A match this referee runs, for the spectator service; ``history`` keeps its last ``HISTORY_KEPT`` events."""

    match: Match
    spec: MatchSpec
    seats: list[RemoteSeat]
    status: int = arena_pb2.MATCH_STATUS_PENDING
    created: float = field(default_factory=time.time)
    watchers: list[asyncio.Queue[arena_pb2.MatchEvent | None]] = field(default_factory=list)
    history: deque[arena_pb2.MatchEvent] = field(default_factory=lambda: deque(maxlen=HISTORY_KEPT))


class MatchDirectory:
    """The matches of this process, and a sink that feeds finished hands to whoever watches them."""

    def __init__(self) -> None:
        self.matches: dict[str, MatchEntry] = {}

    def add(self, match: Match, seats: list[RemoteSeat]) -> MatchEntry:
        entry = MatchEntry(match, match.spec, seats)
        self.matches[match.spec.match_id] = entry
        return entry

    def info(self, entry: MatchEntry) -> arena_pb2.MatchInfo:
        match = entry.match
        return arena_pb2.MatchInfo(
            match_id=entry.spec.match_id,
            status=entry.status,  # type: ignore[arg-type]
            hands_played=match.hands_played,
            hands_total=match.hands_total,
            seats=[
                arena_pb2.MatchSeat(
                    seat=i, bot_name=p.name, bot_version=p.version, net_chips=p.net, hands_played=p.hands,
                    violations=p.violations, connected=p.seat.connected,
                )
                for i, p in enumerate(match.participants)
            ],
            config=convert.table_config(entry.spec.config, len(match.participants), entry.spec.starting_stack),
            created_unix_ms=int(entry.created * 1000),
        )

    def publish(self, entry: MatchEntry, event: arena_pb2.MatchEvent) -> None:
        entry.history.append(event)
        for queue in list(entry.watchers):
            if queue.qsize() > 1000:  # a watcher that does not read is dropped, never waited for
                entry.watchers.remove(queue)
                queue.put_nowait(None)
            else:
                queue.put_nowait(event)

    def set_status(self, match_id: str, status: int) -> None:
        entry = self.matches[match_id]
        entry.status = status
        self.publish(entry, arena_pb2.MatchEvent(match_id=match_id, info=self.info(entry)))
        if status in (arena_pb2.MATCH_STATUS_FINISHED, arena_pb2.MATCH_STATUS_ABORTED):
            for queue in entry.watchers:
                queue.put_nowait(None)
            entry.watchers.clear()

    def sink(self, match_id: str) -> SpectatorSink:
        return SpectatorSink(self, match_id)


class SpectatorSink:
    """A HandSink that publishes each finished hand, with public information only, to the match's watchers."""

    def __init__(self, directory: MatchDirectory, match_id: str) -> None:
        self.directory = directory
        self.match_id = match_id

    def hand_finished(self, record: HandRecord) -> None:
        entry = self.directory.matches.get(self.match_id)
        if entry is None:
            return
        parts = hand_end_parts(record)  # shared with the HandEnds the bots get next
        event = arena_pb2.MatchEvent(match_id=self.match_id)
        summary = event.hand_finished
        summary.SetInParent()
        summary.table_id = record.table_id
        summary.hand_id = record.hand_id
        summary.hand_number = record.hand_number
        summary.button = record.button
        summary.board.extend(parts.board)
        summary.shown.extend(parts.shown)
        summary.payoffs.extend(parts.payoffs)
        summary.history.extend(parts.history)
        summary.seat_names.extend(record.names)
        self.directory.publish(entry, event)


class BotServicer(bot_pb2_grpc.BotServiceServicer):
    """The bot stream: Join, then Actions; misbehaviour is answered, never fatal to the referee."""

    def __init__(self, seats: dict[str, RemoteSeat], limits: ServerLimits) -> None:
        self.seats = seats
        self.limits = limits

    async def Play(
        self, request_iterator: AsyncIterator[bot_pb2.BotMessage], context: Context
    ) -> AsyncIterator[bot_pb2.RefereeMessage]:
        peer = context.peer()
        try:
            first = await asyncio.wait_for(anext(request_iterator), JOIN_TIMEOUT_S)
        except (StopAsyncIteration, asyncio.CancelledError):
            return
        except TimeoutError:
            yield error_message(bot_pb2.ERROR_CODE_OUT_OF_ORDER, "no Join within 10 s of opening the stream",
                                fatal=True)
            await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, "no Join within 10 s")
            return
        except Exception as exc:  # garbage bytes, an oversized message: the call is already broken
            log.info("bot stream from %s failed before joining: %r", peer, exc)
            return
        refusal = self._check_join(first)
        if refusal is not None:
            code, status, text = refusal
            yield error_message(code, text, fatal=True)
            await context.abort(status, text)
            return
        seat = self.seats[first.join.token]
        conn = Connection(peer)
        seat.attach(conn, first.join)
        log.info("%s joined as %s (%s %s) from %s", seat.name, first.join.bot_name, first.join.language,
                 first.join.bot_version, peer)
        reader = asyncio.create_task(self._read(request_iterator, seat, conn))
        try:
            while True:
                message = await conn.queue.get()
                if message is None:
                    break
                yield message
        finally:
            reader.cancel()
            seat.detach(conn)
        if conn.closing is not None:
            await context.abort(getattr(grpc.StatusCode, conn.closing.code), conn.closing.details)

    def _check_join(
        self, first: bot_pb2.BotMessage
    ) -> tuple[bot_pb2.ErrorCode.ValueType, grpc.StatusCode, str] | None:
        """Why a first message cannot seat a bot, or None when it can."""
        if first.WhichOneof("msg") != "join":
            return (bot_pb2.ERROR_CODE_OUT_OF_ORDER, grpc.StatusCode.FAILED_PRECONDITION,
                    "the first message on the stream must be a Join")
        join = first.join
        if join.protocol_version != convert.PROTOCOL_VERSION:
            return (bot_pb2.ERROR_CODE_UNSUPPORTED_PROTOCOL_VERSION, grpc.StatusCode.FAILED_PRECONDITION,
                    f"protocol version {join.protocol_version} is not supported; this referee speaks "
                    f"{convert.PROTOCOL_VERSION}")
        seat = self.seats.get(join.token)
        if seat is None:
            return (bot_pb2.ERROR_CODE_BAD_TOKEN, grpc.StatusCode.UNAUTHENTICATED,
                    "unknown token: no seat of any match here has it")
        if seat.live:
            return (bot_pb2.ERROR_CODE_BAD_TOKEN, grpc.StatusCode.ALREADY_EXISTS,
                    f"the token of {seat.name} is already in use by a live connection")
        return None

    async def _read(self, requests: AsyncIterator[bot_pb2.BotMessage], seat: RemoteSeat, conn: Connection) -> None:
        """Everything after the Join: Actions go to the seat; anything else gets an Error."""
        bucket = _Bucket(self.limits.messages_per_second, self.limits.burst)
        try:
            async for message in requests:
                # The answer to the open request is always welcome, however fast the bot is; the limit is for the rest
                answer = message.WhichOneof("msg") == "action" and seat.is_open(message.action.request_id)
                if not answer and not bucket.take():
                    conn.send(error_message(
                        bot_pb2.ERROR_CODE_RATE_LIMITED,
                        f"more than {self.limits.messages_per_second:g} messages per second: stream closed; "
                        "reconnect with your token to play on", fatal=True,
                    ))
                    conn.close("RESOURCE_EXHAUSTED", "rate limit exceeded")
                    return
                kind = message.WhichOneof("msg")
                if kind == "action":
                    seat.deliver(message.action)
                elif kind == "join":
                    conn.send(error_message(bot_pb2.ERROR_CODE_OUT_OF_ORDER, "already joined: Join only once"))
                else:
                    conn.send(error_message(
                        bot_pb2.ERROR_CODE_MALFORMED,
                        "a message with neither join nor action (an unknown message type?) was ignored",
                    ))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # bytes that are not a BotMessage, or a message over the size limit
            log.info("stream of %s broke: %r", seat.name, exc)
            text = (f"a message could not be read as a BotMessage (not protobuf, or over "
                    f"{self.limits.max_message_bytes} bytes): stream closed; reconnect with your token to play on")
            conn.send(error_message(bot_pb2.ERROR_CODE_MALFORMED, text, fatal=True))
            conn.close("INVALID_ARGUMENT", text)
            return
        conn.close()


class ArenaServicer(arena_pb2_grpc.ArenaServiceServicer):
    """Read-only service for people and tools: list matches, read one, watch its hands as they finish."""

    def __init__(self, directory: MatchDirectory) -> None:
        self.directory = directory

    async def ListMatches(
        self, request: arena_pb2.ListMatchesRequest, context: Context
    ) -> arena_pb2.ListMatchesResponse:
        entries = sorted(self.directory.matches.values(), key=lambda e: e.created)
        if request.status:
            entries = [e for e in entries if e.status == request.status]
        return arena_pb2.ListMatchesResponse(matches=[self.directory.info(e) for e in entries])

    async def GetMatch(
        self, request: arena_pb2.GetMatchRequest, context: Context
    ) -> arena_pb2.MatchInfo:
        entry = self.directory.matches.get(request.match_id)
        if entry is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no match {request.match_id!r}")
        assert entry is not None
        return self.directory.info(entry)

    async def WatchMatch(
        self, request: arena_pb2.WatchMatchRequest, context: Context
    ) -> AsyncIterator[arena_pb2.MatchEvent]:
        entry = self.directory.matches.get(request.match_id)
        if entry is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no match {request.match_id!r}")
            return
        yield arena_pb2.MatchEvent(match_id=request.match_id, info=self.directory.info(entry))
        if request.from_start:
            for event in list(entry.history):
                yield event
        if entry.status in (arena_pb2.MATCH_STATUS_FINISHED, arena_pb2.MATCH_STATUS_ABORTED):
            return
        queue: asyncio.Queue[arena_pb2.MatchEvent | None] = asyncio.Queue()
        entry.watchers.append(queue)
        try:
            while True:
                item = await queue.get()
                if item is None:
                    break
                yield item
        finally:
            if queue in entry.watchers:
                entry.watchers.remove(queue)


class RefereeServer:
    """One referee process: a gRPC server on ``host:port`` (port 0 picks a free one) for any number of matches."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        tls: tuple[bytes, bytes] | None = None,
        limits: ServerLimits | None = None,
    ) -> None:
        self.host = host
        self.requested_port = port
        self.tls = tls
        self.limits = limits or ServerLimits()
        self.seats: dict[str, RemoteSeat] = {}
        self.directory = MatchDirectory()
        self.port = 0
        self._server: grpc.aio.Server | None = None

    @property
    def address(self) -> str:
        """``host:port`` that bots connect to."""
        return f"{self.host}:{self.port}"

    async def start(self) -> int:
        """Bind and start serving; returns the port."""
        options = [
            ("grpc.max_receive_message_length", self.limits.max_message_bytes),
            ("grpc.max_send_message_length", 16 * 1024 * 1024),
            ("grpc.so_reuseport", 0),
        ]
        server = grpc.aio.server(options=options)
        bot_pb2_grpc.add_BotServiceServicer_to_server(BotServicer(self.seats, self.limits), server)
        arena_pb2_grpc.add_ArenaServiceServicer_to_server(ArenaServicer(self.directory), server)
        health_servicer = health.aio.HealthServicer()  # type: ignore[attr-defined]
        health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
        names = [
            bot_pb2.DESCRIPTOR.services_by_name["BotService"].full_name,
            arena_pb2.DESCRIPTOR.services_by_name["ArenaService"].full_name,
            health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
            reflection.SERVICE_NAME,
        ]
        reflection.enable_server_reflection(names, server)
        target = f"{self.host}:{self.requested_port}"
        try:
            if self.tls is not None:
                key, cert = self.tls
                self.port = server.add_secure_port(target, grpc.ssl_server_credentials([(key, cert)]))
            else:
                self.port = server.add_insecure_port(target)
            await server.start()
        except RuntimeError as exc:
            reason = "port in use, or a bad TLS key/certificate?"
            raise ServerError(f"cannot listen on {target} ({reason}): {exc}") from None
        for name in [*names[:2], ""]:
            await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
        self._server = server
        return self.port

    def add_seat(self, seat: RemoteSeat) -> None:
        """Make a seat joinable with its token."""
        if seat.token in self.seats:
            raise ValueError("duplicate token")
        self.seats[seat.token] = seat

    def add_match(self, match: Match, seats: list[RemoteSeat]) -> MatchEntry:
        """List a match on the spectator service (its hands are published if its sinks include ``sink``)."""
        return self.directory.add(match, seats)

    async def stop(self, grace_s: float = 1.0) -> None:
        """Stop serving, giving streams ``grace_s`` to finish."""
        if self._server is not None:
            await self._server.stop(grace_s)
            self._server = None
