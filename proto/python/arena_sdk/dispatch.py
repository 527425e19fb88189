"""``Dispatch``: a referee message handed to the bot's callbacks, what it means for the match (the open requests, the
Welcome, the MatchEnd, a fatal Error), and the bot's answers built as messages to write (the outbox).

One dispatch for every bot. Each step gives None once it is done, or, where a bot's ``async def`` callback gave an
awaitable, what is left of it to await (``arena_sdk.callbacks``): a plain bot's messages are handled to their end
with no coroutine made (a batch's makes one), an async bot's callbacks are awaited on the SDK's loop, one message at
a time, in order, while the stream is read ahead. The path from a request to its answer is kept short, since it sets
how fast a quick bot can play: the request is read lazily (``Request``), the answer built in place, in the batch's
``ActionBatch`` when there is one.
"""

from __future__ import annotations

import functools
import logging
import queue
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from arena_sdk.actions import Action, Mixed, safe_action
from arena_sdk.bot import Bot
from arena_sdk.callbacks import Callbacks
from arena_sdk.pb import bot_pb2, poker_pb2
from arena_sdk.request import Request
from arena_sdk.results import MatchResult
from arena_sdk.settings import batches_itself
from arena_sdk.types import ActionKind

__all__ = ["Dispatch"]

log = logging.getLogger("arena_sdk")

_T = TypeVar("_T")


class Dispatch:
    """The referee's messages handled in order (``handle``): the bot's callbacks called, their answers put in
    ``outbox``, and the match's state noted. ``broke_at``: for a stream that takes the seat back after another
    broke, when that one broke (``time.monotonic``)."""

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
        callbacks = Callbacks(bot)
        self._hook = callbacks.hook
        self._decide = callbacks.decide
        self._act_batch = callbacks.act_batch
        self._batch: bot_pb2.BotMessage | None = None  # while a batch is handled: the ActionBatch its answers go in
        self._custom_batch = batches_itself(bot)
        self._debug = log.isEnabledFor(logging.DEBUG)  # every answer logged (ARENA_LOG_LEVEL=DEBUG); read per message

    def handle(self, msg: bot_pb2.RefereeMessage) -> Awaitable[None] | None:
        """One referee message: the bot's callback for it called, its answer put in the outbox. None once done, or
        what is left of it to await: always for a batch, a MatchEnd or an Error; for a request or a hook only where an
        async callback gave an awaitable (a plain bot's never do: its requests make no coroutine)."""
        self._debug = log.isEnabledFor(logging.DEBUG)
        which = msg.WhichOneof("msg")
        if which == "action_request":
            request = self._read_request(msg.action_request)
            return None if request is None else self._answer("act", self.bot.act, request)
        if which == "batch":
            return self._on_batch(msg.batch)
        if which == "action_rejected":
            request = self._rejected(msg.action_rejected)
            if request is None:
                return None
            return self._answer("on_rejected", functools.partial(self.bot.on_rejected, msg.action_rejected), request)
        if which == "hand_start":
            return self._hand_started(msg.hand_start)
        if which == "hand_end":
            return self._hand_ended(msg.hand_end)
        if which == "welcome":
            self._welcomed(msg.welcome)
            return self._hook("on_welcome", self.bot.on_welcome, msg.welcome)
        if which == "match_end":
            return self._hook_then("on_match_end", self.bot.on_match_end, msg.match_end, self._ended)
        if which == "error":
            return self._hook_then("on_error", self.bot.on_error, msg.error, self._errored)
        log.debug("ignoring a message this SDK does not know: %s", which)
        return None

    def _answer(self, name: str, decide: Callable[[Request], object], request: Request) -> Awaitable[None] | None:
        """``decide``'s answer to ``request`` sent (the safe action if it gave none): None once sent, or what awaits
        the answer and then sends it."""
        answer = self._decide(name, decide, request)
        if answer is None or isinstance(answer, (Action, Mixed)):
            self._send(request, answer or safe_action(request))
            return None
        return self._send_awaited(request, answer)

    def _hand_started(self, msg: bot_pb2.HandStart) -> Coroutine[Any, Any, None] | None:
        """The bot's ``on_hand_start`` called (``_own_hook``)."""
        return self._own_hook("on_hand_start", self.bot.on_hand_start, Bot.on_hand_start, msg)

    def _hand_ended(self, msg: bot_pb2.HandEnd) -> Coroutine[Any, Any, None] | None:
        """The table's request closed, and the bot's ``on_hand_end`` called (``_own_hook``)."""
        self.open.pop(msg.table_id, None)
        return self._own_hook("on_hand_end", self.bot.on_hand_end, Bot.on_hand_end, msg)

    def _own_hook(self, name: str, hook: Callable[[_T], object], default: Callable[..., object],
                  msg: _T) -> Coroutine[Any, Any, None] | None:
        """``_hook``, unless ``hook`` is Bot's own (``default``, which does nothing): then no call, which a bot at
        many tables would make twice a hand a table. Looked up each time: a bot may set its hooks as it plays."""
        if getattr(hook, "__func__", None) is default:
            return None
        return self._hook(name, hook, msg)

    async def _send_awaited(self, request: Request, answer: Awaitable[Action | Mixed | None]) -> None:
        """An async callback's answer to ``request``, awaited and sent."""
        self._send(request, await answer or safe_action(request))

    async def _hook_then(self, name: str, hook: Callable[[_T], object], msg: _T, then: Callable[[_T], None]) -> None:
        """The hook called (and awaited), then ``then(msg)``: the match's state noted after the bot heard it."""
        if (later := self._hook(name, hook, msg)) is not None:
            await later
        then(msg)

    async def _on_batch(self, batch: bot_pb2.RefereeBatch) -> None:
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
                elif which == "hand_start":  # (a bot at many tables gets two a hand a table: no ``handle`` call)
                    if (hooked := self._hand_started(inner.hand_start)) is not None:
                        await hooked
                elif which == "hand_end":
                    if (hooked := self._hand_ended(inner.hand_end)) is not None:
                        await hooked
                elif which != "batch" and (later := self.handle(inner)) is not None:  # never nested; one is ignored
                    await later
            if requests and not self._custom_batch:  # act on each, each failure on its own
                for request in requests:
                    if (later := self._answer("act", self.bot.act, request)) is not None:
                        await later
            elif requests:
                answers = self._act_batch(requests)
                self._send_all(requests, answers if isinstance(answers, list) else await answers)
        finally:
            self._batch = None
        self._put_batch(out)

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

    # ------------------------------------------------------------------ the answers, built in place

    def _send_all(self, requests: list[Request], actions: list[Any]) -> None:
        """``act_batch``'s answers sent, each in its request's place; the safe action for any that is not one."""
        for request, action in zip(requests, actions, strict=True):
            if not isinstance(action, (Action, Mixed)):
                log.error("%s.act_batch gave %r for request %d, not an Action; sending %s", type(self.bot).__name__,
                          action, request.request_id, safe_action(request))
                action = safe_action(request)
            self._send(request, action)

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

    def _put_batch(self, out: bot_pb2.BotMessage) -> None:
        """A batch's answers, built in ``out``, to the outbox: one alone as an Action, as without a batch."""
        actions = out.actions.actions
        if len(actions) == 1:
            single = bot_pb2.BotMessage()
            single.action.CopyFrom(actions[0])
            self.outbox.put(single)
        elif actions:
            self.outbox.put(out)
