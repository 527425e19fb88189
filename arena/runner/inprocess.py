"""Run an SDK bot inside the referee's process: the same ActionRequest a remote bot would get, without the network.

For tests, benchmarks and quick experiments; a bot that may hang or crash belongs in its own process (arena match).
It is a seat (the referee's) built from the wire's conversions (transport's), so it sits in the runner, beside the
other ways a seat is made, and never in the SDK, which imports nothing from arena.
"""

from __future__ import annotations

import inspect

from arena.referee import Answer, Decision, InvalidAction, Seat
from arena.transport import convert
from arena_sdk.actions import Action, Mixed
from arena_sdk.bot import Bot
from arena_sdk.pb import poker_pb2
from arena_sdk.request import Request


class InProcessSeat(Seat):
    """A seat whose decisions come from an ``arena_sdk.Bot`` called directly (awaited, if its ``act`` is async)."""

    def __init__(self, name: str, bot: Bot) -> None:
        self.name = name
        self.bot = bot

    async def decide(self, decision: Decision, retry: bool) -> Answer:
        request = Request(convert.action_request(decision, decision.timeouts))
        answer = self.bot.act(request)
        if not isinstance(answer, (Action, Mixed)) and inspect.isawaitable(answer):
            answer = await answer  # ``async def act``
        if isinstance(answer, Mixed):
            message = poker_pb2.Action(policy=[poker_pb2.ActionChoice(
                kind=poker_pb2.ActionKind.ValueType(int(a.kind)), amount=a.amount, probability=p)
                for a, p in answer.choices], comment=answer.comment)
        elif isinstance(answer, Action):
            message = poker_pb2.Action(kind=int(answer.kind), amount=answer.amount,  # type: ignore[arg-type]
                                       comment=answer.comment)
        else:
            raise InvalidAction(f"R6.1: {answer!r} is not an action")
        try:
            return convert.action_from_pb(message)
        except convert.MalformedAction as exc:
            raise InvalidAction(str(exc)) from None

