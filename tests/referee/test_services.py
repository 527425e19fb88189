"""The referee's other faces over real gRPC: the spectator service, health and reflection, TLS with ``arena serve``,
and the message-size limit.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

from arena.referee import ClockPolicy, MatchSpec
from arena.runner.bots import BotProcess, BotSpec
from arena.runner.remote_match import play, prepare_match
from arena_sdk.pb import arena_pb2, arena_pb2_grpc, bot_pb2, bot_pb2_grpc
from tests.bots import caller, python_bot

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.timeout(120)


def test_spectators_list_get_and_watch_a_match_with_public_information_only() -> None:
    async def scenario() -> tuple[list[arena_pb2.MatchEvent], arena_pb2.ListMatchesResponse, arena_pb2.MatchInfo,
                                  str]:
        spec = MatchSpec("watched", "seed", 6, policy=ClockPolicy(connect_timeout_ms=15000))
        setup = await prepare_match(spec, ["a", "b"], local=True)
        channel = grpc.aio.insecure_channel(setup.server.address)
        stub = arena_pb2_grpc.ArenaServiceStub(channel)
        events: list[arena_pb2.MatchEvent] = []

        async def watch() -> None:
            async for event in stub.WatchMatch(arena_pb2.WatchMatchRequest(match_id="watched")):
                events.append(event)

        watcher = asyncio.create_task(watch())
        bots = [BotProcess(BotSpec(n, caller())) for n in ("a", "b")]
        for bot, seat in zip(bots, setup.seats, strict=True):
            await bot.start(setup.server.socket_path, seat.token, REPO)
        await play(setup)
        await asyncio.wait_for(watcher, 10)
        listed = await stub.ListMatches(arena_pb2.ListMatchesRequest())
        info = await stub.GetMatch(arena_pb2.GetMatchRequest(match_id="watched"))
        with pytest.raises(grpc.aio.AioRpcError) as missing:
            await stub.GetMatch(arena_pb2.GetMatchRequest(match_id="nope"))
        await asyncio.gather(*(b.stop() for b in bots))
        await channel.close()
        await setup.server.stop()
        return events, listed, info, str(missing.value.code())

    events, listed, info, missing = asyncio.run(scenario())
    hands = [e.hand_finished for e in events if e.WhichOneof("event") == "hand_finished"]
    assert len(hands) == 6
    assert [e.info.status for e in events if e.WhichOneof("event") == "info"][-1] == arena_pb2.MATCH_STATUS_FINISHED
    for summary in hands:
        shown = {c for s in summary.shown for c in s.cards}
        dealt = [e for e in summary.history if e.kind == 5]  # DEAL_HOLE: never with cards for a spectator
        assert dealt and all(not e.cards for e in dealt)
        seen = {c for e in summary.history for c in e.cards}
        assert seen <= shown | set(summary.board)
        assert sum(p.net for p in summary.payoffs) == 0
    assert [m.match_id for m in listed.matches] == ["watched"]
    assert info.hands_played == 6 and info.status == arena_pb2.MATCH_STATUS_FINISHED
    assert sum(s.net_chips for s in info.seats) == 0
    assert missing == "StatusCode.NOT_FOUND"


def test_health_and_reflection_let_grpcurl_style_tools_discover_the_services() -> None:
    async def scenario() -> tuple[int, list[str]]:
        spec = MatchSpec("idle", "seed", 2)
        setup = await prepare_match(spec, ["a", "b"])
        channel = grpc.aio.insecure_channel(setup.server.address)
        health = await health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service="arena.v1.BotService")
        )
        await channel.close()
        def discover() -> list[str]:  # the reflection client is synchronous: never block the server's loop with it
            with grpc.insecure_channel(setup.server.address) as sync_channel:
                return list(ProtoReflectionDescriptorDatabase(sync_channel).get_services())

        services = await asyncio.to_thread(discover)
        await setup.server.stop()
        return health.status, list(services)

    status, services = asyncio.run(scenario())
    assert status == health_pb2.HealthCheckResponse.SERVING
    assert {"arena.v1.BotService", "arena.v1.ArenaService", "grpc.health.v1.Health"} <= set(services)


def test_an_oversized_message_is_refused_and_the_referee_stays_up() -> None:
    async def scenario() -> tuple[str, bool]:
        spec = MatchSpec("big", "seed", 2)
        setup = await prepare_match(spec, ["a", "b"])
        channel = grpc.aio.insecure_channel(setup.server.address)
        stub = bot_pb2_grpc.BotServiceStub(channel)
        join = bot_pb2.Join(token=setup.seats[0].token, bot_name="x" * 200_000, protocol_version=1)
        call = stub.Play()
        await call.write(bot_pb2.BotMessage(join=join))
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await call.read()
        await channel.close()
        alive = grpc.aio.insecure_channel(setup.server.address)
        health = await health_pb2_grpc.HealthStub(alive).Check(health_pb2.HealthCheckRequest())
        await alive.close()
        await setup.server.stop()
        return str(refused.value.code()), health.status == health_pb2.HealthCheckResponse.SERVING

    code, alive = asyncio.run(scenario())
    assert code == "StatusCode.RESOURCE_EXHAUSTED"
    assert alive


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command to make a certificate")
def test_arena_serve_over_tls_with_bots_that_join_by_printed_token(tmp_path: Path) -> None:
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )
    serve = subprocess.Popen(
        [sys.executable, "-m", "arena", "serve", "--bot", "alice", "--bot", "bob", "--port", "0", "--hands", "4",
         "--tls-cert", str(cert), "--tls-key", str(key), "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
    )
    assert serve.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + 30
    while len([line for line in lines if "ARENA_TOKEN=" in line]) < 2 and time.monotonic() < deadline:
        lines.append(serve.stdout.readline())
    tokens = dict(re.findall(r"(\w+): ARENA_ADDRESS=\S+ ARENA_TOKEN=(\S+)", "".join(lines)))
    port = re.search(r"listening on [\d.]+:(\d+)", "".join(lines))
    assert port and set(tokens) == {"alice", "bob"}, lines
    env = {**os.environ, "ARENA_TLS_CA": str(cert), "ARENA_ADDRESS": f"localhost:{port.group(1)}"}
    station = shlex.split(python_bot("calling_station.py"))  # the Python SDK speaks TLS; the C++ bot does not
    bots = [subprocess.Popen([*station, "--name", name], env={**env, "ARENA_TOKEN": tokens[name]},
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for name in ("alice", "bob")]
    out, err = serve.communicate(timeout=60)
    for bot in bots:
        assert bot.wait(timeout=30) == 0
    assert serve.returncode == 0, err
    report = json.loads(out)
    assert report["hands"] == {"played": 4, "total": 4} and report["exit_code"] == 0
    assert all(r["violations"] == 0 and r["outcome"] == "ok" for r in report["results"])
