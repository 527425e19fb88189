"""The bot's callbacks as ``run`` calls them, on its event loop, one message at a time: ``Callbacks`` calls each so
that nothing the bot does reaches the SDK (an exception, a non-Action, an awaitable a plain callback returned: logged,
the safe action sent instead). A bot that declares any callback ``async def`` has every callback's awaitable result
awaited there; for a plain bot nothing is awaited, and a result that is awaitable is what it is, a bug that the log
explains. A plain callback that runs an event loop of its own inside the SDK's (``asyncio.run``,
``loop.run_until_complete``) gets a bare RuntimeError from asyncio: the log says to declare it ``async def``."""

from __future__ import annotations

import asyncio
import inspect
import logging
import sys
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, TypeVar

from arena_sdk.actions import Action, Mixed, safe_action
from arena_sdk.bot import Bot
from arena_sdk.request import Request

__all__ = ["CALLBACKS", "Callbacks", "declares_async", "nested_loop_advice"]

CALLBACKS = ("act", "act_batch", "on_rejected", "on_welcome", "on_hand_start", "on_hand_end", "on_match_end",
             "on_error")

# What asyncio says when code that runs on a loop asks for another loop to run:
_NESTED_LOOP = (
    "cannot be called from a running event loop",  # asyncio.run(), asyncio.Runner.run()
    "This event loop is already running",  # run_until_complete / run_forever on the SDK's own loop
    "Cannot run the event loop while another loop is running",  # the same on a new loop
)

log = logging.getLogger("arena_sdk")

_T = TypeVar("_T")


def declares_async(bot: Bot) -> bool:
    """Whether any of the bot's callbacks is declared ``async def`` (a coroutine function)."""
    return any(inspect.iscoroutinefunction(getattr(bot, name)) for name in CALLBACKS)


def nested_loop_advice(name: str, error: BaseException | None) -> str | None:
    """What to do, when ``error`` is asyncio refusing to run a loop inside the callback ``name`` (it runs on the
    SDK's event loop); None for any other error."""
    if not isinstance(error, RuntimeError) or not any(text in str(error) for text in _NESTED_LOOP):
        return None
    return (f"{name} runs on the SDK's event loop, so it cannot run one of its own (asyncio.run, "
            f"run_until_complete): declare it `async def {name}` and await your client there")


def _one_each(requests: Sequence[Request], answers: Sequence[object]) -> list[Any]:
    """``act_batch``'s answers as a list; ValueError if there is not one a request."""
    actions = list(answers)
    if len(actions) != len(requests):
        raise ValueError(f"act_batch returned {len(actions)} actions for {len(requests)} requests")
    return actions


def _stopping() -> bool:
    """Whether the task running now was asked to stop (``Task.cancel``: the program is ending): a CancelledError
    then is not the bot's own (one that a bot's awaits raised is its bug, and answered as any exception is)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


class Callbacks:
    """The bot's callbacks, called safely. Each call gives its outcome at once: a plain callback's, and an async
    one's that raised or gave no awaitable. Only for a bot that awaits, where a callback gave an awaitable, it gives a
    coroutine instead, which awaits it and then gives the outcome (the dispatch awaits that): a plain bot's calls
    make no coroutine, so its path costs what it did before async callbacks came."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self.awaits = declares_async(bot)  # a callback is ``async def``: awaitable results are awaited

    def hook(self, name: str, hook: Callable[[_T], object], msg: _T) -> Coroutine[Any, Any, None] | None:
        """Call the hook ``name`` with ``msg`` (what it raised is logged, and play goes on): None once done, or the
        coroutine that awaits what it returned."""
        try:
            returned = hook(msg)
        except BaseException as error:
            if self._passed_on(error):
                raise
            self._hook_failed(name)
            return None
        if returned is not None and inspect.isawaitable(returned):
            if self.awaits:
                return self._hook_awaited(name, returned)
            log.error("%s; carrying on", self._not_awaited(name, returned))
        return None

    async def _hook_awaited(self, name: str, returned: Awaitable[object]) -> None:
        """What an async hook returned, awaited; what that raised is logged."""
        try:
            await returned
        except BaseException as error:
            if self._passed_on(error):
                raise
            self._hook_failed(name)

    def decide(self, name: str, decide: Callable[[Request], object],
               request: Request) -> Action | Mixed | Coroutine[Any, Any, Action | Mixed | None] | None:
        """The bot's answer, or None (meaning: send the safe action) if it raised or returned a non-Action; or the
        coroutine that awaits the answer and then gives one of those."""
        try:
            action = decide(request)
        except BaseException as error:
            if self._passed_on(error):
                raise
            self._decide_failed(name, request)
            return None
        if isinstance(action, (Action, Mixed)):
            return action
        if self.awaits and inspect.isawaitable(action):
            return self._decide_awaited(name, action, request)
        return self._an_action(name, action, request)

    async def _decide_awaited(self, name: str, answer: Awaitable[object], request: Request) -> Action | Mixed | None:
        """An async ``act`` or ``on_rejected``'s answer, awaited: ``decide``'s outcome."""
        try:
            action = await answer
        except BaseException as error:
            if self._passed_on(error):
                raise
            self._decide_failed(name, request)
            return None
        return self._an_action(name, action, request)

    def act_batch(self, requests: list[Request]) -> list[Any] | Coroutine[Any, Any, list[Any]]:
        """``act_batch``'s answers, one a request (each still to be checked), or the safe action for each request if
        it raised or gave another number of answers; or the coroutine that awaits them and then gives those."""
        try:
            answers = self.bot.act_batch(requests)
            if self.awaits and inspect.isawaitable(answers):
                return self._act_batch_awaited(requests, answers)
            return _one_each(requests, answers)  # type: ignore[arg-type]  # not awaited: a sequence, or list() raises
        except BaseException as error:
            if self._passed_on(error):
                raise
            return self._batch_failed(requests)

    async def _act_batch_awaited(self, requests: list[Request], answers: Awaitable[Sequence[object]]) -> list[Any]:
        """An async ``act_batch``'s answers, awaited: ``act_batch``'s outcome."""
        try:
            return _one_each(requests, await answers)
        except BaseException as error:
            if self._passed_on(error):
                raise
            return self._batch_failed(requests)

    def _passed_on(self, error: BaseException) -> bool:
        """Whether what a callback raised goes up to ``run`` rather than being logged and answered: whatever is not
        an Exception (KeyboardInterrupt, SystemExit), and a CancelledError unless the bot awaits and the SDK is not
        being stopped (then it came from the bot's own awaits: its bug, answered as any exception is)."""
        if isinstance(error, asyncio.CancelledError):
            return not self.awaits or _stopping()
        return not isinstance(error, Exception)

    # ------------------------------------------------------------------ what is logged when a callback fails

    def _an_action(self, name: str, action: object, request: Request) -> Action | Mixed | None:
        """``action`` if it is an Action; else None, having logged what ``name`` returned instead (``on_rejected``
        may return None: the safe action)."""
        if isinstance(action, (Action, Mixed)):
            return action
        if action is None and name == "on_rejected":
            return None
        if inspect.isawaitable(action):
            log.error("%s; sending %s", self._not_awaited(name, action), safe_action(request))
            return None
        log.error(
            "%s.%s returned %r, not an Action; sending %s",
            type(self.bot).__name__,
            name,
            action,
            safe_action(request),
        )
        return None

    def _not_awaited(self, name: str, returned: object) -> str:
        """What to say of a plain callback that returned an awaitable, which the SDK does not await (it awaits the
        callbacks of a bot that declared one ``async def``); a coroutine is closed, so Python adds no warning."""
        if inspect.iscoroutine(returned):
            returned.close()
        return (f"{type(self.bot).__name__}.{name} returned {returned!r}, an awaitable, but no callback of the bot "
                f"is declared async def, so nothing awaits it: declare it `async def {name}`")

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

    def _batch_failed(self, requests: Sequence[Request]) -> list[Any]:
        """Log why ``act_batch`` gave no answers (the exception being handled); the safe action for each request."""
        advice = nested_loop_advice("act_batch", sys.exc_info()[1])
        log.error("%s.act_batch raised%s; sending the safe action for all %d requests", type(self.bot).__name__,
                  f": {advice}" if advice else "", len(requests), exc_info=True)
        return [safe_action(r) for r in requests]
