"""A bot's stream, once it has joined: a session. It holds the connection, what the bot's Join said, and the requests
open on it, matched to the Actions that answer them by their ids (one per table the session plays at).

The referee's seats (``arena.transport.remote.RemoteSeat``) ask through the session that last joined with their
token or key (``arena.transport.endpoint``); a session may host seats of several matches (a league), since every
request it carries names its table, hand and request. Sending only queues a message for the stream's writer: the
referee never waits on the network.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from arena.referee import Answer, Decision, InvalidAction
from arena.referee.records import Request, Waiter
from arena.transport import convert
from arena_sdk.pb import bot_pb2, poker_pb2

MAX_QUEUED = 10_000  # messages waiting for a bot that does not read its stream
NOT_READING = "the bot is not reading its stream"  # why such a stream is closed (RESOURCE_EXHAUSTED)


@dataclass(slots=True)
class Closing:
    """Why a connection is being closed: the gRPC status to end the call with."""

    code: str
    details: str


Outgoing = bot_pb2.RefereeMessage | bytes  # a message, or one already serialized (requests are built as bytes)


class Wakeup:
    """One waiter, woken when there is something for it: a future made only while it waits (``wait``), resolved by
    ``ring`` (which does nothing when nobody waits)."""

    __slots__ = ("_future",)

    def __init__(self) -> None:
        self._future: asyncio.Future[None] | None = None

    async def wait(self) -> None:
        self._future = asyncio.get_running_loop().create_future()
        try:
            await self._future
        finally:
            self._future = None

    def ring(self) -> None:
        future = self._future
        if future is not None and not future.done():
            future.set_result(None)


class Connection:
    """One live stream to a bot: the messages queued for it, which the stream's writer takes (``wait``, ``take``). A
    message may carry a callback that the writer calls as it hands the message to gRPC (an ActionRequest starts the
    bot's clock). The queue is two plain lists and the writer is woken by one future per wait: queueing a message
    makes no object of its own."""

    def __init__(self, peer: str) -> None:
        self.peer = peer
        self.batches = False  # pack what is ready at once into one RefereeBatch (Join.batches)
        self.gathers = False  # the writer lets the loop turn once before it takes a batch: several tables add theirs
        self._messages: list[Outgoing] = []
        self._callbacks: list[Callable[[], None] | None] = []  # each message's, in step with ``_messages``
        self._woken = Wakeup()  # the writer's, while it waits for a message
        self.closed = False
        self.closing: Closing | None = None
        self.on_close: Callable[[], None] | None = None  # told once, as it closes (its endpoint: the bot is gone)
        # told instead of the writer's future when a message is queued or it closes: a writer that is not a task
        # (the C++ server's, ``arena.transport.native_server``)
        self.on_queued: Callable[[], None] | None = None
        self.native: Any = None  # the C++ server's call that writes it (arena.transport.native_server), if one does

    @property
    def queued(self) -> int:
        """Messages waiting for the writer."""
        return len(self._messages)

    def send(self, message: Outgoing, on_sent: Callable[[], None] | None = None) -> None:
        """Queue a message; a bot that lets too many pile up is cut off (it is not reading)."""
        if self.closed:
            return
        if len(self._messages) >= MAX_QUEUED:
            self.close("RESOURCE_EXHAUSTED", NOT_READING)
            return
        self._messages.append(message)
        self._callbacks.append(on_sent)
        self._wake()

    def _wake(self) -> None:
        if self.on_queued is not None:
            self.on_queued()
            return
        self._woken.ring()

    async def wait(self) -> bool:
        """Wait until a message is queued (True) or the stream is closed with none left to send (False)."""
        while not self._messages:
            if self.closed:
                return False
            await self._woken.wait()
        return True

    def take(self, most: int | None = None) -> tuple[list[Outgoing], list[Callable[[], None] | None]]:
        """The messages queued (the first ``most`` of them), in order, with their callbacks; the writer sends them."""
        if most is None or most >= len(self._messages):
            messages, callbacks = self._messages, self._callbacks
            self._messages, self._callbacks = [], []
            return messages, callbacks
        messages, callbacks = self._messages[:most], self._callbacks[:most]
        del self._messages[:most], self._callbacks[:most]
        return messages, callbacks

    def close(self, code: str = "OK", details: str = "") -> None:
        """End the stream after the messages already queued."""
        if self.closed:
            return
        self.closed = True
        if code != "OK":
            self.closing = Closing(code, details)
        self._wake()
        if self.on_close is not None:
            self.on_close()


def error_message(
    code: bot_pb2.ErrorCode.ValueType,
    message: str,
    rule: str = "",
    fatal: bool = False,
    request_id: int = 0,
    table_id: str = "",
    hand_id: str = "",
) -> bot_pb2.RefereeMessage:
    """A protocol Error as a RefereeMessage; an error about a request or an Action names its table, hand and
    request."""
    return bot_pb2.RefereeMessage(error=bot_pb2.Error(
        code=code, message=message, rule=rule, fatal=fatal, table_id=table_id, hand_id=hand_id, request_id=request_id,
    ))


def action_error(code: bot_pb2.ErrorCode.ValueType, message: str, action: poker_pb2.Action,
                 rule: str = "") -> bot_pb2.RefereeMessage:
    """An Error about an Action the referee ignored, naming the ids the Action carried (so the bot knows which)."""
    return error_message(code, message, rule, request_id=action.request_id, table_id=action.table_id,
                         hand_id=action.hand_id)


class Recallable(Protocol):
    """A lane asking through a session (arena.transport.lanes): ended when the session fails, so that its open
    request is the session's own first."""

    def recall(self, discard: bool = False) -> None: ...


class BotSession:
    """One joined stream: its connection, what its Join said (``max_tables``, batches), and its open requests by
    table and request id (request ids are unique within a match; a league's stream plays several matches, each
    with tables of its own). A request is open from ``ask`` until its answer, its time-out or the session's end
    (``fail``).

    The open requests' clocks are watched by one timer handle per session, set for the soonest deadline among them
    (``_alarm``): a request asked after it, whose deadline is later (its clock starts later), costs no timer of its
    own, where one handle per request, set and cancelled, was most of what asking cost beyond the request's bytes.

    A request is opened either by ``ask``, which waits for its answer on a future, or by ``open``, which leaves the
    answer to a waiter of the table's (``arena.referee.fast``): that one acts on it at once, as the Action is read,
    and leaves the open requests at the loop's next turn, as an asked one does once its task has run.
    """

    def __init__(self, conn: Connection, join: bot_pb2.Join) -> None:
        self.conn = conn
        self.join = join
        self.max_tables = max(1, join.max_tables)
        conn.batches = join.batches
        self.tables_welcomed = 0  # tables of the seats welcomed on this stream (more than one: its writer gathers)
        self.pending: dict[tuple[str, int], tuple[Request, Waiter]] = {}
        self._alarm: asyncio.TimerHandle | None = None  # fires at the soonest deadline of an open request, or before
        self._answered: list[tuple[tuple[str, int], Waiter]] = []  # opened requests answered: to leave ``pending``
        self._loop: asyncio.AbstractEventLoop | None = None  # the running loop, found once (``_running``)
        self.lanes: set[Recallable] = set()  # lanes that ask through this session now

    @property
    def live(self) -> bool:
        """Whether the stream is still open."""
        return not self.conn.closed

    def send(self, message: Outgoing, on_sent: Callable[[], None] | None = None) -> None:
        """Queue a message for the bot."""
        self.conn.send(message, on_sent)

    async def ask(self, decision: Decision, request: bytes | None) -> Answer:
        """Open ``decision``'s request (send ``request``, unless this is a retry of one sent already) and wait for
        its answer, under the decision's clock (a TimeoutError when it runs out: ``_expire``)."""
        future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        key = (decision.table_id, decision.request_id)
        self.pending[key] = (decision, future)
        self._watch(decision)
        if request is not None:
            self.send(request, decision.timer.sent)
        try:
            return await future
        finally:
            del self.pending[key]

    def open(self, decision: Request, request: bytes, waiter: Waiter) -> Callable[[], None]:
        """Open ``decision``'s request, send ``request`` and leave its answer to ``waiter`` (not an asyncio
        future: one that acts on it as it is given), under the decision's clock, without waiting. Returns what
        withdraws the request unanswered (as a cancelled ``ask`` does: an Action for it is then not for an open
        request)."""
        withdraw = self.adopt(decision, waiter)
        self.send(request, decision.timer.sent)
        return withdraw

    def adopt(self, decision: Request, waiter: Waiter) -> Callable[[], None]:
        """``open`` for a request sent already (by a lane: arena.transport.lanes), whose clock started when it
        was."""
        key = (decision.table_id, decision.request_id)
        self.pending[key] = entry = (decision, waiter)

        def withdraw() -> None:
            if self.pending.get(key) is entry:
                del self.pending[key]

        self._watch(decision)
        return withdraw

    def recall_lanes(self) -> None:
        """End the lanes asking through this session: their open requests become the session's."""
        for lane in list(self.lanes):
            lane.recall()

    def _running(self) -> asyncio.AbstractEventLoop:
        """The loop the session runs in, asked of asyncio once: ``asyncio.get_running_loop`` makes a system call
        (getpid) each time, which was 7% of a busy referee's main thread when every request asked it."""
        loop = self._loop
        if loop is None:
            loop = self._loop = asyncio.get_running_loop()
        return loop

    def _watch(self, decision: Request) -> None:
        """Let the alarm ring by ``decision``'s deadline: set it sooner if it would ring later."""
        loop = self._running()
        due = loop.time() + decision.timer.remaining()
        alarm = self._alarm
        if alarm is None or due < alarm.when():
            if alarm is not None:
                alarm.cancel()
            self._alarm = loop.call_at(due, self._expire)

    def _settled(self, key: tuple[str, int], waiter: Waiter) -> None:
        """An opened request (``open``) was answered, or failed: it leaves ``pending`` at the loop's next turn
        (until then an Action for it again is "answered already", as for an asked one)."""
        if isinstance(waiter, asyncio.Future):
            return  # ``ask`` removes its own
        if not self._answered:
            self._running().call_soon(self._sweep)
        self._answered.append((key, waiter))

    def _sweep(self) -> None:
        answered, self._answered = self._answered, []
        pending = self.pending
        for key, waiter in answered:
            entry = pending.get(key)
            if entry is not None and entry[1] is waiter:  # not a retry asked since under the same key
                del pending[key]

    def _expire(self) -> None:
        """The alarm: every open request whose clock has run out ends with a TimeoutError; the alarm is set again for
        the soonest deadline left (a request's clock that started after it was asked, ``TurnTimer.sent``, or was
        given time back, ends later than it was set for)."""
        self._alarm = None
        soonest = math.inf
        for key, (decision, future) in list(self.pending.items()):
            if future.done():
                continue
            left = decision.timer.remaining()
            if left <= 0:
                future.set_exception(TimeoutError())
                self._settled(key, future)
            else:
                soonest = min(soonest, left)
        if soonest < math.inf:
            loop = self._running()
            self._alarm = loop.call_at(loop.time() + soonest, self._expire)

    def fail(self, error: Exception) -> None:
        """Every open request ends with ``error`` (the stream ended, or a newer one took the seat)."""
        self.recall_lanes()
        for key, (_, future) in list(self.pending.items()):
            if not future.done():
                future.set_exception(error)
                self._settled(key, future)
        if self._alarm is not None:
            self._alarm.cancel()
            self._alarm = None

    def answers(self, message: poker_pb2.Action) -> bool:
        """Whether ``message`` names a request the referee is waiting for an answer to (table, hand and request
        ids all equal to the request's)."""
        pending = self.pending.get((message.table_id, message.request_id))  # table and request ids: the key
        return pending is not None and not pending[1].done() and pending[0].hand_id == message.hand_id

    def deliver(self, message: poker_pb2.Action) -> bool:
        """An Action arrived on the stream: resolve the open request it names (True), or tell the bot why it was
        ignored (False).
        An Action must echo an open request's table_id, hand_id and request_id: one that differs in any of them
        (an empty one included) is ignored, so that no action is ever applied to a table or hand it was not meant
        for."""
        key = (message.table_id, message.request_id)  # table and request ids: the key
        pending = self.pending.get(key)
        if not (pending is not None and not pending[1].done() and pending[0].hand_id == message.hand_id) and \
                self.lanes:  # what is wrong is told against every open request: the lanes' too
            self.recall_lanes()
            pending = self.pending.get(key)
        if pending is not None and not pending[1].done() and pending[0].hand_id == message.hand_id:
            try:
                answer = convert.action_from_pb(message)
            except convert.MalformedAction as exc:
                pending[1].set_exception(InvalidAction(str(exc)))
            else:
                pending[1].set_result(answer)
            self._settled(key, pending[1])
            return True
        open_ = [p for p in self.pending.values() if not p[1].done()]  # what was wrong, for the bot
        if pending is None:  # the nearest open request: the one of that id (on another table), if there is one
            pending = next((p for p in open_ if p[0].request_id == message.request_id), None)
        if not open_:
            self.send(action_error(
                bot_pb2.ERROR_CODE_OUT_OF_ORDER,
                f"no action is requested from you now (request {message.request_id} is not open); ignored",
                message, "R6.3",
            ))
            return False
        if pending is not None and pending[1].done():
            self.send(action_error(
                bot_pb2.ERROR_CODE_OUT_OF_ORDER,
                f"request {message.request_id} is answered already (one Action per request); ignored", message,
                "R6.3",
            ))
            return False
        if pending is None and len(open_) > 1:
            ids = ", ".join(str(d.request_id) for d, _ in open_)
            wrong = [f"request_id {message.request_id} is not one of the open requests ({ids})"]
        else:
            wrong = mismatches(message, (pending or open_[0])[0])
        self.send(action_error(
            bot_pb2.ERROR_CODE_UNKNOWN_REQUEST,
            f"the action is not for the open request: {'; '.join(wrong)}; ignored (echo the request's "
            "table_id, hand_id and request_id)",
            message,
        ))
        return False


def mismatches(action: poker_pb2.Action, decision: Request) -> list[str]:
    """How an Action's ids differ from the request's, e.g. ``["hand_id '' is not 'm1-3'"]``; empty if they match."""
    wrong = []
    if action.table_id != decision.table_id:
        wrong.append(f"table_id '{convert.printable(action.table_id)}' is not '{decision.table_id}'")
    if action.hand_id != decision.hand_id:
        wrong.append(f"hand_id '{convert.printable(action.hand_id)}' is not '{decision.hand_id}'")
    if action.request_id != decision.request_id:
        wrong.append(f"request_id {action.request_id} is not {decision.request_id}")
    return wrong
