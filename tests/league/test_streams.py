"""A league bot's streams over real gRPC, against a host in this process: the newest stream with a key takes over
the seat of the match in play, even while a request to the older stream is open (that request is played as absent,
as in a match; before the endpoint was one, the league ended it with a ConnectionError, recorded as illegal)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from arena.league.host import LeagueHost
from arena.league.settings import LeagueConfig
from arena.records import queries
from arena.records.db import Database
from arena.records.registry import Registry
from arena.referee import DecisionHow
from arena_sdk.pb import bot_pb2, bot_pb2_grpc, poker_pb2
from tests.league.test_admin import until
from tests.league.test_host import free_port

pytestmark = pytest.mark.timeout(120)


class Stream:
    """One Play call with a key: the messages it got, and an answer (check, else call) to every request."""

    def __init__(self, stub: bot_pb2_grpc.BotServiceStub, key: str, answer: bool = True) -> None:
        self.call = stub.Play()
        self.key = key
        self.answer = answer
        self.got: list[bot_pb2.RefereeMessage] = []
        self.requested = asyncio.Event()
        self.status: grpc.StatusCode | None = None

    async def run(self) -> None:
        await self.call.write(bot_pb2.BotMessage(join=bot_pb2.Join(token=self.key, bot_name="b", protocol_version=1)))
        try:
            async for message in self._messages():
                self.got.append(message)
                if message.WhichOneof("msg") != "action_request":
                    continue
                self.requested.set()
                request = message.action_request
                if self.answer:
                    kind = poker_pb2.ACTION_KIND_CHECK if request.legal.can_check else poker_pb2.ACTION_KIND_CALL
                    await self.call.write(bot_pb2.BotMessage(action=poker_pb2.Action(
                        table_id=request.table_id, hand_id=request.hand_id, request_id=request.request_id, kind=kind)))
        except grpc.aio.AioRpcError as exc:
            self.status = exc.code()

    async def _messages(self) -> AsyncIterator[bot_pb2.RefereeMessage]:
        while True:
            message = await self.call.read()
            if message is grpc.aio.EOF:
                return
            assert isinstance(message, bot_pb2.RefereeMessage)
            yield message

    def of(self, kind: str) -> list[bot_pb2.RefereeMessage]:
        return [m for m in self.got if m.WhichOneof("msg") == kind]


async def replaced_mid_request(tmp_path: Path) -> None:
    db = Database(tmp_path / "league.db")
    registry = Registry(db)
    keys = {name: registry.add(name) for name in ("a", "b")}
    port = free_port()
    config = LeagueConfig.from_dict({"name": "newest", "grpc": f"127.0.0.1:{port}", "http": "off", "hands": 4,
                                     "matches_at_once": 1, "matchmaking": {"window": 50}}, tmp_path)
    host = LeagueHost(config, db)
    await host.start()
    stop = asyncio.Event()
    running = asyncio.create_task(host.run(stop))
    tasks = []
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = bot_pb2_grpc.BotServiceStub(channel)
            silent = Stream(stub, keys["a"], answer=False)  # asked, it never answers: the request stays open
            other = Stream(stub, keys["b"])
            tasks = [asyncio.create_task(s.run()) for s in (silent, other)]
            await asyncio.wait_for(silent.requested.wait(), 30)
            [match_id] = host.live
            host.paused = True  # no match after this one
            newest = Stream(stub, keys["a"])  # the same key again, while the request is open
            tasks.append(asyncio.create_task(newest.run()))
            await until("the match to end", lambda: not host.live)
            await until("the newest stream to hear the MatchEnd", lambda: newest.of("match_end"), 10)  # sent as the
            # match ends: read by the stream a moment later, which a busy machine can stretch past the line above
            await asyncio.wait_for(tasks[0], 10)
    finally:
        stop.set()
        await running
        for task in tasks:
            task.cancel()
        await host.stop()
    [error] = [m.error for m in silent.of("error")]
    assert error.code == bot_pb2.ERROR_CODE_BAD_TOKEN and "another connection joined with your key" in error.message
    assert silent.status is grpc.StatusCode.ALREADY_EXISTS
    [welcome] = newest.of("welcome")
    assert welcome.welcome.match_id == match_id  # the newest stream took over the seat of the match in play
    assert [m.match_end.match_id for m in newest.of("match_end")] == [match_id]
    info = queries.match_info(db, match_id)
    assert host.rated == 1 and info is not None and info.status.over  # finished, not crashed
    hows = [d.how for r in queries.hand_records(db, match_id) for d in r.decisions]
    assert DecisionHow.ABSENT in hows  # the open request, and the rest of that hand, were played for it
    assert DecisionHow.ILLEGAL not in hows  # never charged as an illegal action (it once was: a ConnectionError)


def test_the_newest_stream_with_a_key_takes_over_a_match_in_play_even_mid_request(tmp_path: Path) -> None:
    asyncio.run(replaced_mid_request(tmp_path))
