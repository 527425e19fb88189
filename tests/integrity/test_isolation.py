"""Sandboxed cheats that go for the other bots or out of their box: the token thief, the file passer, the escape.

Each plays a short match against an honest bot; each must find nothing, pass nothing, reach nothing, and the
honest bot must finish with no violation. The token thief and the file passer also run once where they can win
(unsandboxed; with a folder shared between runs), so that their silence in the sandbox means something.
"""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

import pytest

from arena.referee import ClockPolicy, MatchSpec, MatchStatus
from arena.runner.bots import BotSpec
from arena.runner.remote_match import run_local_match
from arena.runner.sandbox import SandboxPolicy
from tests.integrity.harness import CALLER, REPO, SLOW_JOIN, arena, by_name, cheat, match_json, reports

pytestmark = pytest.mark.timeout(120)

REFUSED = {"refused: ERROR_CODE_BAD_TOKEN", "refused: StatusCode.UNAUTHENTICATED"}


def test_the_token_thief_finds_no_token_and_steals_no_seat(tmp_path: Path) -> None:
    result = match_json(arena("match", *SLOW_JOIN, "--hands", "20", "--json", "--log-dir", str(tmp_path),
                              "--match-id", "thief",
                              "--bot", f"victim={CALLER}", "--bot", f"thief={cheat('token_thief')}", cwd=tmp_path))
    assert result["status"] == "completed"
    bots = by_name(result)
    assert bots["victim"]["violations"] == 0 and bots["victim"]["absent"] == 0 and not bots["victim"]["crashed"]
    assert bots["thief"]["violations"] == 0
    thefts = reports(tmp_path, "THIEF", "thief")
    assert len(thefts) == 2
    for theft in thefts:
        assert theft["found"] == [] and theft["stolen"] == 0, theft
        assert len(theft["attempts"]) == 12 and set(theft["attempts"].values()) <= REFUSED, theft["attempts"]
        assert theft["pids"] == ["1", "2", "3"]  # bubblewrap, the shell, the bot: nobody else's processes


def test_without_the_sandbox_the_token_thief_steals_a_seat(tmp_path: Path) -> None:
    """The control: unsandboxed, the thief reads the victim's token in /proc and takes its seat."""
    spec = MatchSpec("thief", "thief-seed", 20, policy=ClockPolicy(per_action_ms=200, time_bank_ms=0,
                                                                     max_violations=3, connect_timeout_ms=30000))
    bots = [BotSpec("victim", CALLER), BotSpec("thief", cheat("token_thief"))]
    result = asyncio.run(run_local_match(spec, bots, log_dir=tmp_path, cwd=REPO,
                                         sandbox=SandboxPolicy(enabled=False)))
    thefts = reports(tmp_path, "THIEF-PROC", "thief")
    assert any(t["found"] for t in thefts) and any(t["stolen"] for t in thefts), thefts
    victim = result.results[0]  # told that another connection took its seat, it left; its seat is silent
    assert victim.violations > 0 or victim.crashed or victim.absent, victim


def passer_runs(tmp_path: Path, policy: SandboxPolicy) -> list[list[dict[str, Any]]]:
    """Two matches in a row with the file passer, from the same folder; what each run's processes reported."""
    runs = []
    for run in ("first", "second"):
        logs = tmp_path / run
        spec = MatchSpec("passer", "passer-seed", 10)
        bots = [BotSpec("caller", CALLER), BotSpec("passer", cheat("file_passer"))]
        result = asyncio.run(run_local_match(spec, bots, log_dir=logs, cwd=tmp_path, sandbox=policy))
        assert result.reason == MatchStatus.COMPLETED
        assert result.results[0].violations == 0
        runs.append(reports(logs, "PASSER", "passer"))
    return runs


def test_the_file_passer_finds_nothing_from_an_earlier_run_or_its_other_process(tmp_path: Path) -> None:
    runs = passer_runs(tmp_path, SandboxPolicy())
    for run in runs:
        assert len(run) == 2
        for report in run:
            assert report["hands"] == 5
            assert report["writable"] == ["/tmp"], report["writable"]  # its private /tmp (also $HOME), nothing else
            assert report["found_at_start"] == {} and report["found_later"] == {}, report
    left = [p for p in tmp_path.rglob("arena-passer-*")] + [p for p in Path("/tmp").glob("arena-passer-*")]
    assert left == []  # the private folders went with their processes


def test_with_a_shared_writable_folder_the_file_passer_does_pass_hands(tmp_path: Path) -> None:
    """The control: a folder every bot may write (SandboxPolicy.writable, for trusted set-ups only) is a memory."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    first, second = passer_runs(tmp_path, SandboxPolicy(writable=(shared,)))
    assert any(str(shared) in r["writable"] for r in first)
    assert any(r["found_at_start"] for r in second), second  # the second run reads the first run's hands


def test_the_escape_reaches_no_network_and_no_limit_lets_it_out(tmp_path: Path) -> None:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("0.0.0.0", 0))
    listener.listen()
    listener.setblocking(False)
    port = listener.getsockname()[1]
    abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    abstract.bind(f"\0arena-escape-{port}")
    abstract.listen()
    abstract.setblocking(False)
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))  # no packet is sent: this only picks the host's outward address
        host_ip = probe.getsockname()[0]
    except OSError:
        host_ip = ""
    finally:
        probe.close()
    processes, memory_mb = 48, 768
    command = cheat("escape", f"--port {port} --host-ip {host_ip} --abstract arena-escape-{port} "
                              f"--processes {processes} --memory-mb {memory_mb}")
    try:
        result = match_json(arena(
            "match", *SLOW_JOIN, "--hands", "20", "--json", "--log-dir", str(tmp_path), "--match-id", "escape",
            "--bot-processes", str(processes), "--bot-memory-mb", str(memory_mb),
            "--bot", f"honest={CALLER}", "--bot", f"escape={command}", cwd=tmp_path))
        for server in (listener, abstract):
            with pytest.raises(BlockingIOError):
                server.accept()  # nobody got through to the host
    finally:
        listener.close()
        abstract.close()
    assert result["status"] == "completed"
    bots = by_name(result)
    assert bots["honest"]["violations"] == 0 and bots["escape"]["violations"] == 0
    escapes = reports(tmp_path, "ESCAPE", "escape")
    assert len(escapes) == 2
    for escape in escapes:
        assert escape["uid"] != 0 and escape["euid"] != 0
        network = ["tcp_loopback", "tcp_loopback6", "udp_dns", "dns", "abstract_socket"] + (
            ["tcp_host_ip"] if host_ip else [])
        assert all(str(escape[k]).startswith("failed") for k in network), escape
        assert escape["fork"]["forks"] < processes and "BlockingIOError" in escape["fork"]["error"], escape["fork"]
        assert escape["memory"] == "failed: MemoryError"
        assert escape["write_own_folder"].startswith("failed") and escape["setuid_root"].startswith("failed")
