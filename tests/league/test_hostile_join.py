"""What league bots say of themselves, and what operators register, is capped and reaches no terminal raw (issue 25),
against a host in this process over real gRPC.

A Join over a cap is refused as in a match (a Join exactly at the caps is taken in); an owner over its cap is refused
by the registry. A bot (the C++ sample bot's random style, a real process) whose version carries an OSC title
sequence, a forged ``verify ok`` line and a direction override plays a match; ``arena league status`` (text and
JSON) and ``arena leaderboard --db league.db`` show that version escaped. Control: the admin service hands the
version over raw, so the escaping on the way to the terminal is what keeps it out."""

from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from arena.league.admin import AdminServicer, admin_token_path, load_or_create_token
from arena.league.host import LeagueHost
from arena.league.settings import LeagueConfig
from arena.records.db import Database
from arena.records.registry import Registry, RegistryError
from arena_sdk.pb import bot_pb2, bot_pb2_grpc, league_pb2, league_pb2_grpc
from tests.bots import random_bot
from tests.league.test_admin import until
from tests.league.test_host import free_port

pytestmark = pytest.mark.timeout(120)

HOSTILE = "\x1b]0;pwned\x07\nverify ok\u202e"  # sets the terminal's title, forges a line, reverses what follows
SHOWN = "\\x1b]0;pwned\\x07\\x0averify ok\\u202e"
RAW = ("\x1b", "\x07", "\u202e", "\x9b")


def test_an_owner_or_a_name_over_its_cap_is_not_registered(tmp_path: Path) -> None:
    registry = Registry(Database(tmp_path / "league.db"))
    with pytest.raises(RegistryError, match="owner: a bot's owner is at most 64 characters, got 65"):
        registry.add("alice", owner="o" * 65)
    with pytest.raises(RegistryError, match="a bot's name is at most 64 characters, got 65"):
        registry.add("n" * 65)
    registry.add("n" * 64, owner="o" * 64)  # exactly at the caps
    assert [(b.name, b.owner) for b in registry.list()] == [("n" * 64, "o" * 64)]


def test_arena_bots_add_refuses_an_owner_over_its_cap_naming_the_limit(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "arena", "bots", "add", "alice", "--db", str(tmp_path / "l.db"),
                           "--owner", "o" * 10240], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 1 and "a bot's owner is at most 64 characters, got 10240" in proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr) < 500


def joined_at_the_caps(host: LeagueHost) -> bool:
    member = host.members.get("capped")
    return member is not None and member.live and member.version == "v" * 64


async def joins_with_a_key(tmp_path: Path) -> list[tuple[list[bot_pb2.RefereeMessage], grpc.StatusCode | None]]:
    db = Database(tmp_path / "league.db")
    key = Registry(db).add("capped")
    port = free_port()
    config = LeagueConfig.from_dict({"name": "caps", "grpc": f"127.0.0.1:{port}", "http": "off"}, tmp_path)
    host = LeagueHost(config, db)
    await host.start()
    out = []
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = bot_pb2_grpc.BotServiceStub(channel)
            for fields in ({"bot_name": "c", "bot_version": "v" * 10240}, {"bot_name": "n" * 65},
                           {"bot_name": "n" * 64, "bot_version": "v" * 64, "language": "l" * 32}):
                call = stub.Play()
                await call.write(bot_pb2.BotMessage(join=bot_pb2.Join(token=key, protocol_version=1, **fields)))
                got: list[bot_pb2.RefereeMessage] = []
                status = None
                if fields.get("language"):  # at the caps: joined (a league sends nothing until it puts the bot
                    await until("the join at the caps", lambda: joined_at_the_caps(host))  # in a match)
                else:
                    try:
                        message = await asyncio.wait_for(call.read(), 5)
                        assert isinstance(message, bot_pb2.RefereeMessage)
                        got.append(message)
                        await asyncio.wait_for(call.read(), 5)
                    except grpc.aio.AioRpcError as exc:
                        status = exc.code()
                call.cancel()
                out.append((got, status))
    finally:
        await host.stop()
    return out


def test_a_league_refuses_a_join_over_a_cap_and_takes_one_at_the_caps(tmp_path: Path) -> None:
    version, name, at_caps = asyncio.run(joins_with_a_key(tmp_path))
    for (got, status), text in ((version, "Join.bot_version: a bot's version is at most 64 characters, got 10240"),
                                (name, "Join.bot_name: a bot's name is at most 64 characters, got 65")):
        [message] = got
        assert message.error.code == bot_pb2.ERROR_CODE_MALFORMED and message.error.fatal
        assert message.error.message.startswith(text) and status is grpc.StatusCode.INVALID_ARGUMENT
    assert at_caps == ([], None)


def arena(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    return subprocess.run([sys.executable, "-m", "arena", *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=60, check=False)


async def hostile_version(tmp_path: Path) -> tuple[list[subprocess.CompletedProcess[str]], league_pb2.LeagueStatus]:
    db = Database(tmp_path / "league.db")
    registry = Registry(db)
    keys = {name: registry.add(name) for name in ("evil", "plain")}
    port = free_port()
    config = LeagueConfig.from_dict({"name": "hostile", "grpc": f"127.0.0.1:{port}", "http": "off", "hands": 4,
                                     "matches_at_once": 1, "matchmaking": {"window": 50}}, tmp_path)
    host = LeagueHost(config, db)
    token_file = admin_token_path(db.path, None)
    token = load_or_create_token(token_file)
    host.server.services.append(AdminServicer(host, token).add_to)
    await host.start()
    stop = asyncio.Event()
    running = asyncio.create_task(host.run(stop))
    bots = []
    try:
        for name, version in (("evil", HOSTILE), ("plain", "1")):
            env = {**os.environ, "ARENA_ADDRESS": f"127.0.0.1:{port}", "ARENA_KEY": keys[name],
                   "ARENA_BOT_VERSION": version}
            bots.append(await asyncio.create_subprocess_exec(*shlex.split(random_bot(len(bots) + 1)), env=env,
                                                             stdout=asyncio.subprocess.DEVNULL,
                                                             stderr=asyncio.subprocess.DEVNULL))
        await until("a match played", lambda: host.rated >= 1)
        host.paused = True
        address = f"127.0.0.1:{port}"
        commands = [("league", "status", "--address", address, "--token-file", token_file),
                    ("league", "status", "--json", "--address", address, "--token-file", token_file),
                    ("leaderboard", "--db", db.path), ("leaderboard", "--json", "--db", db.path)]
        procs = [await asyncio.to_thread(arena, *command, cwd=tmp_path) for command in commands]
        async with grpc.aio.insecure_channel(address) as channel:
            raw = await league_pb2_grpc.LeagueAdminStub(channel).Status(
                league_pb2.AdminRequest(), metadata=(("authorization", f"Bearer {token}"),))
    finally:
        stop.set()
        await running
        await host.stop()
        for bot in bots:
            if bot.returncode is None:
                bot.kill()
                await bot.wait()
    return procs, raw


def test_a_hostile_version_is_shown_escaped_by_league_status_and_the_leaderboard(tmp_path: Path) -> None:
    procs, raw = asyncio.run(hostile_version(tmp_path))
    status, status_json, board, board_json = procs
    for proc in procs:
        assert proc.returncode == 0, proc.stderr
        out = proc.stdout + proc.stderr
        assert "Traceback" not in out
        assert not [c for c in RAW if c in out], out  # no control character reaches the terminal
    assert f"evil {SHOWN} from" in status.stdout  # shown, escaped, on the bot's own line
    assert not any(line.startswith("verify ok") for line in status.stdout.splitlines())  # no forged line
    assert "evil@\\" in board.stdout and "ok\\u20" in board.stdout  # the table's cell, cut to its width: escaped
    assert "\\u001b]0;pwned\\u0007\\nverify ok\\u202e" in status_json.stdout + board_json.stdout  # JSON escapes
    assert HOSTILE in [bot.version for bot in raw.bots]  # control: the version reached the host raw
