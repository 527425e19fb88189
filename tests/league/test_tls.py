"""A league over TLS, as the README sets it up: the host serves its certificate, SDK bots and the admin command
trust its root certificate, and a client without TLS gets nothing."""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from arena.league.admin import AdminServicer, admin_token_path, load_or_create_token
from arena.league.host import LeagueHost
from arena.league.settings import LeagueConfig
from arena.records.db import Database
from arena.records.registry import Registry
from arena_sdk.pb import league_pb2, league_pb2_grpc
from tests.bots import python_bot
from tests.league.test_admin import until
from tests.league.test_host import free_port

pytestmark = [pytest.mark.timeout(120),
              pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl to make a certificate")]


def certificate(folder: Path) -> tuple[Path, Path]:
    key, cert = folder / "server.key", folder / "server.crt"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    return key, cert


async def scenario(tmp_path: Path) -> None:
    key, cert = certificate(tmp_path)
    port = free_port()
    (tmp_path / "league.toml").write_text(f'name = "secure"\ngrpc = "127.0.0.1:{port}"\nhttp = "off"\nhands = 6\n'
                                          '[matchmaking]\nwindow = 50\n'
                                          '[tls]\ncert = "server.crt"\nkey = "server.key"\n')
    config = LeagueConfig.from_toml(tmp_path / "league.toml")
    assert config.tls_cert == cert and config.tls_key == key
    db = Database(tmp_path / "league.db")
    keys = [Registry(db).add(name) for name in ("s1", "s2")]
    host = LeagueHost(config, db, tls=(config.tls_key.read_bytes(), config.tls_cert.read_bytes()))
    token_file = admin_token_path(db.path, None)
    host.server.services.append(AdminServicer(host, load_or_create_token(token_file)).add_to)
    await host.start()
    stop = asyncio.Event()
    running = asyncio.create_task(host.run(stop))
    sdk_bot = shlex.split(python_bot("random_bot.py"))  # the Python SDK speaks TLS; the C++ bot does not
    bots = [await asyncio.create_subprocess_exec(
        *sdk_bot, stdout=(tmp_path / f"bot{i}.log").open("wb"), stderr=asyncio.subprocess.STDOUT,
        env={**os.environ, "ARENA_ADDRESS": f"localhost:{port}", "ARENA_KEY": k, "ARENA_TLS_CA": str(cert)})
        for i, k in enumerate(keys)]
    try:
        await until("two matches over TLS", lambda: host.rated >= 2)
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "arena", "league", "status", "--address", f"localhost:{port}", "--tls-ca",
            str(cert), "--token-file", str(token_file), stdout=asyncio.subprocess.PIPE)
        out, _ = await proc.communicate()
        assert proc.returncode == 0 and b"league secure" in out and b"2 bots connected" in out
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:  # no TLS: no answer at all
            stub = league_pb2_grpc.LeagueAdminStub(channel)
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await stub.Status(league_pb2.AdminRequest(), timeout=3)
            assert refused.value.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
    finally:
        stop.set()
        await running
        for bot in bots:
            bot.kill()
            await bot.wait()
        await host.stop()


def test_a_league_over_tls(tmp_path: Path) -> None:
    asyncio.run(scenario(tmp_path))
