"""The acceptance test of the engine: real hand histories replay exactly, through the real ``arena`` command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from arena.engine import ENGINE_VARIABLE
from arena.engine.engines import ENGINES

ARENA = [sys.executable, "-m", "arena"]


def run_replay(*paths: Path | str, engine: str = "compiled") -> tuple[int, list[dict[str, object]], str]:
    env = {**os.environ, ENGINE_VARIABLE: engine}
    proc = subprocess.run([*ARENA, "replay", *map(str, paths)], capture_output=True, text=True, check=False, env=env)
    return proc.returncode, [json.loads(line) for line in proc.stdout.splitlines()], proc.stderr


@pytest.mark.parametrize("engine", ENGINES)
def test_all_real_hands_replay_ok(conformance: Path, engine: str) -> None:
    """Every hand replays exactly on the compiled engine and on its Python reference."""
    status, results, _ = run_replay(
        conformance / "pluribus", conformance / "wsop-2023-43-5", conformance / "historical", engine=engine
    )
    bad = [r for r in results if not r["ok"]]
    assert bad == []
    assert len(results) == 10_019
    assert status == 0
    assert all(isinstance(r["finishing_stacks"], list) for r in results)


@pytest.mark.parametrize("engine", ENGINES)
def test_the_invalid_hand_is_refused_naming_the_seat_and_rule(conformance: Path, engine: str) -> None:
    status, results, _ = run_replay(conformance / "invalid", engine=engine)
    assert status == 1
    assert len(results) == 1 and results[0]["ok"] is False
    error = str(results[0]["error"])
    assert "p8" in error and "R6.3" in error and "'p1 cc'" in error


def test_unreadable_files_exit_2_without_a_traceback(tmp_path: Path, conformance: Path) -> None:
    broken = tmp_path / "broken.phh"
    broken.write_text("variant = 'NT'\nactions = [\n")
    status, results, stderr = run_replay(broken, conformance / "historical")
    assert status == 2
    assert "not valid TOML" in stderr and "Traceback" not in stderr
    assert [r["ok"] for r in results] == [False, True]


def test_missing_path_exits_2(tmp_path: Path) -> None:
    status, _, stderr = run_replay(tmp_path / "nothing-here")
    assert status == 2 and "Traceback" not in stderr
