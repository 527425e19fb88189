"""The compiled engine in the referee: a real match (``python -m arena match``, sandboxed sample bots, SQLite) records
exactly the hands, to the chip, that the same seed records with ARENA_ENGINE=python."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from arena.cli.exits import EXIT_OK
from arena.engine import ENGINE_VARIABLE
from tests.runner.test_many_tables_cli import BOT_ARGS, essence, records

HANDS = 60  # 20 duplicate sessions of three rotations, antes for every seat


def start(db: Path, engine: str, seed_file: Path) -> subprocess.Popen[str]:
    """``arena match`` with the sample bots on ``engine``, recording into ``db``."""
    env = {k: v for k, v in os.environ.items() if k != "ARENA_SEED"} | {ENGINE_VARIABLE: engine}
    args = ["match", *BOT_ARGS, "--hands", str(HANDS), "--ante", "10", "--each-ante", "--db", str(db),
            "--match-id", "m", "--seed-file", str(seed_file), "--json"]
    return subprocess.Popen([sys.executable, "-m", "arena", *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, cwd=db.parent, env=env)


@pytest.mark.timeout(240)
def test_a_match_records_the_same_hands_on_both_engines(tmp_path: Path) -> None:
    seed_file = tmp_path / "seed"
    seed_file.write_text("engines-seed\n")
    matches = [start(tmp_path / f"{engine}.db", engine, seed_file) for engine in ("compiled", "python")]
    for match in matches:  # side by side: most of a match's time is waiting for its bots
        output, _ = match.communicate(timeout=180)
        assert match.returncode == EXIT_OK, output
    compiled, python = records(tmp_path / "compiled.db"), records(tmp_path / "python.db")
    assert len(compiled) == len(python) == HANDS
    for a, b in zip(compiled, python, strict=True):
        assert essence(a) == essence(b), a.hand_number
    events = [e for r in compiled for e in r.events]
    kinds = {e.kind.name for e in events}
    assert {"POST_ANTE", "RAISE", "SHOW"} <= kinds  # the bots really played
    assert any(e.all_in for e in events)
