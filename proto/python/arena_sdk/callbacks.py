"""The bot's callbacks as ``run`` calls them, on its event loop: whether the bot declared any of them ``async def``
(the SDK then awaits them there), and what to tell its author when a plain one tries to run an event loop of its own
inside the SDK's (``asyncio.run``, ``loop.run_until_complete``), which asyncio refuses with a bare RuntimeError."""

from __future__ import annotations

import inspect

from arena_sdk.bot import Bot

__all__ = ["CALLBACKS", "declares_async", "nested_loop_advice"]

CALLBACKS = ("act", "act_batch", "on_rejected", "on_welcome", "on_hand_start", "on_hand_end", "on_match_end",
             "on_error")

# What asyncio says when code that runs on a loop asks for another loop to run:
_NESTED_LOOP = (
    "cannot be called from a running event loop",  # asyncio.run(), asyncio.Runner.run()
    "This event loop is already running",  # run_until_complete / run_forever on the SDK's own loop
    "Cannot run the event loop while another loop is running",  # the same on a new loop
)


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
