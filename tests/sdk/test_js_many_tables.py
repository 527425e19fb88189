"""The JavaScript sample bot (sample_bots/javascript) on many tables over one connection, through the real referee.

``arena match --tables 4`` between two ``bot.js`` processes, with and without batches, and with one bot that takes
only one table at a time: the match completes with no violation, every process is in several hands at once (its
log shows hands that overlap) unless it asked for one table, and a bot that asked for batches gets RefereeBatches
and answers some with ActionBatches. The bot's own unit tests (``npm test``) cover the ids it echoes.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arena.records import queries
from arena.records.db import Database
from tests.sdk.helpers import REPO, assert_clean_match, most_hands_at_once

JS = REPO / "sample_bots" / "javascript"
BOT = f"node {JS / 'bot.js'}"
TABLES = 4
HANDS = 100

pytestmark = [
    pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed"),
    pytest.mark.timeout(300),
]

HAND_START = re.compile(r"\[js-bot\] \S+ hand (\S+) \(#\d+\)")
HAND_END = re.compile(r"\[js-bot\] \S+ hand (\S+) over:")
WELCOME = re.compile(r"\[js-bot\] joined match .*; (\d+) table\(s\) at once(, batched)?$", re.M)
COUNTS = re.compile(r"answered (\d+) requests; (\d+) batches in, (\d+) action batches out")


@pytest.fixture(scope="module", autouse=True)
def installed() -> None:
    if not (JS / "node_modules").is_dir():
        pytest.fail("run `npm ci` in sample_bots/javascript (make test does)")


def play(folder: Path, bots: dict[str, str]) -> dict[str, Any]:
    """``arena match --tables 4`` between ``bot.js`` processes started with the given arguments; its JSON result."""
    args = [sys.executable, "-m", "arena", "match", "--tables", str(TABLES), "--hands", str(HANDS), "--json",
            "--log-dir", str(folder), "--match-id", "js-tables", "--db", str(folder / "js.db")]
    for name, extra in bots.items():
        args += ["--bot", f"{name}={BOT} {extra}".strip()]
    proc = subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=240, check=False)
    assert proc.returncode == 0, f"{proc.stdout}\n{proc.stderr}"
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


@pytest.mark.parametrize(
    "bots",
    [
        {"plain-a": "", "plain-b": ""},
        {"batched-a": "--batches", "batched-b": "--batches"},
        {"one-table": "--max-tables 1", "batched": "--batches"},
    ],
    ids=["plain", "batched", "one-table-vs-batched"],
)
def test_a_match_on_four_tables_completes_with_no_violation(tmp_path: Path, bots: dict[str, str]) -> None:
    result = play(tmp_path, bots)
    assert_clean_match(result, HANDS)
    db = Database(tmp_path / "js.db", read_only=True)
    said = {d.comment.split(": ")[-1] for r in queries.hand_records(db, "js-tables") for d in r.decisions}
    assert {"check", "call"} <= said  # every action's decision comment ("no made hand: check"), recorded
    db.close()

    # Heads-up, every table seats both bots: they are in as many hands at once as the smaller max_tables allows.
    together = min(1 if "--max-tables 1" in extra else TABLES for extra in bots.values())
    for name, extra in bots.items():
        logs = sorted(tmp_path.glob(f"*-{name}.log"))  # one per seat rotation (no name ends another here)
        assert logs, f"no log of {name} in {sorted(p.name for p in tmp_path.iterdir())}"
        batched = "--batches" in extra
        tables = 1 if "--max-tables 1" in extra else TABLES
        counts = [0, 0, 0]  # requests answered, RefereeBatches received, ActionBatches sent
        for path in logs:
            log = path.read_text(errors="replace")
            welcome = WELCOME.search(log)
            assert welcome is not None, log[-2000:]
            assert (int(welcome[1]), bool(welcome[2])) == (tables, batched), welcome[0]
            at_once = most_hands_at_once(log, HAND_START, HAND_END)
            assert at_once == 1 if together == 1 else at_once > 1, (path.name, at_once)
            found = COUNTS.search(log)
            assert found is not None, log[-2000:]
            counts = [c + int(n) for c, n in zip(counts, found.groups(), strict=True)]
        answered, batches_in, batches_out = counts
        assert answered == next(r["decisions"] for r in result["results"] if r["name"] == name), (name, counts)
        if not batched:
            assert batches_in == batches_out == 0, (name, counts)
        else:
            assert batches_in > 0, (name, counts)
            # Several requests at once only where the bots share several tables.
            assert batches_out > 0 if together > 1 else batches_out == 0, (name, counts)
