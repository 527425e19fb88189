"""``run(bot)``: connect to the referee, play the whole match on one gRPC stream, return the result.

One thread does everything: an asyncio loop on grpc.aio reads the referee's messages in order, calls the bot, and
writes its answers on the same stream (gRPC's synchronous stream handed each message between three threads: its
channel poller, the reader and the request iterator's consumer). Several tables on one stream
(``Bot.max_tables``) need nothing more: each request names its table, and each answer echoes it. With more than one
table the SDK asks for batches: every request of a ``RefereeBatch`` is answered (by ``act`` on each, or by a bot's
``act_batch`` in one call) and all the answers go back in one ``ActionBatch``, one write. The stream is read ahead:
messages that arrived while the bot was busy are handled before the answers are written, and all their answers
go in that one ActionBatch too (up to ``_MERGE_MESSAGES`` messages or ``_MERGE_S`` seconds): a bot on many tables
sends fewer, larger messages, and the referee, playing more tables on each, sends fewer and larger batches.

The bot's callbacks run on that loop, one message at a time, in order. A plain ``def`` is called directly (the
path above, untouched); a bot that declares any callback ``async def`` has its messages handled by
``_handle_async``, the same steps with each callback's result awaited, while the reader reads ahead. A plain callback
cannot run a loop of its own there (``asyncio.run``): asyncio refuses, and the SDK's log says to declare it
``async def`` (``arena_sdk.callbacks``), answering with the safe action as for any exception.

Network and protocol failures never raise: they are logged and end up in ``MatchResult.error``. Only a missing
address or token stops the program (exit status 2). A match's stream that breaks before its MatchEnd (a pause longer
than the referee's keepalive, a cut connection) is joined again with the same token (``arena_sdk.reconnect``), and play
goes on; a fatal Error from the referee (a bad token, a newer stream with the token) ends the match at once.

The path from a request to its answer is kept short, since it sets how fast a quick bot can play: the request is
read lazily (``Request``), the answer built in place, in the batch's ``ActionBatch`` when there is one.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import functools
import inspect
import logging
import queue
import random
import sys
import time
from collections import deque
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, TypeVar

import grpc

from arena_sdk.actions import Action, Mixed, safe_action
from arena_sdk.bot import Bot
from arena_sdk.callbacks import declares_async, nested_loop_advice
from arena_sdk.pb import bot_pb2, bot_pb2_grpc, poker_pb2
from arena_sdk.reconnect import Reconnect, worth_a_new_stream
from arena_sdk.request import Request
from arena_sdk.results import MatchResult
from arena_sdk.settings import Settings, batches_itself, open_channel, read_settings, setup_logging
from arena_sdk.types import ActionKind

__all__ = ["PROTOCOL_VERSION", "run"]

PROTOCOL_VERSION = 1
CONNECT_TIMEOUT_S = 10.0
RECONNECT_FIRST_S = 0.5  # a league bot's first wait before reconnecting; doubled each time, up to:
RECONNECT_MAX_S = 30.0
_EOF = grpc.aio.EOF  # type: ignore[attr-defined]  # what read() returns once the referee ended the stream
# Messages that are already here are handled before the answers are written, all in one ActionBatch: at most
_MERGE_MESSAGES = 16  # messages,
_MERGE_S = 0.005  # or this long since the last write, so that a slow bot's first answers do not wait for the rest
_DRAIN_TIMEOUT_S = 2.0  # after MatchEnd or a fatal Error, how long to wait for the referee to end the stream

log = logging.getLogger("arena_sdk")

_T = TypeVar("_T")


class _Session:
    """One stream: the referee's messages in, the bot's hooks called, Actions out. A match's stream ends with its
    MatchEnd; a league's (``league``) plays match after match until the host ends it. ``broke_at``: for a stream
    that takes the seat back after another broke, when that one broke (``time.monotonic``)."""

    def __init__(self, bot: Bot, join: bot_pb2.Join, league: bool = False, match_id: str = "",
                 broke_at: float | None = None) -> None:
        self.bot = bot
        self.join = join
        self.league = league
        self.broke_at = broke_at
        self.matches = 0  # MatchEnds heard
        self.welcomed = False
        self.asked = 0  # ActionRequests received
        self.fatal: str | None = None  # a fatal Error the referee sent: do not reconnect
        self.broken: str | None = None  # why a match's stream broke before its MatchEnd, if a new one may help
        self.outbox: queue.SimpleQueue[bot_pb2.BotMessage] = queue.SimpleQueue()  # answers to write, in order
        self.open: dict[str, Request] = {}  # table_id -> the latest request (kept for rejections)
        self.result: MatchResult | None = None
        self.match_id = match_id
        self._batch: bot_pb2.BotMessage | None = None  # while a batch is handled: the ActionBatch its answers go in
        self._custom_batch = batches_itself(bot)
        self._awaits = declares_async(bot)  # a callback is ``async def``: messages handled by ``_handle_async``
        self._handled = 0  # messages handled since the last write
        self._debug = log.isEnabledFor(logging.DEBUG)  # every answer logged (ARENA_LOG_LEVEL=DEBUG); read per message

    async def play(self, channel: grpc.aio.Channel) -> MatchResult:
        """The stream played to its end. A reader task reads ahead, so that the messages that came while the bot was
        busy are handled together and their answers go back in one write (one ActionBatch): fewer, larger messages
        both ways, at no cost to an answer's time (it only waited for messages that were already here)."""
        stub: Any = bot_pb2_grpc.BotServiceStub(channel)  # grpc.aio's stub: its stubs type the synchronous one
        call = stub.Play()
        inbox: deque[Any] = deque()  # messages read ahead, then _EOF or the RpcError that ended the stream
        arrived = asyncio.Event()

        async def read_ahead() -> None:
            try:
                while (msg := await call.read()) is not _EOF:
                    inbox.append(msg)
                    arrived.set()
            except grpc.RpcError as e:
                inbox.append(e)
            else:
                inbox.append(_EOF)
            arrived.set()

        loop = asyncio.get_running_loop()
        drain_until: float | None = None  # after MatchEnd or a fatal Error: how long the referee has to end it
        writable = await self._write(call, bot_pb2.BotMessage(join=self.join))
        reader = asyncio.ensure_future(read_ahead())
        since_write = time.perf_counter()
        try:
            while True:
                if not inbox:
                    arrived.clear()
                    if drain_until is None:
                        await arrived.wait()
                    else:
                        try:
                            await asyncio.wait_for(arrived.wait(), max(0.0, drain_until - loop.time()))
                        except TimeoutError:
                            break
                msg = inbox.popleft()
                if msg is _EOF:
                    break
                if isinstance(msg, grpc.RpcError):
                    self._broke(msg)
                    break
                if self._awaits:
                    await self._handle_async(msg)
                else:
                    self._handle(msg)
                self._handled += 1
                if inbox and inbox[0] is not _EOF and self._handled < _MERGE_MESSAGES and \
                        time.perf_counter() - since_write < _MERGE_S:
                    continue  # more is here already: answer it with this
                self._handled = 0
                since_write = time.perf_counter()
                if writable and not self.outbox.empty():
                    writable = await self._write(call, self._merged_answers())
                if self.league and self.fatal is None:
                    continue  # a league's stream stays open across matches
                if self.result is not None and drain_until is None:
                    if writable:
                        writable = False
                        with contextlib.suppress(grpc.RpcError, asyncio.InvalidStateError):
                            await call.done_writing()  # half-close: we have nothing more to say
                    drain_until = loop.time() + _DRAIN_TIMEOUT_S
        finally:
            reader.cancel()
            if not call.done():
                call.cancel()
        if self.league:
            if self.result is None or (self.fatal is None and self.result.ok):
                self.result = MatchResult.failed("the host ended the league's stream", self.match_id)
            return self.result
        if self.result is None:
            self.result = MatchResult.failed("the referee ended the stream before MatchEnd", self.match_id)
        return self.result

    def _merged_answers(self) -> bot_pb2.BotMessage:
        """What the outbox holds, as one message: the answer alone, or every Action of them in one ActionBatch."""
        answers = []
        while not self.outbox.empty():
            answers.append(self.outbox.get_nowait())
        if len(answers) == 1:
            return answers[0]
        merged = bot_pb2.BotMessage()
        actions = merged.actions.actions
        for answer in answers:
            if answer.WhichOneof("msg") == "action":
                actions.append(answer.action)
            else:
                actions.extend(answer.actions.actions)
        return merged

    @staticmethod
    async def _write(call: Any, msg: bot_pb2.BotMessage) -> bool:
        """Write ``msg``; False once the stream takes no more (it ended: the reader hears how)."""
        try:
            await call.write(msg)
        except (grpc.RpcError, asyncio.InvalidStateError):
            return False
        return True

    def _broke(self, e: grpc.RpcError) -> None:
        """Note why the stream ended with an error, and whether a new stream may play on."""
        why = f"{e.code().name}: {e.details() or ''}".rstrip(": ")
        if self.league and self.fatal is None:
            self.result = MatchResult.failed(f"the league's stream broke: {why}", self.match_id)
        elif not self.league and not self.matches and self.fatal is None and worth_a_new_stream(e.code()):
            self.broken = why  # no MatchEnd, no fatal Error (a rate limit's is not): a new stream may play on
            if self.result is None:
                self.result = MatchResult.failed(f"the stream broke before MatchEnd: {why}", self.match_id)
        elif self.result is None:
            self.result = MatchResult.failed(f"the stream broke before MatchEnd: {why}", self.match_id)

    # ------------------------------------------------------------------ dispatch (a bot whose callbacks are plain)

    def _handle(self, msg: bot_pb2.RefereeMessage) -> None:
        self._debug = log.isEnabledFor(logging.DEBUG)
        which = msg.WhichOneof("msg")
        if which == "action_request":
            self._on_request(msg.action_request)
        elif which == "batch":
            self._on_batch(msg.batch)
        elif which == "action_rejected":
            self._on_rejected(msg.action_rejected)
        elif which == "hand_start":
            self._hook("on_hand_start", self.bot.on_hand_start, msg.hand_start)
        elif which == "hand_end":
            self.open.pop(msg.hand_end.table_id, None)
            self._hook("on_hand_end", self.bot.on_hand_end, msg.hand_end)
        elif which == "welcome":
            self._welcomed(msg.welcome)
            self._hook("on_welcome", self.bot.on_welcome, msg.welcome)
        elif which == "match_end":
            self._hook("on_match_end", self.bot.on_match_end, msg.match_end)
            self._ended(msg.match_end)
        elif which == "error":
            self._hook("on_error", self.bot.on_error, msg.error)
            self._errored(msg.error)
        else:
            log.debug("ignoring a message this SDK does not know: %s", which)

    def _on_request(self, pb: bot_pb2.ActionRequest) -> None:
        request = self._read_request(pb)
        if request is not None:
            action = self._decide("act", self.bot.act, request)
            self._send(request, action or safe_action(request))

    def _on_batch(self, batch: bot_pb2.RefereeBatch) -> None:
        """Every message of a batch in order; its requests answered together (``act_batch``), all its answers sent
        in one ActionBatch, built in place (one answer alone goes as an Action, as without a batch)."""
        out = self._batch = bot_pb2.BotMessage()
        requests: list[Request] = []
        try:
            for inner in batch.messages:
                which = inner.WhichOneof("msg")
                if which == "action_request":
                    request = self._read_request(inner.action_request)
                    if request is not None:
                        requests.append(request)
                elif which != "batch":  # never nested; one that is would be ignored
                    self._handle(inner)
            if requests:
                self._answer_all(requests)
        finally:
            self._batch = None
        self._put_batch(out)

    def _answer_all(self, requests: list[Request]) -> None:
        if not self._custom_batch:  # act on each, each failure on its own
            for request in requests:
                self._send(request, self._decide("act", self.bot.act, request) or safe_action(request))
            return
        try:
            actions = list(self.bot.act_batch(requests))  # type: ignore[arg-type]  # a plain one: a sequence
            if len(actions) != len(requests):
                raise ValueError(f"act_batch returned {len(actions)} actions for {len(requests)} requests")
        except Exception:
            actions = self._batch_failed(requests)
        self._send_all(requests, actions)

    def _on_rejected(self, rejection: bot_pb2.ActionRejected) -> None:
        request = self._rejected(rejection)
        if request is not None:
            action = self._decide("on_rejected", functools.partial(self.bot.on_rejected, rejection), request)
            self._send(request, action or safe_action(request))

    # ------------------------------------------------------------------ dispatch (a bot with an async callback)

    async def _handle_async(self, msg: bot_pb2.RefereeMessage) -> None:
        """``_handle`` for a bot that declared any callback ``async def``: the same steps, each callback's result
        awaited when it is awaitable. Messages are still handled one at a time, in order; the reader reads ahead
        while the bot awaits."""
        self._debug = log.isEnabledFor(logging.DEBUG)
        which = msg.WhichOneof("msg")
        if which == "action_request":
            request = self._read_request(msg.action_request)
            if request is not None:
                self._send(request, await self._decide_async("act", self.bot.act, request) or safe_action(request))
        elif which == "batch":
            await self._on_batch_async(msg.batch)
        elif which == "action_rejected":
            request = self._rejected(msg.action_rejected)
            if request is not None:
                decide = functools.partial(self.bot.on_rejected, msg.action_rejected)
                self._send(request, await self._decide_async("on_rejected", decide, request) or safe_action(request))
        elif which == "hand_start":
            await self._hook_async("on_hand_start", self.bot.on_hand_start, msg.hand_start)
        elif which == "hand_end":
            self.open.pop(msg.hand_end.table_id, None)
            await self._hook_async("on_hand_end", self.bot.on_hand_end, msg.hand_end)
        elif which == "welcome":
            self._welcomed(msg.welcome)
            await self._hook_async("on_welcome", self.bot.on_welcome, msg.welcome)
        elif which == "match_end":
            await self._hook_async("on_match_end", self.bot.on_match_end, msg.match_end)
            self._ended(msg.match_end)
        elif which == "error":
            await self._hook_async("on_error", self.bot.on_error, msg.error)
            self._errored(msg.error)
        else:
            log.debug("ignoring a message this SDK does not know: %s", which)

    async def _on_batch_async(self, batch: bot_pb2.RefereeBatch) -> None:
        """``_on_batch`` with the callbacks awaited."""
        out = self._batch = bot_pb2.BotMessage()
        requests: list[Request] = []
        try:
            for inner in batch.messages:
                which = inner.WhichOneof("msg")
                if which == "action_request":
                    request = self._read_request(inner.action_request)
                    if request is not None:
                        requests.append(request)
                elif which != "batch":
                    await self._handle_async(inner)
            if requests:
                await self._answer_all_async(requests)
        finally:
            self._batch = None
        self._put_batch(out)

    async def _answer_all_async(self, requests: list[Request]) -> None:
        """``_answer_all`` with ``act`` or ``act_batch`` awaited."""
        if not self._custom_batch:
            for request in requests:
                self._send(request, await self._decide_async("act", self.bot.act, request) or safe_action(request))
            return
        try:
            answers = self.bot.act_batch(requests)
            actions = list(await answers if inspect.isawaitable(answers) else answers)
            if len(actions) != len(requests):
                raise ValueError(f"act_batch returned {len(actions)} actions for {len(requests)} requests")
        except Exception:
            actions = self._batch_failed(requests)
        except asyncio.CancelledError:
            if _stopping():
                raise
            actions = self._batch_failed(requests)
        self._send_all(requests, actions)

    # ------------------------------------------------------------------ what a message means, besides the bot's call

    def _read_request(self, pb: bot_pb2.ActionRequest) -> Request | None:
        """The request, noted as its table's open one; None (answered check-if-free-else-fold) if unreadable."""
        try:
            request = Request(pb)
        except Exception:
            log.exception("cannot read request %d; answering check-if-free-else-fold", pb.request_id)
            kind = ActionKind.CHECK if pb.legal.can_check else ActionKind.FOLD
            self._send_pb(pb.table_id, pb.hand_id, pb.request_id, int(kind), 0)
            return None
        self.asked += 1
        self.open[request.table_id] = request
        return request

    def _put_batch(self, out: bot_pb2.BotMessage) -> None:
        """A batch's answers, built in ``out``, to the outbox: one alone as an Action, as without a batch."""
        actions = out.actions.actions
        if len(actions) == 1:
            single = bot_pb2.BotMessage()
            single.action.CopyFrom(actions[0])
            self.outbox.put(single)
        elif actions:
            self.outbox.put(out)

    def _rejected(self, rejection: bot_pb2.ActionRejected) -> Request | None:
        """The open request a rejection is about (logged), or None if it is not open here."""
        request = self.open.get(rejection.table_id)
        if request is None or (request.hand_id, request.request_id) != (rejection.hand_id, rejection.request_id):
            log.warning("rejection for request %d, which is not open here: %s", rejection.request_id, rejection.message)
            return None
        log.warning(
            "request %d: action rejected (%s, %d retries left): %s",
            rejection.request_id,
            rejection.rule,
            rejection.retries_left,
            rejection.message,
        )
        return request

    def _welcomed(self, w: bot_pb2.Welcome) -> None:
        self.match_id = w.match_id
        self.welcomed = True
        tables = f"; {w.tables} tables at once" + (", in batches" if w.batches else "") if w.tables > 1 else ""
        if self.broke_at is None:
            log.info("joined match %s as %r: table %s, seat %d, %d hands%s", w.match_id, self.join.bot_name,
                     w.table_id, w.seat, w.hands_total, tables)
        else:
            log.warning("reconnected: rejoined match %s as %r %.1f s after the stream broke: table %s, seat %d%s",
                        w.match_id, self.join.bot_name, time.monotonic() - self.broke_at, w.table_id, w.seat,
                        tables)

    def _ended(self, match_end: bot_pb2.MatchEnd) -> None:
        self.result = MatchResult.from_pb(match_end)
        self.matches += 1
        if self.league:
            me = self.result.me
            log.info("match %s over%s; waiting for the next one", self.result.match_id,
                     f": you {me.net_chips:+d} chips in {me.hands_played} hands" if me else "")

    def _errored(self, error: bot_pb2.Error) -> None:
        code = bot_pb2.ErrorCode.Name(error.code) if error.code in bot_pb2.ErrorCode.values() else str(error.code)
        text = f"referee error {code}: {error.message}"
        if error.fatal:
            self.result = MatchResult.failed(text, self.match_id)
            if error.code != bot_pb2.ERROR_CODE_RATE_LIMITED:  # a league bot joins again later after that one
                self.fatal = text
        else:
            log.warning("%s", text)

    # ------------------------------------------------------------------ calling the bot safely

    def _hook(self, name: str, hook: Callable[[_T], object], msg: _T) -> None:
        try:
            returned = hook(msg)
        except Exception:
            self._hook_failed(name)
            return
        if returned is not None and inspect.isawaitable(returned):
            log.error("%s; carrying on", self._not_awaited(name, returned))

    async def _hook_async(self, name: str, hook: Callable[[_T], object], msg: _T) -> None:
        try:
            returned = hook(msg)
            if inspect.isawaitable(returned):
                await returned
        except Exception:
            self._hook_failed(name)
        except asyncio.CancelledError:
            if _stopping():
                raise
            self._hook_failed(name)

    def _decide(self, name: str, decide: Callable[[Request], object], request: Request) -> Action | Mixed | None:
        """The bot's answer, or None (meaning: send the safe action) if it raised or returned a non-Action."""
        try:
            action = decide(request)
        except Exception:
            self._decide_failed(name, request)
            return None
        if isinstance(action, (Action, Mixed)):
            return action
        self._not_an_action(name, action, request)
        return None

    async def _decide_async(self, name: str, decide: Callable[[Request], object],
                            request: Request) -> Action | Mixed | None:
        """``_decide`` with the answer awaited when it is awaitable (``async def act``)."""
        try:
            action = decide(request)
            if inspect.isawaitable(action):
                action = await action
        except Exception:
            self._decide_failed(name, request)
            return None
        except asyncio.CancelledError:
            if _stopping():
                raise
            self._decide_failed(name, request)
            return None
        if isinstance(action, (Action, Mixed)):
            return action
        self._not_an_action(name, action, request)
        return None

    def _send_all(self, requests: list[Request], actions: list[Any]) -> None:
        """``act_batch``'s answers sent, each in its request's place; the safe action for any that is not one."""
        for request, action in zip(requests, actions, strict=True):
            if not isinstance(action, (Action, Mixed)):
                log.error("%s.act_batch gave %r for request %d, not an Action; sending %s", type(self.bot).__name__,
                          action, request.request_id, safe_action(request))
                action = safe_action(request)
            self._send(request, action)

    # ------------------------------------------------------------------ what is logged when a callback fails

    def _hook_failed(self, name: str) -> None:
        """Log the exception being handled, raised by the hook ``name``: play goes on."""
        advice = nested_loop_advice(name, sys.exc_info()[1])
        log.error("%s.%s raised%s; carrying on", type(self.bot).__name__, name, f": {advice}" if advice else "",
                  exc_info=True)

    def _decide_failed(self, name: str, request: Request) -> None:
        """Log the exception being handled, raised by ``name`` on ``request``: the safe action goes instead."""
        advice = nested_loop_advice(name, sys.exc_info()[1])
        if advice is None:
            log.exception("%s.%s raised on request %d; sending %s", type(self.bot).__name__, name,
                          request.request_id, safe_action(request))
            return
        log.error("%s.%s on request %d: %s; sending %s instead, as for any exception in %s (the bot keeps its seat)",
                  type(self.bot).__name__, name, request.request_id, advice, safe_action(request), name,
                  exc_info=True)

    def _batch_failed(self, requests: list[Request]) -> list[Any]:
        """Log why ``act_batch`` gave no answers (the exception being handled); the safe action for each request."""
        advice = nested_loop_advice("act_batch", sys.exc_info()[1])
        log.error("%s.act_batch raised%s; sending the safe action for all %d requests", type(self.bot).__name__,
                  f": {advice}" if advice else "", len(requests), exc_info=True)
        return [safe_action(r) for r in requests]

    def _not_an_action(self, name: str, action: object, request: Request) -> None:
        """Log what ``name`` returned instead of an Action (``on_rejected`` may return None: the safe action)."""
        if action is None and name == "on_rejected":
            return
        if inspect.isawaitable(action):
            log.error("%s; sending %s", self._not_awaited(name, action), safe_action(request))
            return
        log.error(
            "%s.%s returned %r, not an Action; sending %s",
            type(self.bot).__name__,
            name,
            action,
            safe_action(request),
        )

    def _not_awaited(self, name: str, returned: object) -> str:
        """What to say of a plain callback that returned an awaitable, which the SDK does not await (it awaits the
        callbacks of a bot that declared one ``async def``); a coroutine is closed, so Python adds no warning."""
        if inspect.iscoroutine(returned):
            returned.close()
        return (f"{type(self.bot).__name__}.{name} returned {returned!r}, an awaitable, but no callback of the bot "
                f"is declared async def, so nothing awaits it: declare it `async def {name}`")

    def _send(self, request: Request, action: Action | Mixed) -> None:
        if self._debug:
            log.debug("request %d: %s", request.request_id, action)
        if isinstance(action, Mixed):
            self._send_pb(request.table_id, request.hand_id, request.request_id, 0, 0, action, action.comment)
            return
        amount = action.amount if action.kind is ActionKind.RAISE else 0
        self._send_pb(request.table_id, request.hand_id, request.request_id, int(action.kind), amount, None,
                      action.comment)

    def _send_pb(self, table_id: str, hand_id: str, request_id: int, kind: int, amount: int,
                 policy: Mixed | None = None, comment: str = "") -> None:
        batch = self._batch
        if batch is not None:
            msg = None
            action = batch.actions.actions.add()  # built in place in the batch's answer: no copy
        else:
            msg = bot_pb2.BotMessage()
            action = msg.action  # built in place: half the cost of building an Action and copying it in
            action.SetInParent()
        action.table_id = table_id
        action.hand_id = hand_id
        action.request_id = request_id
        action.kind = poker_pb2.ActionKind.ValueType(kind)
        action.amount = amount
        for choice, probability in policy.choices if policy is not None else ():
            action.policy.add(kind=poker_pb2.ActionKind.ValueType(int(choice.kind)), probability=probability,
                              amount=choice.amount if choice.kind is ActionKind.RAISE else 0)
        if comment:
            action.comment = comment
        if msg is not None:
            self.outbox.put(msg)


def _stopping() -> bool:
    """Whether the task running now was asked to stop (``Task.cancel``: the program is ending): a CancelledError
    then is not the bot's own (one that a bot's awaits raised is its bug, and answered as any exception is)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def run(
    bot: Bot,
    *,
    address: str | None = None,
    token: str | None = None,
    name: str | None = None,
    version: str = "",
    argv: Sequence[str] | None = None,
    tls_ca: str | None = None,
    connect_timeout: float = CONNECT_TIMEOUT_S,
    max_tables: int | None = None,
    key: str | None = None,
    reconnect: bool | None = None,
    reconnect_s: float | None = None,
    language: str = "python",
) -> MatchResult:
    """Play one match with ``bot`` and return its result; with a league's API key, play its matches until the
    league ends the stream. ``language`` is what the Join says the bot is written in (an adapter says what it
    adapts: the ACPC bridge says ``acpc``).

    ``address`` and ``token`` come from the arguments, else ``--address``/``--token`` in ``argv`` (default
    ``sys.argv``), else the environment (``ARENA_ADDRESS``, ``ARENA_TOKEN``); if either is missing the program
    exits with status 2. The display name comes from ``--name``, else ``ARENA_BOT_NAME``, else ``name``, else the
    class name, so a launcher can rename a bot; the version from ``--bot-version``, else ``ARENA_BOT_VERSION``, else
    ``version``. TLS is used when a root certificate is given (``tls_ca``,
    ``--tls-ca`` or ``ARENA_TLS_CA``). Waits up to ``connect_timeout`` seconds for the referee to come up.
    The tables played at once are ``--max-tables``, else ``ARENA_MAX_TABLES``, else ``max_tables``, else
    ``bot.max_tables``; batches are asked for with more than one table, when the bot overrides ``act_batch``, or with
    ``--batches`` (``ARENA_BATCHES=1``).

    When the match's stream breaks before its MatchEnd (the referee's keepalive closed it while the process was
    stopped, the connection was cut), the SDK opens a new one with the same Join (token, name, version, tables,
    batches) and plays on: it waits 0.25 s, then twice as long after each failed try up to 5 s, and gives up
    ``reconnect_s`` (default 60) seconds after the break. Requests that were open meanwhile are played by the
    referee's time-out policy; ``on_welcome`` is called again with the new Welcome. ``--no-reconnect``,
    ``ARENA_RECONNECT=0`` or ``reconnect=False`` switch this off; ``--reconnect-s`` or ``ARENA_RECONNECT_S``
    override ``reconnect_s``. The referee's MatchEnd and its fatal Errors (a bad token, a newer stream with the same
    token, an unsupported protocol version) are never retried.

    With a key (``key``, ``--key`` or ``ARENA_KEY``, and no token) the bot joins a league (``arena host``): one
    stream plays match after match (each begins with a Welcome and ends with a MatchEnd); when the host goes away
    the bot reconnects, waiting 0.5 s, then twice as long each time up to 30 s; it stops only when the host ends
    its stream with a fatal Error (revoked or replaced key, kicked; a rate limit only makes it wait), returning
    that as the result's error.
    """
    settings = read_settings(bot, address, token, name, tls_ca, argv, max_tables, key, version, reconnect, reconnect_s)
    setup_logging()
    join = bot_pb2.Join(
        token=settings.token,
        bot_name=settings.name,
        bot_version=settings.version,
        protocol_version=PROTOCOL_VERSION,
        language=language,
        max_tables=settings.max_tables,
        batches=settings.batches,
    )
    if settings.league:
        return _run_loop(_play_league(bot, join, settings, connect_timeout))
    result = _run_loop(_play_match(bot, join, settings, connect_timeout))
    if result.ok:
        me = result.me
        summary = f"; you: {me.net_chips:+d} chips in {me.hands_played} hands" if me else ""
        again = f"; {result.reconnects} reconnect(s)" if result.reconnects else ""
        log.info("match %s over: %s%s%s", result.match_id, result.reason.name, summary, again)
    else:
        log.error("%s", result.error)
    return result


def _run_loop(play: Coroutine[Any, Any, MatchResult]) -> MatchResult:
    """``play`` on an event loop of its own; on a thread of its own when the caller's thread already runs a loop
    (a notebook, an asyncio program): ``run`` blocks until the match is over either way."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass  # the usual case; not played in this block, where every exception the bot's logged would chain to it
    else:
        with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="arena-sdk") as pool:
            return pool.submit(asyncio.run, play).result()
    return asyncio.run(play)


async def _ready(channel: grpc.aio.Channel, timeout: float) -> bool:
    """Whether the channel connects within ``timeout`` seconds."""
    try:
        await asyncio.wait_for(channel.channel_ready(), max(0.0, timeout))
    except TimeoutError:
        return False
    return True


async def _play_match(bot: Bot, join: bot_pb2.Join, settings: Settings, connect_timeout: float) -> MatchResult:
    """Play a match's stream; after each break (no MatchEnd, no fatal Error) take the seat back on a new stream,
    with the same Join, while ``settings.reconnect`` allows."""
    log.info("connecting to the referee at %s as %r", settings.address, settings.name)
    async with open_channel(settings) as channel:
        if not await _ready(channel, connect_timeout):
            return MatchResult.failed(f"cannot reach the referee at {settings.address} within {connect_timeout:g} s")
        session = _Session(bot, join)
        result = await session.play(channel)
        reconnects = 0
        while session.broken is not None and settings.reconnect.enabled:
            rejoined = await _rejoin(bot, join, channel, settings.reconnect, session)
            if isinstance(rejoined, str):
                result = MatchResult.failed(rejoined, session.match_id)
                break
            session = rejoined
            result = session.result or result  # ``_rejoin`` played it to its end
            reconnects += session.welcomed
        if session.broken is not None and not settings.reconnect.enabled:
            result = MatchResult.failed(f"{result.error}; not joining again: reconnecting is off (--no-reconnect, "
                                        "ARENA_RECONNECT=0 or reconnect=False)", session.match_id)
        return dataclasses.replace(result, reconnects=reconnects)


async def _rejoin(bot: Bot, join: bot_pb2.Join, channel: grpc.aio.Channel, policy: Reconnect,
                  broken: _Session) -> _Session | str:
    """New streams with ``join`` after ``broken`` broke, waiting as ``policy`` says between tries: the first that
    played on (it was welcomed and asked to act, or heard its MatchEnd) or that ended for good (a fatal Error), each
    played to its end; or why it gave up. A stream that breaks again before any request is one more failed try, so
    that a referee that welcomes and then fails every stream is not tried forever."""
    broke_at = time.monotonic()
    why = broken.broken
    log.warning("the stream broke before MatchEnd (%s); reconnecting with the same token: %s", why,
                policy.describe())
    tries = 0
    for wait in policy.waits():
        left = policy.for_s - (time.monotonic() - broke_at)
        if left <= 0:
            break
        await asyncio.sleep(min(wait, left))
        tries += 1
        # no wait for the channel: a referee that is away fails the call at once (UNAVAILABLE), one more try
        session = _Session(bot, join, match_id=broken.match_id, broke_at=broke_at)
        await session.play(channel)
        if session.broken is None or (session.welcomed and session.asked):
            return session
        why = session.broken
        log.warning("reconnect try %d failed (%s)%s", tries, why,
                    ": it broke again before any request" if session.welcomed else "")
    return (f"the stream broke before MatchEnd and {tries} tries to join again in {policy.for_s:g} s failed "
            f"(last: {why})")


async def _play_league(bot: Bot, join: bot_pb2.Join, settings: Settings, connect_timeout: float) -> MatchResult:
    """Play a league's matches on one stream, reconnecting with backoff whenever the host goes away, until the host
    ends the stream with a fatal Error (a revoked or replaced key, a kick) or the program is interrupted."""
    backoff = RECONNECT_FIRST_S
    matches = 0
    while True:
        log.info("connecting to the league at %s as %r", settings.address, settings.name)
        session = _Session(bot, join, league=True)
        async with open_channel(settings) as channel:
            if not await _ready(channel, connect_timeout):
                log.warning("cannot reach the league at %s; trying again in %.1f s", settings.address, backoff)
            else:
                result = await session.play(channel)
                matches += session.matches
                if session.fatal is not None:
                    log.error("the league ended this bot's stream: %s (%d matches played)", session.fatal, matches)
                    return result
                if session.welcomed or session.matches:
                    backoff = RECONNECT_FIRST_S  # it was playing: the host just went away
                log.warning("%s; reconnecting in %.1f s", result.error or "the stream ended", backoff)
        await asyncio.sleep(backoff * random.uniform(0.8, 1.2))  # jitter: a restarted host's bots return apart
        backoff = min(RECONNECT_MAX_S, backoff * 2)
