"""The integrity issue's stall tests, against a league host: a bot that floods its stream and one that answers
too late are dealt with at their own tables, while the honest bots play on without a single time-out; a key that
joins over and over is refused for a while."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import shlex
import sys
from pathlib import Path

import grpc
import pytest

from arena.league.host import JOIN_BURST, HostError, LeagueHost
from arena.league.settings import LeagueConfig
from arena.records import queries
from arena.records.db import Database
from arena.records.registry import Registry
from arena.referee import BotOutcome
from arena_sdk.pb import bot_pb2
from tests.bots import random_bot
from tests.league.test_admin import until
from tests.league.test_host import free_port

pytestmark = pytest.mark.timeout(180)
EVIL = Path(__file__).resolve().parents[1] / "referee" / "evil_bot.py"


async def scenario(tmp_path: Path) -> None:
    db = Database(tmp_path / "league.db")
    registry = Registry(db)
    keys = {name: registry.add(name) for name in ("h1", "h2", "flood", "late")}
    port = free_port()
    config = LeagueConfig.from_dict({
        "name": "stall", "grpc": f"127.0.0.1:{port}", "http": "off", "hands": 8, "matches_at_once": 2,
        "clock": {"per_action_ms": 300, "time_bank_ms": 0, "max_violations": 0}, "matchmaking": {"window": 50},
    }, tmp_path)
    host = LeagueHost(config, db)
    await host.start()
    stop = asyncio.Event()
    running = asyncio.create_task(host.run(stop))
    evil = [sys.executable, str(EVIL)]
    commands = {"h1": shlex.split(random_bot(1)), "h2": shlex.split(random_bot(2)), "flood": evil, "late": evil}
    modes = {"flood": "flood", "late": "timeout"}
    processes = []
    for name, args in commands.items():
        env = {**os.environ, "ARENA_ADDRESS": f"127.0.0.1:{port}", "ARENA_KEY": keys[name],
               "ARENA_TOKEN": keys[name] if name in modes else "", "EVIL_MODE": modes.get(name, "good")}
        processes.append(await asyncio.create_subprocess_exec(
            *args, env=env, stdout=(tmp_path / f"{name}.log").open("wb"),
            stderr=asyncio.subprocess.STDOUT))
    try:
        await until("the flooding bot cut off", lambda: "RESOURCE_EXHAUSTED" in (tmp_path / "flood.log").read_text())
        await until("the late bot's first match over", lambda: any(
            set(m.bots) == {"h1", "late"} or set(m.bots) == {"h2", "late"} for m in host.live.values()) or
            host.rated >= 6, timeout=60)
        await until("eight matches", lambda: host.rated >= 8, timeout=90)
    finally:
        stop.set()
        await running
        await host.stop()  # before the bots go: the matches in play end as interrupted, not with bots gone
        for process in processes:
            if process.returncode is None:
                process.kill()
                await process.wait()
    records = Database(tmp_path / "league.db", read_only=True)
    honest = {"h1", "h2"}
    played = set()
    for outcome in queries.bot_outcomes(records, queries.match_ids(records)):
        if outcome.name in honest:
            assert outcome.outcome is BotOutcome.OK, outcome
    for match_id in queries.match_ids(records):
        names = [c.name for c in queries.participants(records, match_id)]
        played.add(frozenset(names))
        violations = queries.violation_counts(records, match_id)
        for index, name in enumerate(names):
            if name in honest:
                assert violations.get(index, 0) == 0, (match_id, name, violations)  # never timed out
    assert frozenset(honest) in played
    lines = [json.loads(line[5:]) for line in (tmp_path / "flood.log").read_text().splitlines()
             if line.startswith("EVIL ")]
    assert any("more than 50 messages per second" in json.dumps(entry) for entry in lines)


@pytest.mark.foreground  # 300 ms a decision and no time bank: at load 11 an honest bot once missed one
def test_flooding_and_late_bots_do_not_slow_the_honest_ones(tmp_path: Path) -> None:
    asyncio.run(scenario(tmp_path))


async def rejoin(tmp_path: Path) -> None:
    db = Database(tmp_path / "league.db")
    key = Registry(db).add("churn")
    port = free_port()
    config = LeagueConfig.from_dict({"name": "churn", "grpc": f"127.0.0.1:{port}", "http": "off"}, tmp_path)
    host = LeagueHost(config, db)
    await host.start()
    join = bot_pb2.BotMessage(join=bot_pb2.Join(token=key, bot_name="c", protocol_version=1))
    answers = []
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            play = channel.stream_stream("/arena.v1.BotService/Play",
                                         request_serializer=bot_pb2.BotMessage.SerializeToString,
                                         response_deserializer=bot_pb2.RefereeMessage.FromString)
            for _ in range(JOIN_BURST + 3):  # each stream joins and half-closes at once, which ends it
                call = play(iter([join]))
                try:
                    first = await asyncio.wait_for(call.read(), 3)
                    answers.append(first)
                except (TimeoutError, grpc.aio.AioRpcError) as exc:
                    answers.append(exc)
                call.cancel()
                await asyncio.sleep(0.05)
    finally:
        await host.stop()
    errors = [a for a in answers if isinstance(a, bot_pb2.RefereeMessage) and a.WhichOneof("msg") == "error"]
    assert len(errors) == 3 and all(e.error.code == bot_pb2.ERROR_CODE_RATE_LIMITED for e in errors)
    assert errors == answers[JOIN_BURST:]  # the first JOIN_BURST joined (each ended by its half-close)
    assert "joins with this key" in errors[0].error.message


def test_a_key_that_joins_over_and_over_is_refused_for_a_while(tmp_path: Path) -> None:
    asyncio.run(rejoin(tmp_path))


async def two_hosts(tmp_path: Path) -> None:
    config = LeagueConfig.from_dict({"name": "one", "grpc": f"127.0.0.1:{free_port()}", "http": "off"}, tmp_path)
    first = LeagueHost(config, Database(tmp_path / "league.db"))
    await first.start()
    other = dataclasses.replace(config, grpc=("127.0.0.1", free_port()))
    second = LeagueHost(other, Database(tmp_path / "league.db"))
    try:
        with pytest.raises(HostError, match=rf"another arena host runs on .*league.db \(pid {os.getpid()}\)"):
            await second.start()
    finally:
        await first.stop()
    await second.start()  # once the first has stopped
    await second.stop()


def test_one_host_per_league_database(tmp_path: Path) -> None:
    asyncio.run(two_hosts(tmp_path))


def test_a_port_someone_listens_on_is_taken() -> None:
    import socket

    from arena.transport.server import port_is_free

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        assert port_is_free("127.0.0.1", listener.getsockname()[1]) == "Address already in use"
    assert port_is_free("127.0.0.1", free_port()) is None


def test_a_taken_http_port_is_a_clear_error(tmp_path: Path) -> None:
    import socket
    import subprocess

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        http = taken.getsockname()[1]
        (tmp_path / "l.toml").write_text(f'name = "x"\ngrpc = "127.0.0.1:{free_port()}"\nhttp = "127.0.0.1:{http}"\n')
        proc = subprocess.run([sys.executable, "-m", "arena", "host", "l.toml", "--db", "l.db"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert f"cannot serve the live site on 127.0.0.1:{http}" in proc.stderr and 'http = "off"' in proc.stderr
