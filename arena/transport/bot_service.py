"""The bot service (``BotService.Play``): a stream joins with a token (or a league's key), which names its
``Endpoint``; then its Actions go to its session and the referee's messages go out as bytes, packed into batches
for bots that ask for them.

Every way a bot can misbehave on the wire ends in a clear Error message and, when fatal, a gRPC status; none of
them reaches the referee's tables, which only ever see seats that answer, or don't, within their clock.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import grpc

from arena.text import TextLimitError, check_length
from arena.transport import convert, wire
from arena.transport.connections import Claims
from arena.transport.endpoint import Endpoint
from arena.transport.limits import PeerGuard, ServerLimits, TokenBucket, peer_host
from arena.transport.session import BotSession, Connection, Outgoing, error_message
from arena_sdk.pb import bot_pb2

log = logging.getLogger("arena.transport")

Context = grpc.aio.ServicerContext[Any, Any]

Resolver = Callable[[str], Endpoint | None]  # a Join's token (or key) -> what it joins, None if it is not valid


@dataclass(slots=True)
class _Stream:
    """What the servicer knows of one Play call."""

    joined: bool = False


class BotServicer:
    """The bot stream: Join, then Actions; misbehaviour is answered, never fatal to the referee. Messages go out
    as bytes: requests are built serialized (``RequestBuilder.serialized``) and batches packed as bytes."""

    def __init__(self, tokens: dict[str, Endpoint], limits: ServerLimits, keys: Resolver | None = None,
                 guard: PeerGuard | None = None, claims: Claims | None = None) -> None:
        self.tokens = tokens
        self.limits = limits
        self.keys = keys
        self.guard = guard or PeerGuard(limits, lambda: len(tokens))
        self.claims = claims or Claims()  # the connections that carry a joined stream, for the warden

    def _lookup(self, token: str) -> Endpoint | None:
        endpoint = self.tokens.get(token)
        if endpoint is None and self.keys is not None:
            return self.keys(token)
        return endpoint

    def handler(self) -> grpc.GenericRpcHandler[Any, Any]:
        """BotService.Play, reading BotMessages and sending bytes as they are."""
        service = bot_pb2.DESCRIPTOR.services_by_name["BotService"].full_name
        return grpc.method_handlers_generic_handler(service, {
            "Play": grpc.stream_stream_rpc_method_handler(
                self.Play, request_deserializer=bot_pb2.BotMessage.FromString, response_serializer=bytes),
        })

    async def Play(self, request_iterator: AsyncIterator[bot_pb2.BotMessage], context: Context,
                   ) -> AsyncGenerator[bytes, None]:
        peer = context.peer()
        host = peer_host(peer)
        crowded = self.guard.open(host)
        stream = _Stream()
        try:
            async for message in self._play(request_iterator, context, peer, host, crowded, stream):
                yield wire.serialized(message)
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
                await self.guard.refusal_turn(host)  # ``streams_per_connection`` on each connection)
                await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, f"{crowded}, and no Join: stream refused")
                return
            text = f"no Join within {timeout:g} s of opening the stream"
            yield error_message(bot_pb2.ERROR_CODE_OUT_OF_ORDER, text, fatal=True)
            await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, text)
            return
        except Exception as exc:  # bytes that are not a BotMessage: answered as after the Join
            log.info("bot stream from %s sent an unreadable first message: %r", peer, exc)
            text = "the first message could not be read as a BotMessage (not protobuf?): stream closed"
            await self.guard.refusal_turn(host)  # a failed Join like any other
            yield error_message(bot_pb2.ERROR_CODE_MALFORMED, text, fatal=True)
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, text)
            return
        refusal, endpoint = self._check_join(first)
        if refusal is not None or endpoint is None:
            assert refusal is not None
            code, status, text = refusal
            await self.guard.refusal_turn(host)  # a peer that keeps failing is answered slowly, in turn
            yield error_message(code, text, fatal=True)
            await context.abort(status, text)
            return
        conn = Connection(peer)
        stream.joined = True
        self.guard.joined()
        endpoint.attach(conn, first.join)
        session = endpoint.session
        if session is None or session.conn is not conn:  # refused by what it joins (a league: a frozen ladder),
            async for message in _outgoing(conn):  # which queued why on the stream and closed it (or a match
                yield message  # that is over: its Welcome, then the end)
        else:
            log.info("%s joined as %s (%s %s) from %s", endpoint.name, convert.printable(first.join.bot_name),
                     convert.printable(first.join.language), convert.printable(first.join.bot_version), peer)
            reader = StreamReader(endpoint, session, self.limits)
            direct = request_iterator if isinstance(request_iterator, DirectMessages) else None
            if direct is not None:
                direct.direct(reader)
            else:
                reading = asyncio.create_task(self._read(request_iterator, reader))
            self.claims.hold(peer)
            try:
                if direct is not None:
                    await direct.write_from(conn)
                else:
                    async for message in _outgoing(conn):
                        yield message
            finally:
                self.claims.release(peer)
                if direct is not None:
                    direct.direct(None)
                else:
                    reading.cancel()
                endpoint.detach(conn)
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
        too_long = join_text_refusal(join)
        if too_long is not None:
            return (bot_pb2.ERROR_CODE_MALFORMED, grpc.StatusCode.INVALID_ARGUMENT, too_long), None
        endpoint = self._lookup(join.token)
        if endpoint is None:
            text = ("unknown token: no seat of any match here has it" if self.keys is None else
                    "unknown, revoked or replaced API key: no bot of this league has it (arena bots rotate NAME "
                    "issues a new one)")
            return (bot_pb2.ERROR_CODE_BAD_TOKEN, grpc.StatusCode.UNAUTHENTICATED, text), None
        return None, endpoint

    async def _read(self, requests: AsyncIterator[bot_pb2.BotMessage], reader: StreamReader) -> None:
        """Everything after the Join, read from the stream's iterator (grpc.aio's) into ``reader``."""
        try:
            async for message in requests:
                if not reader.handle(message):
                    return
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # bytes that are not a BotMessage, or a message over the size limit
            reader.broke(exc)
            return
        reader.ended()


class StreamReader:
    """Everything a joined stream sends after its Join: Actions go to the stream's session (while it is its
    endpoint's newest); anything else gets an Error. ``handle`` takes each message as it is read, synchronously:
    from grpc.aio's iterator (``BotServicer._read``) or straight from the C++ server's events
    (``arena.transport.native_server``), with no task of its own."""

    def __init__(self, endpoint: Endpoint, session: BotSession, limits: ServerLimits) -> None:
        self.endpoint = endpoint
        self.session = session
        self.conn = session.conn
        self.limits = limits
        self.bucket = TokenBucket(limits.messages_per_second, limits.burst)

    def handle(self, message: bot_pb2.BotMessage) -> bool:
        """Act on one message; False once the stream is closed (nothing more it sends is read)."""
        endpoint, session, conn = self.endpoint, self.session, self.conn
        kind = message.WhichOneof("msg")
        if kind == "action" or kind == "actions":
            # Answers to open requests are always welcome, however fast the bot is; the limit is for the rest:
            # each Action that answers no open request (none is open by its ids, or it was answered already) takes
            # a token as it is read, and so does an empty batch; a stream out of tokens is closed there, the rest
            # of its batch unread (one token never buys a batch of strays). Nothing is delivered from a stream that
            # is no longer its endpoint's newest (the newer one failed every request open on this one): none of its
            # Actions answers anything
            actions = (message.action,) if kind == "action" else message.actions.actions
            if not actions and not self._take():
                return False
            for action in actions:
                if not (endpoint.session is session and session.deliver(action)) and not self._take():
                    return False
            return True
        if not self._take():
            return False
        if kind == "join":
            conn.send(error_message(bot_pb2.ERROR_CODE_OUT_OF_ORDER, "already joined: Join only once"))
        else:
            conn.send(error_message(
                bot_pb2.ERROR_CODE_MALFORMED,
                "a message with neither join nor action (an unknown message type?) was ignored",
            ))
        return True

    def broke(self, error: BaseException) -> None:
        """The stream sent bytes that are not a BotMessage, or a message over the size limit: it is closed."""
        log.info("stream of %s broke: %r", self.endpoint.name, error)
        text = (f"a message could not be read as a BotMessage (not protobuf, or over "
                f"{self.limits.max_message_bytes} bytes): stream closed; reconnect with your token to play on")
        self.conn.send(error_message(bot_pb2.ERROR_CODE_MALFORMED, text, fatal=True))
        self.conn.close("INVALID_ARGUMENT", text)

    def ended(self) -> None:
        """The bot ended its side of the stream: the referee ends its own."""
        self.conn.close()

    def _take(self) -> bool:
        """A token for a message, or an Action, that answers no open request; without one the stream is closed
        (False)."""
        if self.bucket.take():
            return True
        self.conn.send(error_message(
            bot_pb2.ERROR_CODE_RATE_LIMITED,
            f"more than {self.limits.messages_per_second:g} messages per second: stream closed; "
            "reconnect with your token to play on", fatal=True,
        ))
        self.conn.close("RESOURCE_EXHAUSTED", "rate limit exceeded")
        return False


@runtime_checkable
class DirectMessages(Protocol):
    """A call that, after the Join, hands each message to a ``StreamReader`` as it arrives instead of being
    iterated (``direct``; None stops it), and writes what its connection queues as it is queued instead of
    through ``_outgoing`` (``write_from``, until the connection closes): the C++ server's
    (``arena.transport.native_server.NativeCall``)."""

    def direct(self, reader: StreamReader | None) -> None: ...

    async def write_from(self, conn: Connection) -> None: ...


JOIN_TEXT = (("bot_name", "name"), ("bot_version", "version"), ("language", "language"))  # field, its cap


def join_text_refusal(join: bot_pb2.Join) -> str | None:
    """Why a Join's words about the bot break their caps (``arena.text``: the same as on the command line and in
    TOML), naming the field and the limit; None when they keep within them."""
    for field, cap in JOIN_TEXT:
        try:
            check_length(getattr(join, field), cap, f"Join.{field}")
        except TextLimitError as exc:
            return f"{exc}; the Join is refused and the stream closed (the caps: proto/README.md, Join)"
    return None


async def _outgoing(conn: Connection) -> AsyncIterator[bytes]:
    """The messages queued for a stream, serialized, in order, until it closes (``writes``); a stream that serves
    several tables lets the loop turn once before it takes them, for the others' messages."""
    first = True
    while await conn.wait():
        if conn.batches and conn.gathers and not first:
            # one turn of the loop: the other tables that are ready add their messages first (at one table there
            # are none, and the turn only delayed each request: 4% of a one-table match's time)
            await asyncio.sleep(0)
        for data in writes(conn, first):
            yield data
        first = False


def writes(conn: Connection, first: bool) -> Iterator[bytes]:
    """What is queued for a stream now, as the writes that carry it: for a bot that asked for batches, everything
    as one RefereeBatch, one write, except the stream's ``first`` message (the Welcome), always alone; else the
    first message queued. Each message's callback runs as it is handed to gRPC: an ActionRequest's clock starts
    then, not when it was queued."""
    messages, callbacks = conn.take(None if conn.batches and not first else 1)
    done = 0
    for data, count in wire.batches(messages):
        for on_sent in callbacks[done:done + count]:
            if on_sent is not None:
                on_sent()
        done += count
        yield data
