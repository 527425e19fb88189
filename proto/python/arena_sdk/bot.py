"""``Bot``: the base class of a bot. Override ``act``; the hooks are there for bots that keep notes. Any of them may
be declared ``async def``: the SDK then awaits it on its event loop."""

from __future__ import annotations

import inspect
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Sequence
from typing import cast

from arena_sdk.actions import Action, Mixed, safe_action
from arena_sdk.pb import bot_pb2
from arena_sdk.request import Request

__all__ = ["Bot"]


class Bot(ABC):
    """A poker bot: ``act`` answers each request; every other method is an optional hook (the defaults do nothing).

    ``run(bot)`` calls them all on its event loop, one at a time, in the order the referee's messages arrive. Each
    may be a plain ``def`` (called directly) or an ``async def`` (awaited there: write ``async def act`` to await an
    async client; a plain one cannot ``asyncio.run`` inside the SDK's loop). An exception in any of them is logged
    and answered with ``safe_action``, never passed on: a buggy bot keeps its seat.

    ``max_tables``: how many tables the bot plays at once on its connection. A bot that acts from the request
    alone (or keys what it remembers by ``request.table_id``) can say 64 or more: the SDK multiplexes the tables and
    ``act`` is still called once per request. The default, 1, keeps a bot that remembers "the current hand" correct:
    the referee then never puts it in two hands at once. ``run(max_tables=...)``, ``--max-tables`` and
    ``ARENA_MAX_TABLES`` override it.
    """

    max_tables: int = 1

    @abstractmethod
    def act(self, request: Request) -> Action | Mixed | Awaitable[Action | Mixed]:
        """Your move: return ``fold()``, ``check()``, ``call()``, ``raise_to(amount)`` or ``all_in()``; or, for a
        bot that randomizes, ``mixed({action: probability, ...})`` and the referee draws one. ``async def act`` is
        awaited (one request at a time: to await several tables' at once, write ``async def act_batch``)."""

    def act_batch(self, requests: Sequence[Request]) -> Sequence[Action | Mixed] | Awaitable[Sequence[Action | Mixed]]:
        """Answer several requests at once (one per table), in order: override it to score many states in one go,
        e.g. with a neural network, or (``async def``) to await them together with ``asyncio.gather``. A bot that
        overrides it asks the referee for batches: every request ready at the same moment comes in one message, and
        the answers go back in one. The default calls ``act`` on each (and awaits each in turn if it is async)."""
        if inspect.iscoroutinefunction(self.act):
            return self._act_in_turn(requests)
        return [cast("Action | Mixed", self.act(request)) for request in requests]  # a plain act: an answer

    async def _act_in_turn(self, requests: Sequence[Request]) -> Sequence[Action | Mixed]:
        """The default ``act_batch`` of a bot whose ``act`` is async: each request's awaited in turn."""
        return [await cast("Awaitable[Action | Mixed]", self.act(request)) for request in requests]

    def on_welcome(self, welcome: bot_pb2.Welcome) -> Awaitable[None] | None:
        """You are seated: match id, first seat, table rules and clock policy. Called again, with your current seat,
        when the SDK took the seat back on a new stream after one broke (``MatchResult.reconnects``)."""

    def on_hand_start(self, msg: bot_pb2.HandStart) -> Awaitable[None] | None:
        """A hand starts: your seat in it (seats rotate in duplicate play), hole cards, every seat's stack."""

    def on_hand_end(self, msg: bot_pb2.HandEnd) -> Awaitable[None] | None:
        """A hand is over: board, shown hands, payoffs and the whole public history."""

    def on_match_end(self, msg: bot_pb2.MatchEnd) -> Awaitable[None] | None:
        """The match is over: the reason and every bot's result."""

    def on_error(self, error: bot_pb2.Error) -> Awaitable[None] | None:
        """The referee reported a protocol problem, e.g. a timeout (``error.fatal`` ends the match)."""

    def on_rejected(
        self, rejection: bot_pb2.ActionRejected, request: Request
    ) -> Action | Mixed | Awaitable[Action | Mixed | None] | None:
        """Your last action for ``request`` was illegal (``rejection.rule``, ``.message``): return another one.

        The state did not change and no new request comes; the answer goes out with the same ``request_id``.
        ``None`` means ``safe_action(request)``, which is also the default: check if free, else fold.
        """
        return safe_action(request)
