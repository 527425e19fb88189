"""Bots that crash, never connect or forfeit are flagged on the leaderboard, in its JSON and on the site."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from arena.publish import publish
from arena.ratings.leaderboard import build_leaderboard, leaderboard_json
from arena.records import queries
from arena.records.db import Database
from arena.records.ledger import Ledger
from arena.referee import BotOutcome, ClockPolicy, MatchSpec
from arena.runner.bots import BotSpec
from arena.runner.remote_match import run_local_match

REPO = Path(__file__).resolve().parents[2]
EVIL = f"{sys.executable} {REPO / 'tests' / 'referee' / 'evil_bot.py'}"
POLICY = ClockPolicy(per_action_ms=2000, time_bank_ms=0, max_violations=0, connect_timeout_ms=8000)


def play(db: Database, match_id: str, bots: list[BotSpec], hands: int = 8) -> None:
    spec = MatchSpec(match_id, f"seed-{match_id}", hands, policy=POLICY)
    entry = Ledger(db).open(spec, bots)
    entry.finish(asyncio.run(run_local_match(spec, bots, [entry], cwd=REPO)))


def test_crashed_and_no_show_bots_are_flagged(tmp_path: Path) -> None:
    db = Database(tmp_path / "flags.db")
    good = BotSpec("good", f"EVIL_MODE=good {EVIL}")
    play(db, "crash", [good, BotSpec("crasher", f"EVIL_MODE=crash EVIL_AFTER=4 {EVIL}")])
    play(db, "absent", [good, BotSpec("ghost", "no-such-command-anywhere")], hands=2)
    outcomes = {(o.match_id, o.name): o for o in queries.bot_outcomes(db, queries.match_ids(db))}
    assert outcomes["crash", "crasher"].outcome is BotOutcome.CRASHED
    assert "exited with status 3" in outcomes["crash", "crasher"].detail
    assert outcomes["absent", "ghost"].outcome is BotOutcome.NO_SHOW
    assert "not found" in outcomes["absent", "ghost"].detail  # the shell's own words
    assert outcomes["crash", "good"].outcome is BotOutcome.OK

    board = build_leaderboard(db)
    rows = {row.bot: row for row in board.rows}
    assert rows["crasher"].flags == {"crashed": 1} and "crashed in 1 match" in rows["crasher"].flag_text
    assert rows["good"].flags == {}
    assert board.unrated == {"ghost": {"no_show": 1}}  # no complete session: not rated, still flagged
    data = leaderboard_json(board)
    assert data["unrated"] == {"ghost": {"no_show": 1}}
    assert next(r for r in data["rows"] if r["bot"] == "crasher")["flags"] == {"crashed": 1}

    site = publish(db, tmp_path / "site")
    index = site.index.read_text(encoding="utf-8")
    assert "crashed in 1 match" in index and "ghost" in index and "not rated: no show in 1 match" in index
