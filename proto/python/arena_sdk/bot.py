"""``Bot``: the base class of a bot. Override ``act``; the hooks are there for bots that keep notes."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from arena_sdk.actions import Action, Mixed, safe_action
from arena_sdk.pb import bot_pb2
from arena_sdk.request import Request

__all__ = ["Bot"]


class Bot(ABC):
    """A poker bot: ``act`` answers each request; every other method is an optional hook (the defaults do nothing).

    ``run(bot)`` calls them all from one thread, in the order the referee's messages arrive. An exception in any
    of them is logged and answered with ``safe_action``, never passed on: a buggy bot keeps its seat.

    ``max_tables``: how many tables the bot plays at once on its connection. A bot that acts from the request
    alone (or keys what it remembers by ``request.table_id``) can say 64 or more: the SDK multiplexes the tables and
    ``act`` is still called once per request. The default, 1, keeps a bot that remembers "the current hand" correct:
    the referee then never puts it in two hands at once. ``run(max_tables=...)``, ``--max-tables`` and
    ``ARENA_MAX_TABLES`` override it.
    """

    max_tables: int = 1

    @abstractmethod
    def act(self, request: Request) -> Action | Mixed:
        """Your move: return ``fold()``, ``check()``, ``call()``, ``raise_to(amount)`` or ``all_in()``; or, for a
        bot that randomizes, ``mixed({action: probability, ...})`` and the referee draws one."""

    def act_batch(self, requests: Sequence[Request]) -> Sequence[Action | Mixed]:
        """Answer several requests at once (one per table), in order: override it to score many states in one go,
        e.g. with a neural network. A bot that overrides it asks the referee for batches: every request ready at
        the same moment comes in one message, and the answers go back in one. The default calls ``act`` on each."""
        return [self.act(request) for request in requests]

    def on_welcome(self, welcome: bot_pb2.Welcome) -> None:
        """You are seated: match id, first seat, table rules and clock policy. Called again, with your current seat,
        when the SDK took the seat back on a new stream after one broke (``MatchResult.reconnects``)."""

    def on_hand_start(self, msg: bot_pb2.HandStart) -> None:
        """A hand starts: your seat in it (seats rotate in duplicate play), hole cards, every seat's stack."""

    def on_hand_end(self, msg: bot_pb2.HandEnd) -> None:
        """A hand is over: board, shown hands, payoffs and the whole public history."""

    def on_match_end(self, msg: bot_pb2.MatchEnd) -> None:
        """The match is over: the reason and every bot's result."""

    def on_error(self, error: bot_pb2.Error) -> None:
        """The referee reported a protocol problem, e.g. a timeout (``error.fatal`` ends the match)."""

    def on_rejected(self, rejection: bot_pb2.ActionRejected, request: Request) -> Action | Mixed | None:
        """Your last action for ``request`` was illegal (``rejection.rule``, ``.message``): return another one.

        The state did not change and no new request comes; the answer goes out with the same ``request_id``.
        ``None`` means ``safe_action(request)``, which is also the default: check if free, else fold.
        """
        return safe_action(request)
