"""``Dispatch``: a referee message handed to the bot's callbacks, what it means for the match (the open requests, the
Welcome, the MatchEnd, a fatal Error), and the bot's answers built as messages to write (the outbox).

A plain bot's messages are handled by ``_handle``; a bot that declares any callback ``async def`` has them handled by
``_handle_async``, the same steps with each callback's result awaited, while the stream is read ahead. The path from a
request to its answer is kept short, since it sets how fast a quick bot can play: the request is read lazily
(``Request``), the answer built in place, in the batch's ``ActionBatch`` when there is one.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import queue
import sys
import time
from collections.abc import Callable
from typing import Any, TypeVar

from arena_sdk.actions import Action, Mixed, safe_action
from arena_sdk.bot import Bot
from arena_sdk.callbacks import declares_async, nested_loop_advice
from arena_sdk.pb import bot_pb2, poker_pb2
from arena_sdk.request import Request
from arena_sdk.results import MatchResult
from arena_sdk.settings import batches_itself
from arena_sdk.types import ActionKind

__all__ = ["Dispatch"]

log = logging.getLogger("arena_sdk")

_T = TypeVar("_T")


class Dispatch:
    """The referee's messages handled in order (``_handle``, ``_handle_async``): the bot's callbacks called, their
    answers put in ``outbox``, and the match's state noted. ``broke_at``: for a stream that takes the seat back
    after another broke, when that one broke (``time.monotonic``)."""

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
        self.outbox: queue.SimpleQueue[bot_pb2.BotMessage] = queue.SimpleQueue()  # answers to write, in order
        self.open: dict[str, Request] = {}  # table_id -> the latest request (kept for rejections)
        self.result: MatchResult | None = None
        self.match_id = match_id
        self._batch: bot_pb2.BotMessage | None = None  # while a batch is handled: the ActionBatch its answers go in
        self._custom_batch = batches_itself(bot)
        self._awaits = declares_async(bot)  # a callback is ``async def``: messages handled by ``_handle_async``
        self._debug = log.isEnabledFor(logging.DEBUG)  # every answer logged (ARENA_LOG_LEVEL=DEBUG); read per message

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
