"""The referee's gRPC server: BotService for bots, ArenaService for people and tools, plus the standard health
and reflection services (so ``grpcurl`` can list and call everything).

Every way a bot can misbehave on the wire ends in a clear Error message and, when fatal, a gRPC status; none of
them reaches the referee's tables, which only ever see seats that answer, or don't, within their clock.

Nothing a client does can stall a table (``ServerLimits``): keepalive pings find a silently cut connection within
seconds; connections without calls are closed; a stream that does not join in time is closed; each peer has a cap
on open streams; refusals are throttled per peer (after the first few, each waits for its turn); spectators are
limited in number (optionally behind a token), are fed events serialized once for all of them, and share a budget
of messages per second (each message to each spectator costs the referee's loop about as much as a message to a
bot: without a budget 64 spectators of a fast match halve its speed).
The referee serves local bots on a Unix-domain socket that only they can reach (no spectators there), and remote
bots and spectators on TCP.

``WatchMatch`` with ``from_start`` replays what this process still holds of the match: the events of its last
``HISTORY_KEPT`` finished hands and status changes, not every hand of a long match (the records keep those).
"""

from __future__ import annotations

import asyncio
import logging
import os
import resource
import shutil
import socket
import tempfile
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from arena.referee import HandRecord
from arena.referee.match import Match, MatchSpec
from arena.transport import convert
from arena.transport.pb import arena_pb2, bot_pb2
from arena.transport.remote import RemoteSeat, hand_end_parts
from arena.transport.session import BotSession, Connection, Outgoing, error_message

log = logging.getLogger("arena.transport")

BATCH_BYTES = 1 << 20  # the most a RefereeBatch holds; more goes in the next one
HISTORY_KEPT = 1000  # match events a match keeps for watchers that ask for them from the start
WATCHER_QUEUE = 1000  # events waiting for one watcher before it is dropped (it is not reading)
Context = grpc.aio.ServicerContext[Any, Any]


@dataclass(frozen=True, slots=True)
class ServerLimits:
    """What one client may do to the referee.

    Messages: size, and a rate (token bucket) for every message that is not the answer to the request the referee
    is waiting for (answers are never limited: a fast bot is welcome). Connections: keepalive pings every
    ``keepalive_s``, closed when one is not answered within ``keepalive_timeout_s``, or after ``idle_connection_s``
    without a call (also one that never spoke HTTP/2); a stream must Join within ``join_timeout_s``; at most
    ``streams_per_connection`` calls at once on one connection (HTTP/2's limit: more wait on the client's side).
    Beyond ``streams_per_peer`` open bot streams from one peer address, or ``unjoined_streams`` not yet joined in
    all (the local socket's single peer, every local bot, has one more of each per seat), a stream must join within
    ``crowded_join_s``: one with a valid token always gets in, so a flood never locks out a bot that shares its
    address. Refusals (a failed Join, a crowded stream that did not join) are answered at once
    ``failed_joins_burst`` times per peer, then at ``failed_joins_per_second``, in turn: each waits for its slot,
    so a peer that keeps trying gets no more answers however many streams it opens (every stream costs the
    referee's loop far more than its refusal saves).
    Spectators: at most ``max_watchers`` watch at once; with ``watch_token`` set they must send it as metadata
    ``authorization: Bearer TOKEN``; all of them together are sent at most ``watch_messages_per_second`` messages
    (``watch_burst`` at once): a spectator that falls more than ``WATCHER_QUEUE`` events behind is dropped, the
    tables are never slowed down for it.
    """

    max_message_bytes: int = 64 * 1024
    messages_per_second: float = 50.0
    burst: int = 200
    keepalive_s: float = 10.0
    keepalive_timeout_s: float = 5.0
    idle_connection_s: float = 30.0
    join_timeout_s: float = 5.0
    streams_per_peer: int = 32
    crowded_join_s: float = 1.0
    streams_per_connection: int = 100
    unjoined_streams: int = 64
    failed_joins_per_second: float = 2.0
    failed_joins_burst: int = 10
    max_watchers: int = 64
    watch_token: str | None = None
    watch_messages_per_second: float = 200.0
    watch_burst: int = 100
    max_connections: int = 512


class ServerError(RuntimeError):
    """The referee cannot start serving: the address is taken or the TLS material is unusable."""


class TokenBucket:
    """Token bucket: ``rate`` tokens per second on average, ``burst`` at once."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.capacity = float(burst)
        self.tokens = float(burst)
        self.last = time.monotonic()

    def _refill(self) -> None:
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self.last) * self.rate)
        self.last = now

    def take(self, n: int = 1) -> bool:
        """Take ``n`` tokens if there are that many (``n`` at most the burst)."""
        self._refill()
        if self.tokens < n:
            return False
        self.tokens -= n
        return True

    def wait_s(self, n: int = 1) -> float:
        """Seconds until there are ``n`` tokens (0 if there are now)."""
        self._refill()
        return max(0.0, (n - self.tokens) / self.rate)


class _Pacer:
    """Messages to spectators, paced for all of them together: first come, first served, never faster than the
    bucket allows. A spectator waiting for its turn costs nothing, and one that is behind takes its turn for
    several messages at once (each turn costs the loop a few wake-ups)."""

    def __init__(self, rate: float, burst: int) -> None:
        self.bucket = TokenBucket(rate, max(1, burst))
        self.batch = max(1, burst // 4)  # the most messages one turn sends
        self.lock = asyncio.Lock()

    async def turn(self, n: int = 1) -> None:
        """Wait until ``n`` more messages may be sent (at most ``batch``)."""
        n = min(n, self.batch)
        if not self.lock.locked() and self.bucket.take(n):
            return
        async with self.lock:  # one waiter sleeps at a time; the others queue behind it, asleep
            while not self.bucket.take(n):
                await asyncio.sleep(self.bucket.wait_s(n))


def peer_host(peer: str) -> str:
    """The address part of a gRPC peer (``ipv4:1.2.3.4:5678`` -> ``ipv4:1.2.3.4``; every Unix peer is ``unix``)."""
    if peer.startswith("unix"):
        return "unix"
    host, _, _port = peer.rpartition(":")
    return host or peer


class PeerGuard:
    """Counts what each peer holds open and how often it failed to join, to refuse floods before they cost."""

    def __init__(self, limits: ServerLimits, seats: Callable[[], int] = lambda: 0) -> None:
        self.limits = limits
        self.seats = seats
        self.streams: dict[str, int] = {}
        self.unjoined = 0
        self.refusals: dict[str, float] = {}  # per peer: when its next refusal is due (a virtual schedule)

    def open(self, host: str) -> str | None:
        """Count a new stream; if it is over a limit, why (it must then join at once). On the local socket every
        bot process is the one peer ``unix`` (one process per seat: a 6-handed duplicate match has 36), so there
        each seat adds one."""
        extra = self.seats() if host == "unix" else 0
        crowded = None
        if self.streams.get(host, 0) >= self.limits.streams_per_peer + extra:
            crowded = f"more than {self.limits.streams_per_peer + extra} open streams from {host}"
        elif self.unjoined >= self.limits.unjoined_streams + extra:
            crowded = f"more than {self.limits.unjoined_streams + extra} streams are waiting to join"
        self.streams[host] = self.streams.get(host, 0) + 1
        self.unjoined += 1
        return crowded

    def joined(self) -> None:
        self.unjoined -= 1

    def close(self, host: str, joined: bool) -> None:
        if not joined:
            self.unjoined -= 1
        left = self.streams.get(host, 1) - 1
        if left:
            self.streams[host] = left
        else:
            self.streams.pop(host, None)

    def refused(self, host: str) -> float:
        """Count a refusal for ``host`` (a failed Join, a stream over a limit); how long to wait before sending it:
        none for the first ``failed_joins_burst``, then one slot every 1/``failed_joins_per_second`` seconds, in
        the order they came (the generic cell rate algorithm)."""
        now = time.monotonic()
        interval = 1.0 / self.limits.failed_joins_per_second
        due = max(self.refusals.get(host, now), now) + interval
        self.refusals[host] = due
        if len(self.refusals) > 10_000:  # forget the peers that are quiet again rather than grow without bound
            self.refusals = {h: t for h, t in self.refusals.items() if t > now}
        return max(0.0, due - now - self.limits.failed_joins_burst * interval)


@dataclass(slots=True)
class MatchEntry:
    """A match this referee runs, for the spectator service; ``history`` keeps its last ``HISTORY_KEPT`` events,
    each serialized once, or, for a hand finished while nobody watched, the means to serialize it when someone asks
    for the match from the start (a match nobody watches costs nothing to publish)."""

    match: Match
    spec: MatchSpec
    seats: list[RemoteSeat]
    status: int = arena_pb2.MATCH_STATUS_PENDING
    created: float = field(default_factory=time.time)
    watchers: list[asyncio.Queue[bytes | None]] = field(default_factory=list)
    history: deque[bytes | Callable[[], bytes]] = field(default_factory=lambda: deque(maxlen=HISTORY_KEPT))

    def events(self) -> list[bytes]:
        """The events kept, serialized, oldest first."""
        return [event if isinstance(event, bytes) else event() for event in list(self.history)]


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
                    violations=p.violations, connected=match.connected(i),
                )
                for i, p in enumerate(match.participants)
            ],
            config=convert.table_config(entry.spec.config, len(match.participants), entry.spec.starting_stack),
            created_unix_ms=int(entry.created * 1000),
        )

    def publish(self, entry: MatchEntry, event: arena_pb2.MatchEvent) -> None:
        """Serialize the event once and queue it for every watcher (never waiting for one)."""
        data = event.SerializeToString()
        entry.history.append(data)
        for queue in list(entry.watchers):
            if queue.qsize() > WATCHER_QUEUE:  # a watcher that does not read is dropped, never waited for
                entry.watchers.remove(queue)
                queue.put_nowait(None)
            else:
                queue.put_nowait(data)

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
        if not entry.watchers:
            entry.history.append(lambda: self.summary(record).SerializeToString())
            return
        self.directory.publish(entry, self.summary(record))

    def summary(self, record: HandRecord) -> arena_pb2.MatchEvent:
        """The public summary of a finished hand."""
        parts = hand_end_parts(record)  # shared with the HandEnds the bots get next
        event = arena_pb2.MatchEvent(match_id=self.match_id)
        summary = event.hand_finished
        summary.SetInParent()
        summary.table_id = record.table_id
        summary.hand_id = record.hand_id
        summary.hand_number = convert.wire_hand_number(record.hand_number)
        summary.button = record.button
        summary.board.extend(parts.board)
        summary.shown.extend(parts.shown)
        summary.payoffs.extend(parts.payoffs)
        summary.history.extend(parts.history)
        summary.seat_names.extend(record.names)
        return event


class Endpoint(Protocol):
    """What a joined stream is attached to: a match's seat (``RemoteSeat``, by its token) or a league member (by
    its API key, arena.league), which hosts seats of many matches on the one stream."""

    name: str

    @property
    def session(self) -> BotSession | None: ...

    def attach(self, conn: Connection, join: bot_pb2.Join) -> None: ...

    def detach(self, conn: Connection) -> None: ...


Resolver = Callable[[str], Endpoint | None]  # a Join's token (or key) -> what it joins, None if it is not valid


@dataclass(slots=True)
class _Stream:
    """What the servicer knows of one Play call."""

    joined: bool = False


class BotServicer:
    """The bot stream: Join, then Actions; misbehaviour is answered, never fatal to the referee. Messages go out
    as bytes: requests are built serialized (``RequestBuilder.serialized``) and batches packed as bytes."""

    def __init__(self, seats: dict[str, RemoteSeat], limits: ServerLimits, keys: Resolver | None = None) -> None:
        self.seats = seats
        self.limits = limits
        self.keys = keys
        self.guard = PeerGuard(limits, lambda: len(seats))

    def _lookup(self, token: str) -> Endpoint | None:
        seat = self.seats.get(token)
        if seat is None and self.keys is not None:
            return self.keys(token)
        return seat

    def handler(self) -> grpc.GenericRpcHandler[Any, Any]:
        """BotService.Play, reading BotMessages and sending bytes as they are."""
        service = bot_pb2.DESCRIPTOR.services_by_name["BotService"].full_name
        return grpc.method_handlers_generic_handler(service, {
            "Play": grpc.stream_stream_rpc_method_handler(
                self.Play, request_deserializer=bot_pb2.BotMessage.FromString, response_serializer=bytes),
        })

    async def Play(self, request_iterator: AsyncIterator[bot_pb2.BotMessage], context: Context) -> AsyncIterator[bytes]:
        peer = context.peer()
        host = peer_host(peer)
        crowded = self.guard.open(host)
        stream = _Stream()
        try:
            async for message in self._play(request_iterator, context, peer, host, crowded, stream):
                yield _wire(message)
        finally:
            self.guard.close(host, stream.joined)

    async def _play(
        self, request_iterator: AsyncIterator[bot_pb2.BotMessage], context: Context, peer: str, host: str,
        crowded: str | None, stream: _Stream,
    ) -> AsyncIterator[Outgoing]:
        timeout = self.limits.join_timeout_s if crowded is None else self.limits.crowded_join_s
        try:
            first = await asyncio.wait_for(anext(request_iterator), timeout)
        except (StopAsyncIteration, asyncio.CancelledError):
            return
        except TimeoutError:
            if crowded is not None:  # part of a flood: refused in turn (the waiting streams are bounded by
                delay = self.guard.refused(host)  # ``streams_per_connection`` on each connection)
                if delay:
                    await asyncio.sleep(delay)
                await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, f"{crowded}, and no Join: stream refused")
                return
            text = f"no Join within {timeout:g} s of opening the stream"
            yield error_message(bot_pb2.ERROR_CODE_OUT_OF_ORDER, text, fatal=True)
            await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, text)
            return
        except Exception as exc:  # bytes that are not a BotMessage: answered as after the Join
            log.info("bot stream from %s sent an unreadable first message: %r", peer, exc)
            text = "the first message could not be read as a BotMessage (not protobuf?): stream closed"
            delay = self.guard.refused(host)  # a failed Join like any other
            if delay:
                await asyncio.sleep(delay)
            yield error_message(bot_pb2.ERROR_CODE_MALFORMED, text, fatal=True)
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, text)
            return
        refusal, seat = self._check_join(first)
        if refusal is not None or seat is None:
            assert refusal is not None
            code, status, text = refusal
            delay = self.guard.refused(host)
            if delay:
                await asyncio.sleep(delay)  # a peer that keeps failing is answered slowly, in turn
            yield error_message(code, text, fatal=True)
            await context.abort(status, text)
            return
        conn = Connection(peer)
        stream.joined = True
        self.guard.joined()
        seat.attach(conn, first.join)
        session = seat.session
        if session is None or session.conn is not conn:  # refused by what it joins (a league: a frozen ladder),
            async for message in _outgoing(conn):  # which queued why on the stream and closed it
                yield message
        else:
            log.info("%s joined as %s (%s %s) from %s", seat.name, convert.printable(first.join.bot_name),
                     convert.printable(first.join.language), convert.printable(first.join.bot_version), peer)
            reader = asyncio.create_task(self._read(request_iterator, seat, session))
            try:
                async for message in _outgoing(conn):
                    yield message
            finally:
                reader.cancel()
                seat.detach(conn)
        if conn.closing is not None:
            await context.abort(getattr(grpc.StatusCode, conn.closing.code), conn.closing.details)

    def _check_join(
        self, first: bot_pb2.BotMessage
    ) -> tuple[tuple[bot_pb2.ErrorCode.ValueType, grpc.StatusCode, str] | None, Endpoint | None]:
        """Why a first message cannot seat a bot (and None), or None and what it joins."""
        if first.WhichOneof("msg") != "join":
            return (bot_pb2.ERROR_CODE_OUT_OF_ORDER, grpc.StatusCode.FAILED_PRECONDITION,
                    "the first message on the stream must be a Join"), None
        join = first.join
        if join.protocol_version != convert.PROTOCOL_VERSION:
            return (bot_pb2.ERROR_CODE_UNSUPPORTED_PROTOCOL_VERSION, grpc.StatusCode.FAILED_PRECONDITION,
                    f"protocol version {join.protocol_version} is not supported; this referee speaks "
                    f"{convert.PROTOCOL_VERSION}"), None
        seat = self._lookup(join.token)
        if seat is None:
            text = ("unknown token: no seat of any match here has it" if self.keys is None else
                    "unknown, revoked or replaced API key: no bot of this league has it (arena bots rotate NAME "
                    "issues a new one)")
            return (bot_pb2.ERROR_CODE_BAD_TOKEN, grpc.StatusCode.UNAUTHENTICATED, text), None
        return None, seat

    async def _read(self, requests: AsyncIterator[bot_pb2.BotMessage], seat: Endpoint, session: BotSession,
                    ) -> None:
        """Everything after the Join: Actions go to the stream's session (while it is the seat's); anything else
        gets an Error."""
        conn = session.conn
        bucket = TokenBucket(self.limits.messages_per_second, self.limits.burst)
        try:
            async for message in requests:
                kind = message.WhichOneof("msg")
                # Answers to open requests are always welcome, however fast the bot is; the limit is for the rest
                if kind == "action":
                    answer = session.answers(message.action)
                elif kind == "actions":
                    actions = message.actions.actions
                    answer = len(actions) > 0 and all(session.answers(a) for a in actions) and \
                        len({a.request_id for a in actions}) == len(actions)
                else:
                    answer = False
                if not answer and not bucket.take():
                    conn.send(error_message(
                        bot_pb2.ERROR_CODE_RATE_LIMITED,
                        f"more than {self.limits.messages_per_second:g} messages per second: stream closed; "
                        "reconnect with your token to play on", fatal=True,
                    ))
                    conn.close("RESOURCE_EXHAUSTED", "rate limit exceeded")
                    return
                if kind == "action":
                    if seat.session is session:
                        session.deliver(message.action)
                elif kind == "actions":
                    for action in message.actions.actions:
                        if seat.session is session:
                            session.deliver(action)
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


def _wire(message: Outgoing) -> bytes:
    return message if isinstance(message, bytes) else message.SerializeToString()


async def _outgoing(conn: Connection) -> AsyncIterator[bytes]:
    """The messages queued for a stream, serialized, in order, until it closes. For a bot that asked for batches,
    everything queued by the time the writer runs goes out as one RefereeBatch (the Welcome always alone, first).
    Each message's callback runs as it is handed to gRPC: an ActionRequest's clock starts then, not when it was
    queued."""
    queue = conn.queue
    first = True
    while True:
        item = await queue.get()
        if item is None:
            return
        if conn.batches and not first:
            await asyncio.sleep(0)  # one turn of the loop: the tables that are ready add their messages first
        if first or not conn.batches or queue.empty():
            first = False
            message, on_sent = item
            data = _wire(message)
            if on_sent is not None:
                on_sent()
            yield data
            continue
        items = [item]
        ended = False
        while not queue.empty():
            more = queue.get_nowait()
            if more is None:
                ended = True
                break
            items.append(more)
        for chunk in _chunks([(_wire(m), on_sent) for m, on_sent in items]):
            batch = convert.batch_bytes([data for data, _ in chunk]) if len(chunk) > 1 else chunk[0][0]
            for _, on_sent in chunk:
                if on_sent is not None:
                    on_sent()
            yield batch
        if ended:
            return


_Wired = tuple[bytes, Callable[[], None] | None]  # a serialized message and its callback


def _chunks(items: list[_Wired]) -> list[list[_Wired]]:
    """Messages in order, cut into batches of at most ``BATCH_BYTES`` (a lone bigger message is a batch of its
    own): every gRPC library reads 4 MiB messages by default."""
    chunks: list[list[_Wired]] = [[]]
    size = 0
    for item in items:
        if chunks[-1] and size + len(item[0]) > BATCH_BYTES:
            chunks.append([])
            size = 0
        chunks[-1].append(item)
        size += len(item[0])
    return chunks


class ArenaServicer:
    """Read-only service for people and tools: list matches, read one, watch its hands as they finish."""

    def __init__(self, directory: MatchDirectory, limits: ServerLimits) -> None:
        self.directory = directory
        self.limits = limits
        self.watching = 0
        self.pacer = _Pacer(limits.watch_messages_per_second, limits.watch_burst)

    async def _authorized(self, context: Context) -> None:
        token = self.limits.watch_token
        if token is None:
            return
        sent = dict(context.invocation_metadata() or ()).get("authorization", "")
        if sent != f"Bearer {token}":
            await context.abort(grpc.StatusCode.UNAUTHENTICATED,
                                "this referee's spectator service needs metadata 'authorization: Bearer TOKEN'")

    async def ListMatches(
        self, request: arena_pb2.ListMatchesRequest, context: Context
    ) -> arena_pb2.ListMatchesResponse:
        await self._authorized(context)
        entries = sorted(self.directory.matches.values(), key=lambda e: e.created)
        if request.status:
            entries = [e for e in entries if e.status == request.status]
        return arena_pb2.ListMatchesResponse(matches=[self.directory.info(e) for e in entries])

    async def GetMatch(
        self, request: arena_pb2.GetMatchRequest, context: Context
    ) -> arena_pb2.MatchInfo:
        await self._authorized(context)
        entry = self.directory.matches.get(request.match_id)
        if entry is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no match {request.match_id!r}")
        assert entry is not None
        return self.directory.info(entry)

    async def WatchMatch(self, request: arena_pb2.WatchMatchRequest, context: Context) -> AsyncIterator[bytes]:
        """The match's events, already serialized (see ``handler``)."""
        await self._authorized(context)
        entry = self.directory.matches.get(request.match_id)
        if entry is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no match {request.match_id!r}")
            return
        if self.watching >= self.limits.max_watchers:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                                f"{self.limits.max_watchers} spectators are watching already; try again later")
            return
        self.watching += 1
        turn = self.pacer.turn
        try:
            await turn()
            yield arena_pb2.MatchEvent(match_id=request.match_id, info=self.directory.info(entry)).SerializeToString()
            if request.from_start:
                for event in list(entry.history):  # serialized one at a time, as their turn comes
                    await turn()
                    yield event if isinstance(event, bytes) else event()
            if entry.status in (arena_pb2.MATCH_STATUS_FINISHED, arena_pb2.MATCH_STATUS_ABORTED):
                return
            queue: asyncio.Queue[bytes | None] = asyncio.Queue()
            entry.watchers.append(queue)
            batch = self.pacer.batch
            try:
                while True:
                    await turn()  # first the turn, then the event: a spectator waiting for its turn is not woken
                    items = [await queue.get()]  # by every event published meanwhile
                    while len(items) < batch and not queue.empty():  # behind: the rest of the turn at once
                        items.append(queue.get_nowait())
                    if len(items) > 1:
                        await turn(len(items) - 1)
                    for item in items:
                        if item is None:
                            return
                        yield item
            finally:
                if queue in entry.watchers:
                    entry.watchers.remove(queue)
        finally:
            self.watching -= 1

    def handler(self) -> grpc.GenericRpcHandler[Any, Any]:
        """The service's handlers; WatchMatch sends bytes as they are (each event is serialized once, for all)."""
        service = arena_pb2.DESCRIPTOR.services_by_name["ArenaService"].full_name
        return grpc.method_handlers_generic_handler(service, {
            "ListMatches": grpc.unary_unary_rpc_method_handler(
                self.ListMatches, request_deserializer=arena_pb2.ListMatchesRequest.FromString,
                response_serializer=arena_pb2.ListMatchesResponse.SerializeToString),
            "GetMatch": grpc.unary_unary_rpc_method_handler(
                self.GetMatch, request_deserializer=arena_pb2.GetMatchRequest.FromString,
                response_serializer=arena_pb2.MatchInfo.SerializeToString),
            "WatchMatch": grpc.unary_stream_rpc_method_handler(
                self.WatchMatch, request_deserializer=arena_pb2.WatchMatchRequest.FromString,
                response_serializer=bytes),
        })


def port_is_free(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be listened on (taken, not an address of this machine), or None."""
    if port == 0:
        return None
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        # as gRPC binds: a port whose last connections linger in TIME_WAIT (a host restarted at once) is free
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host.strip("[]"), port))
        except OSError as exc:
            return exc.strerror or str(exc)
    return None


def reachable_addresses(host: str, port: int) -> list[str]:
    """``host:port`` as remote bots can reach it: for a wildcard host, this machine's own addresses."""
    if host not in ("0.0.0.0", "::", "[::]", ""):
        return [f"{host}:{port}"]
    found: list[str] = []
    try:
        infos = socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)
    except OSError:
        infos = []
    for info in infos:
        address = str(info[4][0])
        if address not in found and not address.startswith("127."):
            found.append(address)
    return [f"{a}:{port}" for a in [*found, "127.0.0.1"]]


def raise_open_files_limit() -> int:
    """Raise this process's soft limit on open files to the hard limit (a referee holds a socket per connection)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 65536)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            return target
        except (ValueError, OSError):
            return soft
    return soft


class RefereeServer:
    """One referee process serving any number of matches.

    ``tcp``: listen on ``host:port`` (port 0 picks a free one) for remote bots and spectators. ``local``: also (or
    only) listen on a Unix-domain socket in a private folder, for the local bots the runner starts, which reach
    nothing else; spectators are never served there.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        tls: tuple[bytes, bytes] | None = None,
        limits: ServerLimits | None = None,
        *,
        tcp: bool = True,
        local: bool = False,
    ) -> None:
        self.host = host
        self.requested_port = port
        self.tls = tls
        self.limits = limits or ServerLimits()
        self.tcp = tcp
        self.local = local
        self.seats: dict[str, RemoteSeat] = {}
        self.keys: Resolver | None = None  # a league host's: API keys -> members (set before ``start``)
        # more services for the TCP server (a league's admin service): each adds itself, returns its full name
        self.services: list[Callable[[grpc.aio.Server], str]] = []
        self.directory = MatchDirectory()
        self.port = 0
        self.socket_path: Path | None = None
        self._socket_dir: Path | None = None
        self._servers: list[grpc.aio.Server] = []

    @property
    def address(self) -> str:
        """``host:port`` that remote bots and spectators connect to."""
        return f"{self.host}:{self.port}"

    @property
    def local_address(self) -> str:
        """The gRPC address of the Unix-domain socket for local bots (``unix:/path``)."""
        if self.socket_path is None:
            raise RuntimeError("this referee does not serve local bots")
        return f"unix:{self.socket_path}"

    def _options(self) -> list[tuple[str, Any]]:
        limits = self.limits
        return [
            ("grpc.max_receive_message_length", limits.max_message_bytes),
            ("grpc.max_send_message_length", 16 * 1024 * 1024),
            ("grpc.so_reuseport", 0),
            ("grpc.keepalive_time_ms", int(limits.keepalive_s * 1000)),
            ("grpc.keepalive_timeout_ms", int(limits.keepalive_timeout_s * 1000)),
            # What closes a connection whose pings go unanswered (gRPC 1.85 waits for it, a minute by default,
            # whatever the keepalive timeout says: a silently cut connection would hold its seat that long)
            ("grpc.http2.ping_timeout_ms", int(limits.keepalive_timeout_s * 1000)),
            ("grpc.keepalive_permit_without_calls", 1),
            ("grpc.http2.min_ping_interval_without_data_ms", 5000),
            ("grpc.http2.max_ping_strikes", 2),
            ("grpc.max_connection_idle_ms", int(limits.idle_connection_s * 1000)),
            ("grpc.max_allowed_incoming_connections", limits.max_connections),
            ("grpc.max_concurrent_streams", limits.streams_per_connection),
        ]

    async def _server(self, spectators: bool) -> grpc.aio.Server:
        server = grpc.aio.server(options=self._options())
        server.add_generic_rpc_handlers((BotServicer(self.seats, self.limits, self.keys).handler(),))
        names = [bot_pb2.DESCRIPTOR.services_by_name["BotService"].full_name]
        if spectators:
            server.add_generic_rpc_handlers((ArenaServicer(self.directory, self.limits).handler(),))
            names.append(arena_pb2.DESCRIPTOR.services_by_name["ArenaService"].full_name)
            names += [add(server) for add in self.services]
        health_servicer = health.aio.HealthServicer()  # type: ignore[attr-defined]
        health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
        for name in [*names, ""]:
            await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
        names += [health_pb2.DESCRIPTOR.services_by_name["Health"].full_name, reflection.SERVICE_NAME]
        reflection.enable_server_reflection(names, server)
        return server

    async def start(self) -> int:
        """Bind and start serving; returns the TCP port (0 when only the local socket is served)."""
        raise_open_files_limit()
        if self.local:
            self._socket_dir = Path(tempfile.mkdtemp(prefix="arena-referee-"))
            self._socket_dir.chmod(0o700)
            self.socket_path = self._socket_dir / "referee.sock"
            server = await self._server(spectators=False)
            server.add_insecure_port(f"unix:{self.socket_path}")
            await server.start()
            os.chmod(self.socket_path, 0o666)  # reachable by the bots' uids, only through the sandbox's bind
            self._servers.append(server)
        if self.tcp:
            target = f"{self.host}:{self.requested_port}"
            free = port_is_free(self.host, self.requested_port)
            if free is not None:  # found before gRPC tries, so that its own log line does not come first
                await self.stop(0)
                raise ServerError(f"cannot listen on {target}: {free}")
            server = await self._server(spectators=True)
            try:
                if self.tls is not None:
                    key, cert = self.tls
                    self.port = server.add_secure_port(target, grpc.ssl_server_credentials([(key, cert)]))
                else:
                    self.port = server.add_insecure_port(target)
                await server.start()
            except RuntimeError as exc:
                await self.stop(0)
                reason = "port in use, or a bad TLS key/certificate?"
                raise ServerError(f"cannot listen on {target} ({reason}): {exc}") from None
            self._servers.append(server)
        return self.port

    def add_seat(self, seat: RemoteSeat) -> None:
        """Make a seat joinable with its token."""
        if seat.token in self.seats:
            raise ValueError("duplicate token")
        self.seats[seat.token] = seat

    def remove_seat(self, seat: RemoteSeat) -> None:
        """Forget a seat's token (its bot process is gone for good)."""
        self.seats.pop(seat.token, None)

    def add_match(self, match: Match, seats: list[RemoteSeat]) -> MatchEntry:
        """List a match on the spectator service (its hands are published if its sinks include ``sink``)."""
        return self.directory.add(match, seats)

    async def stop(self, grace_s: float = 1.0) -> None:
        """Stop serving, giving streams ``grace_s`` to finish; remove the local socket."""
        servers, self._servers = self._servers, []
        await asyncio.gather(*(server.stop(grace_s) for server in servers))
        if self._socket_dir is not None:
            shutil.rmtree(self._socket_dir, ignore_errors=True)
            self._socket_dir = None
