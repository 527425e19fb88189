"""A bot that leaves its match without its MatchEnd and exits with an error is recorded as crashed, with its exit
status, even when its process is seen to end only after the table's last hand (a slow teardown, a loaded host): the
runner waits for the processes it stops to be reaped and the match's result counts what their exits said."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from arena.records import queries
from arena.records.db import Database
from arena.records.ledger import Ledger
from arena.referee import BotOutcome, ClockPolicy, MatchSpec
from arena.runner.bots import BotSpec
from arena.runner.remote_match import run_local_match

REPO = Path(__file__).resolve().parents[2]
EVIL = f"{sys.executable} {REPO / 'tests' / 'referee' / 'evil_bot.py'}"


def test_a_bot_whose_exit_is_seen_after_the_last_hand_is_recorded_as_crashed(tmp_path: Path) -> None:
    db = Database(tmp_path / "late.db")
    policy = ClockPolicy(per_action_ms=2000, time_bank_ms=0, connect_timeout_ms=8000, reconnect_grace_ms=100)
    spec = MatchSpec("late", "seed-late", 4, policy=policy)
    bots = [BotSpec("good", f"EVIL_MODE=good {EVIL}"),
            BotSpec("slow", f"EVIL_MODE=crash_slowly EVIL_AFTER=1 EVIL_EXIT_DELAY_S=1.5 {EVIL}")]
    entry = Ledger(db).open(spec, bots)
    result = asyncio.run(run_local_match(spec, bots, [entry], cwd=REPO))
    entry.finish(result)
    slow = next(p for p in result.results if p.name == "slow")
    assert slow.crashed is not None and "exited with status 3" in slow.crashed, slow
    outcomes = {o.name: o for o in queries.bot_outcomes(db, ["late"])}
    assert outcomes["slow"].outcome is BotOutcome.CRASHED, outcomes
    assert outcomes["good"].outcome is BotOutcome.OK, outcomes
    db.close()
