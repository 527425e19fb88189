"""A rotation's bot processes are gone before the next rotation starts (arena.runner.local_bots): ``wait_gone``
sees what is left of a stopped bot, the process itself until it is reaped and any live member of its process group,
and refuses to go on while something is. Real processes (unsandboxed here: the sandboxed case, with a bot's helper
processes, is tests/integrity/test_halves.py)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from arena.referee import BotOutcome, ClockPolicy, HandRecord, MatchSpec, MatchStatus
from arena.runner.bots import BotProcess, BotSpec
from arena.runner.local_bots import ProcessesLinger, group_members, wait_gone
from arena.runner.remote_match import run_local_match
from arena.runner.sandbox import SandboxPolicy
from tests.bots import caller as calling_station

# a "bot" that leaves a child behind in its process group and then exits itself
LEAVER = f"{sys.executable} -c 'import subprocess, time; subprocess.Popen([\"sleep\", \"60\"]); time.sleep(0.2)'"


def test_a_child_left_in_the_group_is_seen_until_the_group_is_ended(tmp_path: Path) -> None:
    async def run() -> None:
        bot = BotProcess(BotSpec("leaver", LEAVER), None, SandboxPolicy(enabled=False))
        await bot.start(tmp_path / "no.sock", "token", tmp_path)
        assert bot.process is not None
        await bot.process.wait()  # the bot itself is gone...
        assert group_members(bot.process.pid)  # ... but its child lives on in its process group
        with pytest.raises(ProcessesLinger, match="leaver"):
            await wait_gone([bot], timeout_s=0.3)  # the control: the next rotation would not start
        await bot.stop()  # ends what is left of the group
        await wait_gone([bot], timeout_s=5)
        assert group_members(bot.process.pid) == []

    asyncio.run(run())


def test_a_bot_whose_second_rotation_process_dies_before_joining_is_crashed_and_the_match_completes(
        tmp_path: Path) -> None:
    """Crashes are watched rotation by rotation: the bot played rotation 0, its process for rotation 1 exits before
    it joins (it finds the mark its first process left: unsandboxed, they share a folder), so rotation 1 is played
    without it (the time-out policy acts for it), and it is recorded as crashed."""
    hands = 20
    once = (f"sh -c 'if [ -e mark ]; then echo second process: giving up; exit 3; fi; touch mark; "
            f"exec {calling_station()}'")
    bots = [BotSpec("caller", calling_station()), BotSpec("once", once)]
    played: list[HandRecord] = []
    crashes: list[str] = []
    spec = MatchSpec("once", "seed", hands, policy=ClockPolicy(reconnect_grace_ms=0))
    result = asyncio.run(run_local_match(spec, bots, on_hand=played.append, cwd=tmp_path, log_dir=tmp_path / "logs",
                                         sandbox=SandboxPolicy(enabled=False), on_crash=crashes.append))
    assert result.reason is MatchStatus.COMPLETED and result.hands_played == hands
    caller, once_result = result.results
    assert caller.outcome is BotOutcome.OK
    assert once_result.connected and once_result.outcome is BotOutcome.CRASHED
    assert once_result.crashed is not None and "exited with status 3" in once_result.crashed
    assert "giving up" in once_result.crashed and len(crashes) == 1
    assert any("rotation 1 never connected" in note for note in once_result.notes)
    hows = {(r.rotation, d.how) for r in played for d in r.decisions if d.participant == 1}
    assert hows == {(0, "ok"), (1, "absent")}  # its first process played all of rotation 0, nobody rotation 1


def test_a_sandbox_s_first_process_is_seen_exited_whatever_its_descriptor_s_number() -> None:
    """A referee with many connections hands out descriptors numbered 1024 and more, which select() refuses (a
    league host's validation failed so in CI): ``exited`` asks with poll."""
    import resource
    import subprocess

    from arena.runner.local_bots import exited

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 2048:
        pytest.skip(f"the open-files limit ({hard}) is below 2048")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 2048), hard))
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    pidfd = os.pidfd_open(child.pid)
    high = os.dup2(pidfd, 1500)
    try:
        assert not exited(high)
        child.kill()
        child.wait()
        assert exited(high)
    finally:
        os.close(high)
        os.close(pidfd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
