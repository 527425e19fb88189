"""The SDK's read-ahead: messages that are already here when the bot has answered one are handled first, and all
their answers go back in one write (one ActionBatch), in the order the requests came; not past ``_MERGE_MESSAGES``
messages or ``_MERGE_S`` seconds. The stream is a scripted stand-in for grpc.aio's call: which messages gRPC has read
by a given moment cannot be arranged over a real socket (the real stream is played by tests/sdk/test_client.py)."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Sequence
from typing import Any

import grpc
import pytest

from arena_sdk import Action, Bot, Request, call, check
from arena_sdk import session as sdk_session
from arena_sdk.pb import bot_pb2, poker_pb2
from arena_sdk.session import Session
from tests.sdk.helpers import make_request


class ScriptedCall:
    """grpc.aio's stream-stream call with every message already read: ``read`` never waits."""

    def __init__(self, messages: Sequence[bot_pb2.RefereeMessage]) -> None:
        self.messages = deque(messages)
        self.written: list[bot_pb2.BotMessage] = []
        self.cancelled = False

    async def read(self) -> Any:
        return self.messages.popleft() if self.messages else grpc.aio.EOF  # type: ignore[attr-defined]

    async def write(self, message: bot_pb2.BotMessage) -> None:
        self.written.append(message)

    async def done_writing(self) -> None:
        pass

    def done(self) -> bool:
        return not self.messages

    def cancel(self) -> None:
        self.cancelled = True


class ScriptedChannel:
    """Hands the stub its scripted call."""

    def __init__(self, call: ScriptedCall) -> None:
        self.call = call

    def stream_stream(self, *args: Any, **kwargs: Any) -> Any:
        return lambda *a, **k: self.call


class Station(Bot):
    def __init__(self, think_s: float = 0.0) -> None:
        self.think_s = think_s

    def act(self, request: Request) -> Action:
        time.sleep(self.think_s)
        return check() if request.legal.can_check else call()


def request(table: str, request_id: int) -> bot_pb2.RefereeMessage:
    return bot_pb2.RefereeMessage(action_request=make_request(request_id=request_id, table_id=table,
                                                              hand_id=f"m1-{table}-h1"))


def script() -> list[bot_pb2.RefereeMessage]:
    """A Welcome, two requests alone, a batch of two, the MatchEnd: all there before the bot answers the first."""
    batch = bot_pb2.RefereeMessage()
    batch.batch.messages.extend([request("t3", 3), request("t4", 4)])
    return [bot_pb2.RefereeMessage(welcome=bot_pb2.Welcome(match_id="m1", tables=4, batches=True)),
            request("t1", 1), request("t2", 2), batch,
            bot_pb2.RefereeMessage(match_end=bot_pb2.MatchEnd(match_id="m1"))]


def play(bot: Bot) -> list[bot_pb2.BotMessage]:
    """What ``bot`` writes on the scripted stream after its Join."""
    scripted = ScriptedCall(script())
    result = asyncio.run(Session(bot, bot_pb2.Join(token="t")).play(ScriptedChannel(scripted)))  # type: ignore[arg-type]
    assert result.ok, result.error
    assert scripted.written[0].WhichOneof("msg") == "join"
    return scripted.written[1:]


def answered(messages: Sequence[bot_pb2.BotMessage]) -> list[list[str]]:
    """Per write, the tables its answers are for."""
    return [[message.action.table_id] if message.WhichOneof("msg") == "action"
            else [a.table_id for a in message.actions.actions] for message in messages]


def test_answers_to_messages_already_here_go_in_one_write_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sdk_session, "_MERGE_S", 5.0)  # however loaded the machine: the time bound is tested below
    written = play(Station())
    assert answered(written) == [["t1", "t2", "t3", "t4"]]
    assert [a.request_id for a in written[0].actions.actions] == [1, 2, 3, 4]
    assert all(a.kind == poker_pb2.ACTION_KIND_CALL for a in written[0].actions.actions)


def test_without_read_ahead_each_message_is_answered_by_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sdk_session, "_MERGE_S", 5.0)
    monkeypatch.setattr(sdk_session, "_MERGE_MESSAGES", 1)  # the positive control: one message per write
    assert answered(play(Station())) == [["t1"], ["t2"], ["t3", "t4"]]


def test_a_slow_bot_writes_what_it_has_answered_without_waiting_for_the_rest() -> None:
    assert sdk_session._MERGE_S < 0.02
    assert answered(play(Station(think_s=0.02))) == [["t1"], ["t2"], ["t3", "t4"]]


def test_merged_answers_keep_every_action_in_order() -> None:
    session = Session(Station(), bot_pb2.Join())
    one = bot_pb2.BotMessage(action=poker_pb2.Action(table_id="a", request_id=1))
    session.outbox.put(one)
    assert session._merged_answers() is one  # alone, as it was built
    two = bot_pb2.BotMessage()
    two.actions.actions.add(table_id="b", request_id=2)
    two.actions.actions.add(table_id="c", request_id=3, comment="why")
    for message in (one, two, bot_pb2.BotMessage(action=poker_pb2.Action(table_id="d", request_id=4))):
        session.outbox.put(message)
    merged = session._merged_answers()
    assert [(a.table_id, a.request_id) for a in merged.actions.actions] == [("a", 1), ("b", 2), ("c", 3), ("d", 4)]
    assert merged.actions.actions[2].comment == "why"
    assert session.outbox.empty()
