"""The Python SDK's own work a message, a plain ``def act`` beside an ``async def act``: ``Session.play`` over a
scripted stream with every message already read (tests/sdk/test_read_ahead's stand-in for grpc.aio's call, so no
socket and no gRPC in the figure), the calling station's strategy, one request a message and then batches of 8.

``python -m tests.bench.bench_sdk_dispatch``. CPU time of this process, best of ``REPEATS``, the two bots
alternating; printed, never asserted.
"""

from __future__ import annotations

import asyncio
import time

from arena_sdk import Action, Bot, Request, call, check
from arena_sdk.pb import bot_pb2
from arena_sdk.session import Session
from tests.sdk.helpers import make_request
from tests.sdk.test_read_ahead import ScriptedCall, ScriptedChannel

MESSAGES = 4000
TABLES = 8  # requests in a batch
REPEATS = 7


class PlainStation(Bot):
    def act(self, request: Request) -> Action:
        return check() if request.legal.can_check else call()


class AsyncStation(Bot):
    async def act(self, request: Request) -> Action:
        return check() if request.legal.can_check else call()


def stream(batched: bool) -> list[bot_pb2.RefereeMessage]:
    """A Welcome, ``MESSAGES`` requests (or batches of ``TABLES`` requests), the MatchEnd."""
    messages = [bot_pb2.RefereeMessage(welcome=bot_pb2.Welcome(match_id="m", tables=TABLES, batches=batched))]
    for i in range(MESSAGES):
        message = bot_pb2.RefereeMessage()
        if batched:
            for table in range(TABLES):
                message.batch.messages.add(action_request=make_request(request_id=i, table_id=f"t{table}",
                                                                       hand_id=f"h{i}"))
        else:
            message.action_request.CopyFrom(make_request(request_id=i, table_id="t0", hand_id=f"h{i}"))
        messages.append(message)
    messages.append(bot_pb2.RefereeMessage(match_end=bot_pb2.MatchEnd(match_id="m")))
    return messages


def us_a_message(bot: Bot, messages: list[bot_pb2.RefereeMessage]) -> float:
    """CPU microseconds a message of one whole ``play`` of ``messages``."""
    scripted = ScriptedCall(messages)
    start = time.process_time()
    result = asyncio.run(Session(bot, bot_pb2.Join(token="t")).play(ScriptedChannel(scripted)))  # type: ignore[arg-type]
    took = time.process_time() - start
    assert result.ok, result.error
    return 1e6 * took / MESSAGES


def main() -> None:
    """Print both bots' cost a message, for single requests and for batches."""
    print(f"the SDK's work a message (no socket), calling station, CPU, best of {REPEATS}, {MESSAGES:,} messages")
    for batched in (False, True):
        messages = stream(batched)
        best = {"def act": float("inf"), "async def act": float("inf")}
        for _ in range(REPEATS):
            best["def act"] = min(best["def act"], us_a_message(PlainStation(), messages))
            best["async def act"] = min(best["async def act"], us_a_message(AsyncStation(), messages))
        per = TABLES if batched else 1
        shape = f"batches of {TABLES} requests" if batched else "one request a message"
        print(f"  {shape:<22} " + "  ".join(f"{name}: {us:6.2f} us a message ({us / per:5.2f} a request)"
                                           for name, us in best.items()))


if __name__ == "__main__":
    main()
