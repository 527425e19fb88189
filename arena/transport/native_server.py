"""The bots' service (BotService.Play) served by gRPC's C++ library from a polling thread of its own
(``_native_server``, a C++ extension built with the package against the system's libgrpc++), for the local bots'
Unix-domain socket.

The C++ thread reads and writes the streams (gRPC's asynchronous API, its completion queue polled by that one thread:
gRPC's callback API took turns between two threads, which woke each other for every message); the referee's loop is
woken once for however many messages arrived (an eventfd), takes them all in one call and hands each to the stream's
``StreamReader`` at once, synchronously: no task, future or grpc.aio completion per message. Everything else is the
grpc.aio service's own code (``BotServicer.Play``: the Join, its checks and refusals, the limits, the writer), driven by
one task per stream through a ``NativeCall``, which looks to it like grpc.aio's request iterator and context. The socket
then serves the bots' service alone: no health or reflection service there (only the runner's own bots reach it; the TCP
port, where people and tools connect, keeps them).


Limits, beside the servicer's own: grpc.aio's channel arguments are passed on, but libgrpc++ 1.51 knows neither
``grpc.max_allowed_incoming_connections`` nor ``grpc.http2.ping_timeout_ms``: connections to this socket are not
capped in number (only the runner's sandboxed bots reach it), and all of them share a memory quota of 256 MiB
(``MEMORY_MOST``). A stream is read at most ``UNTAKEN_MOST`` messages ahead of the loop; before its Join is read at
most ``BEFORE_JOIN_MOST`` are kept; a finished call whose bot does not read its last messages is cancelled after
``FINISH_WAIT_S`` (at once when its writes passed ``MAX_QUEUED``). A bot whose process is frozen with messages
unread holds its call until its connection goes (the cancellation cannot be sent; grpc.aio's server waits the same),
and ``stop`` gives up waiting for it after ``STOP_WAIT_S``.

Why: grpc.aio hands each message through its polling thread and the loop, and a server that only asks gets 5,181
round trips a second from two C++ bots on grpc.aio against 7,457 on this one (``tests/bench/bench_transport.py``;
gRPC's C++ synchronous server 9,241). Alone that changed nothing measurable in a match: the referee's own Python per
decision stayed on the path. What it made possible does: for a bot of one table, the hand's decisions are played on
that thread (hand lanes, ``arena.transport.lanes``), 0.66 of grpc.aio's wall time at one table (paired runs); at
64 tables, where lanes are not used, it is grpc.aio's (1.01). It serves the local socket by default;
``ARENA_BOT_SERVER=grpcio`` serves it with grpc.aio, and the TCP port is always grpc.aio's.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import logging
import threading
from types import ModuleType
from typing import Any, NoReturn

import grpc

from arena import switches
from arena.transport import lanes
from arena.transport.bot_service import BotServicer, StreamReader, writes
from arena.transport.session import MAX_QUEUED, NOT_READING, Connection, Wakeup
from arena_sdk.pb import bot_pb2

log = logging.getLogger("arena.transport")

PLAY = "/arena.v1.BotService/Play"
BEFORE_JOIN_MOST = 64  # messages kept before the Join is read (more are dropped: grpc.aio reads none of them yet)
FINISH_WAIT_S = 5.0  # a call that is finished but not over by then (its bot does not read its last messages) is cut
STOP_WAIT_S = 5.0  # how long ``stop`` waits past its grace for gRPC to end the calls
_ABANDONED: list[Any] = []  # servers whose shutdown never returned: never released (``NativeBotServer.stop``)


@functools.cache
def extension() -> ModuleType | None:
    """The C++ server's module, loaded on first use (it loads libgrpc++ into the process: a referee that serves with
    grpc.aio never does), or None if this installation lacks it."""
    try:
        from arena.transport import _native_server
    except ImportError:  # `make install` builds it (against libgrpc++, which it installs first)
        return None
    global _LANES_READY
    _LANES_READY = lanes.set_action_format(_native_server)
    return _native_server


_LANES_READY = False  # the C++ server can play lanes (the engine's C API was found: ``extension``)


def lanes_selected() -> bool:
    """Whether the C++ server plays hands' decisions in lanes (arena.transport.lanes): ``ARENA_LANES`` is not
    ``off`` (the default is on) and the engine's C API was found."""
    return _LANES_READY and switches.LANES.value() == "on"


def available() -> bool:
    """Whether the C++ server was built with this installation."""
    return extension() is not None


def selected() -> bool:
    """Whether the local socket is to be served by the C++ server: ``ARENA_BOT_SERVER`` says ``native`` (the
    default) and it was built; else grpc.aio serves it, as it does the TCP port."""
    return switches.BOT_SERVER.value() == "native" and available()


class Aborted(Exception):
    """A call ended with a status (``NativeCall.abort``, as grpc.aio's ``context.abort`` raises)."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(details)
        self.code = code
        self.details = details


class NativeCall:
    """One Play call, as ``BotServicer.Play`` sees it: its request iterator (the Join, read through ``__anext__``)
    and its context (``peer``, ``abort``). After the Join the servicer hands the stream's ``StreamReader`` to
    ``direct``, and every message is given to it as it is taken, in the order read."""

    def __init__(self, server: NativeBotServer, stream: int, peer: str) -> None:
        self.server = server
        self.stream = stream
        self._peer = peer
        self._queue: collections.deque[bot_pb2.BotMessage | Exception] = collections.deque()
        self._woken = Wakeup()  # ``__anext__``'s, while it waits for the Join
        self._reads_over = False
        self._reader: StreamReader | None = None
        self._reading = True  # False once the reader closed the stream, or stopped (``direct(None)``)
        self.task: asyncio.Task[None] | None = None
        # the joined stream's writing (``write_from``)
        self.conn: Connection | None = None
        self.first = True  # nothing written yet: the first message (the Welcome) goes alone
        self.marked = False  # in the server's list of calls to write for
        self.waited = False  # a gathering stream's turn of the loop, waited
        self.written: asyncio.Future[None] | None = None  # set once the connection is closed and drained
        self.unread = False  # its bot stopped reading: more than MAX_QUEUED writes waited for it
        self.over = False  # gRPC is done with the call (DONE)
        self.cut: asyncio.TimerHandle | None = None  # ``NativeBotServer._cut``, due once the call is finished
        self.packing = False  # the C++ stream was told whether its bot takes batches (``lanes.Lanes.open``)

    # ------------------------------------------------------------------ what the servicer calls

    def __aiter__(self) -> NativeCall:
        return self

    async def __anext__(self) -> bot_pb2.BotMessage:
        while not self._queue:
            if self._reads_over:
                raise StopAsyncIteration
            await self._woken.wait()
        item = self._queue.popleft()
        if isinstance(item, Exception):
            raise item
        return item

    def peer(self) -> str:
        return self._peer

    async def abort(self, code: grpc.StatusCode, details: str = "") -> NoReturn:
        raise Aborted(code, details)

    def direct(self, reader: StreamReader | None) -> None:
        """From now on give each message to ``reader`` as it arrives (those queued first); None: no more."""
        self._reader = reader
        if reader is None:
            self._reading = False
            return
        while self._queue and self._reading:
            self._give(self._queue.popleft())
        if self._reads_over and self._reading:
            self._reading = False
            reader.ended()

    async def write_from(self, conn: Connection) -> None:
        """Write what ``conn`` queues as it is queued (``NativeBotServer.write``) until it is closed and drained."""
        self.conn = conn
        self.written = asyncio.get_running_loop().create_future()
        conn.on_queued = self._queued
        conn.native = self
        try:
            if conn.queued or conn.closed:
                self._queued()
            await self.written
        finally:
            conn.on_queued = None
            conn.native = None

    def _queued(self) -> None:
        if not self.marked:
            self.server.mark(self)

    # ------------------------------------------------------------------ what the server's events call

    def message(self, data: bytes) -> None:
        """A message read: given to the reader after the Join, kept for ``__anext__`` before it (at most
        ``BEFORE_JOIN_MOST``), dropped unread once the stream's end is known."""
        if not self._reading or (self._reader is None and len(self._queue) >= BEFORE_JOIN_MOST):
            return
        item: bot_pb2.BotMessage | Exception
        try:
            item = bot_pb2.BotMessage.FromString(data)
        except Exception as exc:  # not a BotMessage: the servicer answers it where it would have read it
            item = exc
        if self._reader is not None:
            self._give(item)
            return
        self._queue.append(item)
        self._woken.ring()

    def reads_over(self) -> None:
        """The bot ended its side of the stream (or the call is over)."""
        self._reads_over = True
        reader = self._reader
        if reader is not None:
            if self._reading:
                self._reading = False
                reader.ended()
            return
        self._woken.ring()

    def _give(self, item: bot_pb2.BotMessage | Exception) -> None:
        reader = self._reader
        assert reader is not None
        try:
            if isinstance(item, Exception):
                raise item
            self._reading = reader.handle(item)
        except Exception as exc:  # as grpc.aio's iterator raising in ``BotServicer._read``: the stream is closed
            self._reading = False
            reader.broke(exc)


class NativeBotServer:
    """BotService.Play on ``address`` (``unix:/path``) from gRPC's C++ library, with ``options`` as grpc.aio's
    server gets them (channel arguments), each stream handled by ``servicer``. Other methods get UNIMPLEMENTED."""

    def __init__(self, servicer: BotServicer, address: str, options: list[tuple[str, Any]]) -> None:
        if extension() is None:
            raise RuntimeError("arena.transport._native_server was not built (no libgrpc++ at install time)")
        self.servicer = servicer
        self.address = address
        self.options = [(name, value) for name, value in options if isinstance(value, int | str)]
        self._server: Any = None
        self._calls: dict[int, NativeCall] = {}
        self._stopping = False
        self._marked: list[NativeCall] = []  # calls with messages to write (``mark``)
        self._turn_due = False  # ``_write_turn`` is scheduled
        self.lanes = lanes.Lanes(self) if lanes_selected() else None  # hands' decisions played by the C++ threads
        self._corked = False  # ``cork``
        self._uncork_due = False  # ``uncork_soon``
        self._uncork_waited = False  # ``_uncork_turn`` has waited its first turn
        self._loop: asyncio.AbstractEventLoop | None = None  # the loop it serves in (``start``)

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The loop it serves in (after ``start``)."""
        assert self._loop is not None, "the bots' server was not started"
        return self._loop

    def native(self) -> Any:
        """The C++ server, while it serves (None before ``start`` and after ``stop``)."""
        return self._server

    def cork(self) -> bool:
        """Hold what the loop's thread writes (the requests of lanes it opens, what its tables queued) until
        ``uncork``, then write it with one write per stream (a RefereeBatch where the bot takes them). False if it was
        held already (the caller then leaves the uncorking to whoever corked)."""
        if self._corked or self._server is None:
            return False
        self._corked = True
        self._server.cork()
        return True

    def uncork(self) -> None:
        """Write what was held since ``cork``."""
        if self._corked:
            self._corked = False
            if self._server is not None:
                self._server.uncork()

    def uncork_soon(self) -> None:
        """Write what was held since ``cork`` two turns of the loop from now, with what the loop writes until then,
        as the writer of a bot of several tables waits (``_write_marked``). Where bots of several tables are
        served through lanes (``Lanes.gathering``), every turn's writes are held so: the requests the lanes play, the
        hands' starts, Python's own. Written at once, they went out as 36% more messages to the Python bots at 64
        tables (6,893 against 5,066; 86% more to the C++ bots), who spent 15% more CPU reading them: 64 tables of
        Python bots took 1.048 of the wall time without lanes (five pairs), C++ bots 0.978. Held two turns: 5,085
        messages, 0.991 (five pairs) and 0.952 (five). A request's clock starts as it is held (as for one Python
        writes): the mean think time of 64 tables of C++ bots reads 1.5 ms against 1.2 without lanes."""
        if not self._uncork_due:
            self._uncork_due = True
            self.loop.call_soon(self._uncork_turn)

    def _uncork_turn(self) -> None:
        if not self._uncork_waited:
            self._uncork_waited = True
            self.loop.call_soon(self._uncork_turn)
            return
        self._uncork_waited = False
        self._uncork_due = False
        self.uncork()

    async def start(self) -> None:
        native = extension()
        assert native is not None
        try:
            self._server = native.Server(self.address, PLAY, self.options)
        except RuntimeError as exc:
            raise RuntimeError(f"cannot serve bots on {self.address}: {exc}") from None
        self._loop = asyncio.get_running_loop()  # (asked of asyncio once: it makes a getpid system call each time)
        self._loop.add_reader(self._server.fd, self._events)

    def mark(self, call: NativeCall) -> None:
        """``call``'s connection has messages to write, or closed: written at the loop's next turn (a stream that
        serves several tables, the turn after: the other tables add theirs first, as grpc.aio's writer waits), or
        at the end of the current ``_events`` (``_write_marked``)."""
        call.marked = True
        self._marked.append(call)
        if not self._turn_due:
            self._turn_due = True
            self.loop.call_soon(self._write_turn)

    def _write_turn(self) -> None:
        self._turn_due = False
        self._write_marked(waiting=True)

    def _write_marked(self, waiting: bool) -> None:
        """Write for the calls marked; with ``waiting``, a gathering stream not yet waited for waits one turn."""
        marked, self._marked = self._marked, []
        if marked and self.lanes is not None and self.lanes.gathering and self.cork():
            self.uncork_soon()
        for call in marked:
            conn = call.conn
            if waiting and conn is not None and conn.gathers and not call.waited and not conn.closed:
                call.waited = True
                self._marked.append(call)
                continue
            call.marked = call.waited = False
            self.write(call)
        if self._marked and not self._turn_due:
            self._turn_due = True
            self.loop.call_soon(self._write_turn)

    def write(self, call: NativeCall) -> None:
        """Everything queued on ``call``'s connection, handed to the C++ server; once it is closed and drained, the
        call's ``write_from`` returns."""
        conn = call.conn
        if conn is None or self._server is None:
            return
        while conn.queued:
            for data in writes(conn, call.first):
                call.first = False
                if not self._handed(call, data):
                    conn.take()
                    conn.close(*(("RESOURCE_EXHAUSTED", NOT_READING) if call.unread else ()))
        if conn.closed and call.written is not None and not call.written.done():
            call.written.set_result(None)

    def _handed(self, call: NativeCall, data: bytes) -> bool:
        """Hand ``data`` to the C++ server for ``call``; False when nothing more should go: the call is over, or its
        bot is not reading (``call.unread``: more than ``MAX_QUEUED`` writes wait for it, the bound
        ``Connection.send`` keeps for grpc.aio)."""
        queued: int = self._server.write(call.stream, data)
        if queued > MAX_QUEUED:
            call.unread = True
        return 0 < queued <= MAX_QUEUED

    def _events(self) -> None:
        """Everything the C++ threads queued since the last wake, in order."""
        native = extension()
        assert native is not None
        server = self._server
        corked = self.lanes is not None and self.cork()  # what this turn writes: one write per stream
        try:
            try:
                self._handle(native, server.take())
            finally:
                server.handled()  # (a lane takes nothing from a stream before Python has handled what it sent first)
            if self._marked:  # what the Actions just read made (the next requests): written now, not a turn later
                self._write_marked(waiting=True)
        finally:
            if corked:  # never left held: what the loop writes later would wait for ever
                if self.lanes is not None and self.lanes.gathering:
                    self.uncork_soon()
                else:
                    self.uncork()

    def _handle(self, native: ModuleType, events: list[tuple[int, int, Any]]) -> None:
        calls = self._calls
        for kind, stream, payload in events:
            if kind == native.MESSAGE:
                call = calls.get(stream)
                if call is not None:
                    call.message(payload)
            elif kind == native.OPENED:
                call = calls[stream] = NativeCall(self, stream, payload)
                call.task = asyncio.ensure_future(self._serve(call))
            elif kind == native.READS_ENDED:
                call = calls.get(stream)
                if call is not None:
                    call.reads_over()
            elif kind == native.LANE_ENDED:
                if self.lanes is not None:
                    self.lanes.ended(stream)
            elif kind == native.HAND_DONE:
                if self.lanes is not None:
                    self.lanes.hand_done(stream)
            else:  # DONE: the call is over (finished, cancelled by the bot, or its connection gone)
                call = calls.pop(stream, None)
                if call is not None:
                    call.over = True
                    if call.cut is not None:
                        call.cut.cancel()
                    call.reads_over()
                    if call.task is not None and not call.task.done():
                        call.task.cancel()  # as grpc.aio cancels a handler whose call is over

    async def _serve(self, call: NativeCall) -> None:
        """Run the servicer's Play for ``call``, writing what it yields, then end the call with its status."""
        code, details = grpc.StatusCode.OK, ""
        try:
            async with contextlib.aclosing(self.servicer.Play(call, call)) as messages:  # type: ignore[arg-type]
                async for data in messages:
                    if not self._handed(call, data):
                        if not call.unread:
                            return  # the call is over
                        raise Aborted(grpc.StatusCode.RESOURCE_EXHAUSTED, NOT_READING)
        except Aborted as aborted:
            code, details = aborted.code, aborted.details
        except asyncio.CancelledError:
            return  # the call is over: nothing more can be sent
        except Exception:
            log.exception("the bot stream from %s failed", call.peer())
            code, details = grpc.StatusCode.INTERNAL, "the referee failed serving this stream"
        server = self._server
        if server is None or call.over:
            return
        server.finish(call.stream, code.value[0], details)  # once the writes queued are sent
        if call.unread:  # they never will be
            server.cancel(call.stream)
        else:
            call.cut = asyncio.get_running_loop().call_later(FINISH_WAIT_S, self._cut, call)

    def _cut(self, call: NativeCall) -> None:
        """End a finished call whose bot has not read its last messages in ``FINISH_WAIT_S``."""
        if not call.over and self._server is not None:
            self._server.cancel(call.stream)

    async def stop(self, grace_s: float) -> None:
        """Stop listening; streams still open after ``grace_s`` are cancelled (their tasks too). gRPC's shutdown
        waits for every call to end, and a call whose bot's process is frozen with writes pending never does (its
        cancellation cannot be sent either; grpc.aio's server waits the same): after ``STOP_WAIT_S`` more the
        server is left to its thread, kept for the process's life (releasing it would wait on the same shutdown)."""
        server = self._server
        if server is None or self._stopping:
            return
        self._stopping = True
        loop = asyncio.get_running_loop()
        stopped: asyncio.Future[None] = loop.create_future()

        def shut_down() -> None:  # in a thread of its own, a daemon: one that never returns holds up no exit
            server.shutdown(grace_s)
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
                loop.call_soon_threadsafe(_resolve, stopped)

        threading.Thread(target=shut_down, name="arena-bot-server-stop", daemon=True).start()
        try:
            await asyncio.wait_for(asyncio.shield(stopped), grace_s + STOP_WAIT_S)  # the loop serves meanwhile
        except TimeoutError:
            log.warning("the bots' server on %s did not stop within %g s (a bot's process frozen with messages "
                        "unread?); left to stop on its own", self.address, grace_s + STOP_WAIT_S)
            _ABANDONED.append(server)
        else:
            self._events()  # the last ones: every call's DONE
        if self.lanes is not None:  # any lane left: its tables go on without it (their bots are gone)
            for lane in list(self.lanes.running.values()):
                lane.recall()
        loop.remove_reader(server.fd)
        for call in self._calls.values():
            if call.task is not None:
                call.task.cancel()
        self._calls.clear()
        self._server = None


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
