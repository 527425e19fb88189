"""Ctrl-C (SIGINT) ends ``arena match``, ``serve`` and the other commands with status 130 and a line that says so,
never click's "Aborted!" and status 1 (README, "Exit status"); where hands are recorded, the line names the
``--resume`` that finishes the match, and every hand recorded before it verifies."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from arena.records.db import Database
from arena.records.verify import verify_match
from tests.bots import cpp
from tests.runner.test_many_tables_cli import wait_for_hands

INTERRUPTED = 130


def started(args: list[str], cwd: Path) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if k != "ARENA_SEED"}
    return subprocess.Popen([sys.executable, "-m", "arena", *args], cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def interrupted(process: subprocess.Popen[bytes], ready: Callable[[], None]) -> str:
    """SIGINT, as Ctrl-C sends it, once ``ready`` returns; everything the command wrote, once it is checked to have
    ended with 130 and no traceback or click's "Aborted!"."""
    try:
        ready()
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    output = (out + err).decode()
    assert process.returncode == INTERRUPTED, output
    assert "Aborted!" not in output and "Traceback" not in output, output
    return output


@pytest.mark.timeout(120)
def test_ctrl_c_while_serve_waits_for_its_bots_exits_130_naming_the_resume(tmp_path: Path) -> None:
    db = tmp_path / "served.db"
    process = started(["serve", "--bot", "alice", "--bot", "bob", "--port", "0", "--hands", "10", "--db", str(db),
                       "--match-id", "served"], tmp_path)

    def waiting() -> None:  # its tokens printed: it waits for the bots
        assert process.stdout is not None
        deadline = time.monotonic() + 60
        while b"ARENA_TOKEN" not in process.stdout.readline():
            assert time.monotonic() < deadline and process.poll() is None

    output = interrupted(process, waiting)
    assert f"interrupted: every finished hand is recorded; finish with --resume --db {db}" in output, output


@pytest.mark.timeout(180)
def test_ctrl_c_in_the_middle_of_a_match_exits_130_with_its_hands_recorded(tmp_path: Path) -> None:
    db = tmp_path / "cut.db"
    bot = cpp()
    process = started(["match", "--bot", f"a={bot}", "--bot", f"b={bot}", "--hands", "200000", "--db", str(db),
                       "--match-id", "cut"], tmp_path)

    def playing() -> None:
        assert wait_for_hands(db, 40, process) >= 40, "the match did not get going"

    output = interrupted(process, playing)
    assert f"finish with --resume --db {db} --match-id cut" in output, output
    check = verify_match(Database(db, read_only=True), "cut")
    assert check.ok and check.hands >= 40, check.problems
