"""The Python SDK on many tables over one connection, through the real referee (``arena match --tables 4``): a bot
that overrides ``act_batch`` gets several requests per call and answers them in one ActionBatch; a plain bot with
``max_tables`` is called once per request and is in several hands at once; ``--max-tables 1`` keeps it in one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.sdk.helpers import REPO, assert_clean_match

pytestmark = pytest.mark.timeout(300)

TABLES = 4
HANDS = 100
RANDOM = f"{sys.executable} {REPO / 'sample_bots' / 'python' / 'random_bot.py'} --seed 3"

BOT = '''
import json, sys
from arena_sdk import Bot, call, check, run

class Counting(Bot):
    max_tables = 16
    def __init__(self):
        self.calls, self.open, self.most = [], set(), 0
    def on_welcome(self, welcome):
        print("WELCOME", welcome.tables, welcome.batches, flush=True)
    def on_hand_start(self, msg):
        self.open.add(msg.table_id)
        self.most = max(self.most, len(self.open))
    def on_hand_end(self, msg):
        self.open.discard(msg.table_id)
    def act(self, request):
        self.calls.append(1)
        return check() if request.legal.can_check else call()
    def on_match_end(self, msg):
        print("COUNTS", json.dumps({{"calls": self.calls, "most": self.most}}), flush=True)

class Batching(Counting):
    def act_batch(self, requests):
        self.calls.append(len(requests))
        assert len({{r.table_id for r in requests}}) == len(requests)  # one request per table at most
        return [check() if r.legal.can_check else call() for r in requests]

raise SystemExit(run({kind}(), version="1").exit_code)
'''


def play(tmp_path: Path, kind: str, *extra: str) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    """A match of the bot ``kind`` (Counting or Batching) against the random bot; the JSON report, and what the bot's
    processes (one per rotation) printed."""
    folder = tmp_path / "bot"
    folder.mkdir(mode=0o755)
    script = folder / "bot.py"
    script.write_text(BOT.format(kind=kind))
    script.chmod(0o644)
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "match", "--tables", str(TABLES), "--hands", str(HANDS), "--json",
         "--log-dir", str(tmp_path), "--match-id", "sdk", "--bot", f"me={sys.executable} {script} {' '.join(extra)}",
         "--bot", f"other={RANDOM}"],
        capture_output=True, text=True, timeout=240, check=False, cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    logs = [p.read_text() for p in sorted(tmp_path.glob("*-me.log"))]
    assert len(logs) == 2, logs  # one process per rotation
    counts = [json.loads(line.split(" ", 1)[1]) for log in logs for line in log.splitlines()
              if line.startswith("COUNTS ")]
    welcomes = [line for log in logs for line in log.splitlines() if line.startswith("WELCOME ")]
    return json.loads(proc.stdout), counts, welcomes


def test_a_bot_with_act_batch_answers_many_requests_per_call(tmp_path: Path) -> None:
    report, counts, welcomes = play(tmp_path, "Batching")
    assert_clean_match(report, HANDS)
    assert welcomes == [f"WELCOME {TABLES} True"] * 2
    calls = [n for c in counts for n in c["calls"]]
    assert sum(calls) == report["results"][0]["decisions"]
    assert max(calls) > 1  # several requests in one call: the referee batched them


def test_a_plain_bot_is_called_per_request_and_plays_tables_at_once(tmp_path: Path) -> None:
    report, counts, welcomes = play(tmp_path, "Counting")
    assert_clean_match(report, HANDS)
    assert welcomes == [f"WELCOME {TABLES} True"] * 2  # the SDK asks for batches with more than one table
    assert all(set(c["calls"]) == {1} for c in counts)
    assert max(c["most"] for c in counts) > 1


def test_max_tables_1_from_the_command_line_keeps_the_bot_in_one_hand(tmp_path: Path) -> None:
    report, counts, welcomes = play(tmp_path, "Counting", "--max-tables", "1")
    assert_clean_match(report, HANDS)
    assert welcomes == ["WELCOME 1 False"] * 2
    assert max(c["most"] for c in counts) == 1
