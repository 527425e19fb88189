"""A batch's hand starts and ends reach the bot's own hooks, in order with its requests, however the hooks were given
(a method, an async method, a function set on the instance), and cost no call where the bot keeps Bot's."""

from __future__ import annotations

import asyncio
from typing import Any

from arena_sdk import Action, Bot, Request, call, check
from arena_sdk.dispatch import Dispatch
from arena_sdk.pb import bot_pb2
from tests.sdk.helpers import make_request


def batch() -> bot_pb2.RefereeMessage:
    message = bot_pb2.RefereeMessage()
    for table in ("t1", "t2"):
        message.batch.messages.add(hand_start=bot_pb2.HandStart(table_id=table, hand_id=f"{table}-h"))
        message.batch.messages.add(action_request=make_request(request_id=1, table_id=table, hand_id=f"{table}-h"))
        message.batch.messages.add(hand_end=bot_pb2.HandEnd(table_id=table, hand_id=f"{table}-h"))
    return message


class Heard(Bot):
    def __init__(self) -> None:
        self.heard: list[str] = []

    def act(self, request: Request) -> Action:
        self.heard.append(f"act {request.table_id}")
        return check() if request.legal.can_check else call()


class Methods(Heard):
    def on_hand_start(self, msg: bot_pb2.HandStart) -> None:
        self.heard.append(f"start {msg.table_id}")

    def on_hand_end(self, msg: bot_pb2.HandEnd) -> None:
        self.heard.append(f"end {msg.table_id}")


class AsyncMethods(Heard):
    async def on_hand_start(self, msg: bot_pb2.HandStart) -> None:
        await asyncio.sleep(0)
        self.heard.append(f"start {msg.table_id}")

    async def on_hand_end(self, msg: bot_pb2.HandEnd) -> None:
        self.heard.append(f"end {msg.table_id}")


def heard(bot: Heard) -> list[str]:
    dispatch = Dispatch(bot, bot_pb2.Join(token="t"))

    async def handle() -> None:
        later: Any = dispatch.handle(batch())
        if later is not None:
            await later

    asyncio.run(handle())
    answers = dispatch.outbox.get_nowait()
    assert [a.table_id for a in answers.actions.actions] == ["t1", "t2"]
    assert dispatch.open == {}  # each hand's end closed its table's request
    return bot.heard


def test_the_hooks_of_a_batch_are_called_in_order_with_its_requests() -> None:
    # (a plain bot's requests are answered together once the batch is read: its hooks come first)
    assert heard(Methods()) == ["start t1", "end t1", "start t2", "end t2", "act t1", "act t2"]
    assert heard(AsyncMethods()) == ["start t1", "end t1", "start t2", "end t2", "act t1", "act t2"]
    bot = Heard()
    bot.on_hand_end = lambda msg: bot.heard.append(f"end {msg.table_id}")  # type: ignore[method-assign]
    assert heard(bot) == ["end t1", "end t2", "act t1", "act t2"]
    assert heard(Heard()) == ["act t1", "act t2"]


def test_a_hook_the_bot_sets_as_it_plays_is_called_in_a_batch() -> None:
    """A hook set after the bot joined (here when it is welcomed) is called from then on, in a batch as alone."""

    class Late(Heard):
        def on_welcome(self, welcome: bot_pb2.Welcome) -> None:
            self.on_hand_start = lambda msg: self.heard.append(f"start {msg.table_id}")  # type: ignore[method-assign]

    bot = Late()
    dispatch = Dispatch(bot, bot_pb2.Join(token="t"))

    async def handle(*messages: bot_pb2.RefereeMessage) -> None:
        for message in messages:
            later: Any = dispatch.handle(message)
            if later is not None:
                await later

    asyncio.run(handle(bot_pb2.RefereeMessage(welcome=bot_pb2.Welcome(match_id="m")), batch()))
    assert bot.heard == ["start t1", "start t2", "act t1", "act t2"]
