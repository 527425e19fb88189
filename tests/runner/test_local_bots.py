"""A rotation's bot processes are gone before the next rotation starts (arena.runner.local_bots): ``wait_gone``
sees what is left of a stopped bot, the process itself until it is reaped and any live member of its process group,
and refuses to go on while something is. Real processes (unsandboxed here: the sandboxed case, with a bot's helper
processes, is tests/integrity/test_halves.py)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from arena.runner.bots import BotProcess, BotSpec
from arena.runner.local_bots import ProcessesLinger, group_members, wait_gone
from arena.runner.sandbox import SandboxPolicy

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
