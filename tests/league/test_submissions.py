"""Submissions to a league host (arena.league.submissions) over real gRPC on TCP, against a host in this process:
a bad key, an oversized archive (by its header and by a stream that lies), paths that climb out (``..``, absolute, a
symbolic and a hard link), a bot its validation refuses, a version taken and an archive sent twice are refused with
their reasons; a good one is stored, recorded and hosted, and its key then joins no stream."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from arena.cli.submit import UploadError, UploadRefused, chunks, upload
from arena.league.host import LeagueHost, Member
from arena.league.settings import LeagueConfig
from arena.league.submissions import SubmissionServicer
from arena.records import submissions
from arena.records.db import Database
from arena.records.registry import Registry
from arena.runner.archive import digest, pack
from arena_sdk.pb import bot_pb2, league_pb2, league_pb2_grpc
from tests.league.test_host import free_port
from tests.runner.test_archive import CLIMBERS, archive

pytestmark = pytest.mark.timeout(180)

REPO = Path(__file__).resolve().parents[2]
GOOD = pack(REPO / "sample_bots" / "python")


@contextlib.asynccontextmanager
async def league(tmp_path: Path) -> AsyncIterator[tuple[LeagueHost, str, dict[str, str]]]:
    """A host in this process with two registered bots, scheduling nothing (these tests are about what is
    accepted), serving LeagueSubmissions on a free TCP port."""
    db = Database(tmp_path / "league.db")
    keys = {name: Registry(db).add(name) for name in ("a", "b")}
    port = free_port()
    config = LeagueConfig.from_dict({
        "name": "subs", "grpc": f"127.0.0.1:{port}", "http": "off", "hands": 2,
        "submissions": {"max_mb": 0.5, "validate_hands": 2, "validate_against": ["caller"]}}, tmp_path)
    host = LeagueHost(config, db)
    host.paused = True
    host.server.services.append(SubmissionServicer(host).add_to)
    await host.start()
    try:
        yield host, f"127.0.0.1:{port}", keys
    finally:
        await host.stop()
        db.close()


async def send(address: str, key: str, data: bytes, command: str = "python calling_station.py",
               version: str = "") -> league_pb2.SubmissionReply:
    return await asyncio.to_thread(upload, address, key, data, command, version)


def test_refusals_say_why_and_a_good_bot_is_hosted(tmp_path: Path) -> None:
    asyncio.run(scenario(tmp_path))


async def scenario(tmp_path: Path) -> None:
    async with league(tmp_path) as (host, address, keys):
        await refusals_and_a_good_bot(host, address, keys, tmp_path)


async def refusals_and_a_good_bot(host: LeagueHost, address: str, keys: dict[str, str], tmp_path: Path) -> None:

    with pytest.raises(UploadRefused, match=r"unknown, revoked or replaced API key.*\(UNAUTHENTICATED\)"):
        await send(address, "arena_" + "x" * 43, GOOD)
    with pytest.raises(UploadRefused, match="UNAUTHENTICATED"):
        await send(address, keys["a"][:-1], GOOD)
    # as a user meets it: the host answered, so it is a refusal (3), not "no answer" (1)
    cli = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-m", "arena", "bots", "submit", "--address", address, "--key",
                         keys["a"][:-1], "--folder", str(REPO / "sample_bots" / "python"), "--command",
                         "python calling_station.py"], capture_output=True, text=True, timeout=120)
    assert cli.returncode == 3 and "refused: " in cli.stderr and "UNAUTHENTICATED" in cli.stderr, cli.stderr
    with pytest.raises(UploadError, match="no answer from a league host") as unanswered:
        await send(f"127.0.0.1:{free_port()}", keys["a"], GOOD)
    assert not isinstance(unanswered.value, UploadRefused)

    big = tmp_path / "big"
    big.mkdir()
    (big / "calling_station.py").write_bytes((REPO / "sample_bots/python/calling_station.py").read_bytes())
    (big / "weights.bin").write_bytes(os.urandom(600 * 1024))  # incompressible: over the cap of 0.5 MB packed
    reply = await send(address, keys["a"], pack(big))
    assert not reply.accepted and "over the league's cap of 0.5 MB (submissions.max_mb)" in reply.reason

    lying = await asyncio.to_thread(_lying_upload, address, keys["a"], pack(big))
    assert not lying.accepted and "more bytes than the header's 1,000" in lying.reason

    outside = tmp_path / "outside"
    outside.mkdir()
    for kind, (template, reason) in CLIMBERS.items():
        data = template.replace(b"{outside}", str(outside).lstrip("/").encode()) if kind != "dot-dot" else template
        if kind in ("symlink", "hardlink"):
            data = archive(("bot.py", "file", b"pass\n"), ("link", "symlink" if kind == "symlink" else "hardlink",
                                                           str(outside)))
        reply = await send(address, keys["a"], data)
        assert not reply.accepted and reason in reply.reason and reply.reason.endswith("refused"), (kind, reply)

    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "bot.py").write_text("pass\n")
    (linked / "secrets").symlink_to("/etc")
    reply = await send(address, keys["a"], pack(linked))  # what `arena bots submit` packs of a folder with a link
    assert not reply.accepted and "'secrets': a symbolic link (to '/etc')" in reply.reason

    broken = tmp_path / "broken"
    broken.mkdir(mode=0o755)
    (broken / "bot.py").write_text("def broken(:\n")
    reply = await send(address, keys["a"], pack(broken), "python bot.py")
    assert not reply.accepted and reply.verdict == 10 and "the host's validation: not ready" in reply.reason
    assert "SyntaxError" in reply.report

    assert submissions.submissions(host.db) == []  # nothing refused was kept
    assert not list(host.store.archives.glob("*.tar")) if host.store.archives.exists() else True

    reply = await send(address, keys["a"], GOOD)
    assert reply.accepted and reply.version == "1" and reply.sha256 == digest(GOOD), reply
    assert "ready: it started, joined and answered all" in reply.report
    [stored] = submissions.submissions(host.db)
    assert (stored.bot, stored.version, stored.command, stored.sha256) == ("a", "1", "python calling_station.py",
                                                                           digest(GOOD))
    assert host.store.read(stored.sha256) == GOOD
    assert "a" in host.residents and (host.residents["a"].folder / "calling_station.py").is_file()

    again = await send(address, keys["a"], GOOD, version="2")
    assert not again.accepted and "this archive is version '1' of a already" in again.reason
    taken = await send(address, keys["a"], pack(REPO / "tests" / "runner" / "validate_bots"), "python illegal.py",
                       version="1")
    assert not taken.accepted and "version '1' of a was submitted already" in taken.reason

    # a hosted bot's key joins no stream (its submitted version plays)
    member = Member(host.registry.get("a"), host.wake, host.admit)
    refusal = host.admit(member, bot_pb2.Join(bot_version="9"))
    assert refusal is not None and "a is a hosted bot" in refusal[2]
    assert host.admit(Member(host.registry.get("b"), host.wake, host.admit), bot_pb2.Join()) is None  # control

    listed = await asyncio.create_subprocess_exec(sys.executable, "-m", "arena", "bots", "list", "--db",
                                                  str(host.db.path), stdout=asyncio.subprocess.PIPE)
    table = (await listed.communicate())[0].decode()
    assert listed.returncode == 0 and "hosted bots (run by the league)" in table
    hosted, remote = table.split("remote bots")
    assert "│ a " in hosted and digest(GOOD)[:12] in hosted and "│ b " in remote

    host.freeze(True)
    frozen = await send(address, keys["b"], GOOD, "python random_bot.py")
    assert not frozen.accepted and "frozen" in frozen.reason


def _lying_upload(address: str, key: str, data: bytes) -> league_pb2.SubmissionReply:
    """A client whose header says 1,000 bytes and who sends the whole archive."""
    def lies() -> object:
        first = next(chunks(data, "python calling_station.py", ""))
        first.header.size = 1000
        yield first
        for start in range(0, len(data), 32 * 1024):
            yield league_pb2.SubmissionChunk(data=data[start:start + 32 * 1024])

    with grpc.insecure_channel(address) as channel:
        reply: league_pb2.SubmissionReply = league_pb2_grpc.LeagueSubmissionsStub(channel).Submit(
            lies(), metadata=(("authorization", f"Bearer {key}"),), timeout=60)
    return reply
