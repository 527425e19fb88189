"""A database written by an older arena is upgraded in place by the first command that writes (or verifies), and
refused with the way to upgrade it by a read-only reader (which must not write). ``data/schema4.db`` was made by
the arena of commit 3ff9849 (``data/make_schema4.py.txt``): everything it holds still reads, verifies (under its
old commitment, the seed's hash alone), resumes and compares."""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.records import DatabaseError, queries
from arena.records.comparisons import ComparisonRole, comparison
from arena.records.db import SCHEMA_VERSION, Database
from arena.records.ledger import Ledger
from arena.records.verify import verify_match
from arena.referee import FunctionSeat, Match, MatchSpec, MatchStatus
from arena.runner.bots import BotSpec
from tests.referee.test_mixed_action import caller, mixer

DATA = Path(__file__).resolve().parent / "data"


def test_a_schema_2_database_is_upgraded_in_place(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = Database(path)
    spec = MatchSpec("old", "schema", 6)
    seats = [("a", FunctionSeat("a", caller)), ("b", FunctionSeat("b", caller))]
    entry = Ledger(db).open(spec, [BotSpec(n, "") for n, _ in seats])
    entry.finish(asyncio.run(Match(spec, seats, [entry]).run()))
    db.close()
    raw = sqlite3.connect(path)  # as schema 2 wrote it: no column for mixed actions
    raw.execute("ALTER TABLE actions DROP COLUMN policy")
    raw.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    raw.commit()
    raw.close()
    with pytest.raises(DatabaseError, match=r"older arena \(schema 2.*arena verify --db"):
        Database(path, read_only=True)
    upgraded = Database(path)
    assert [len(r.decisions) > 0 for r in queries.hand_records(upgraded, "old")] == [True] * 6
    spec2 = MatchSpec("new", "schema-new", 4)
    mixed_seats = [("a", FunctionSeat("a", mixer)), ("b", FunctionSeat("b", caller))]
    entry = Ledger(upgraded).open(spec2, [BotSpec(n, "") for n, _ in mixed_seats])
    entry.finish(asyncio.run(Match(spec2, mixed_seats, [entry]).run()))  # type: ignore[arg-type]
    assert any(d.policy for r in queries.hand_records(upgraded, "new") for d in r.decisions)
    version = upgraded.conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
    assert int(version) == SCHEMA_VERSION
    upgraded.close()
    Database(path, read_only=True).close()


def _copy(tmp_path: Path) -> Path:
    for name in ("schema4.db", "schema4.db.seeds"):
        shutil.copy(DATA / name, tmp_path / name)
    return tmp_path / "schema4.db"


def test_a_database_the_arena_of_schema_4_wrote_reads_verifies_and_compares_after_arena_verify(
        tmp_path: Path) -> None:
    path = _copy(tmp_path)
    with pytest.raises(DatabaseError, match=r"older arena \(schema 4"):
        Database(path, read_only=True)
    runner = CliRunner()
    verify = runner.invoke(main, ["verify", "--db", str(path)])
    assert verify.exit_code == 0, verify.output
    for match_id in ("m-mixed", "cmp-h2h", "cmp-ref1-candidate", "cmp-ref1-baseline", "cup/000-a-b", "m-freeze"):
        assert f"ok    {match_id}:" in verify.output
    assert "commitment version 1 (the seed's hash alone" in verify.output
    assert "wait  m-running" in verify.output
    db = Database(path, read_only=True)  # upgraded in place
    assert queries.require(db, "m-mixed").commitment_version == 1
    recorded = comparison(db, "cmp")  # the roles that schema 4 kept only in the match ids, and the note's parameters
    assert recorded is not None and recorded.params["max_hands"] == 12 and recorded.outcome["sessions"] == 2
    assert recorded.role(ComparisonRole.HEAD_TO_HEAD) == "cmp-h2h"
    assert recorded.role(ComparisonRole.BASELINE, 1) == "cmp-ref1-baseline"
    assert db.row("meta", "SELECT 1 FROM meta WHERE key LIKE 'note:%'") is None
    db.close()
    replayed = runner.invoke(main, ["compare", "--verify", "cmp", "--db", str(path), "--json", "-"])
    assert replayed.exit_code in (0, 1, 3), replayed.output  # the verdict recomputed: whatever it was, not an error
    assert '"verified": true' in replayed.output
    board = runner.invoke(main, ["leaderboard", "--db", str(path), "--json"])
    assert board.exit_code == 0, board.output


def test_a_match_the_arena_of_schema_4_left_running_resumes_under_its_old_commitment(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    db = Database(path)
    seed = queries.match_seed(db, "m-running")
    assert seed == "seed-running"
    spec = dataclasses.replace(queries.match_spec(db, "m-running"))
    entry = Ledger(db).open(spec, [BotSpec("a", ""), BotSpec("b", "")], resume=True)
    assert entry.played == frozenset(range(4)) and not entry.chained
    seats = [("a", FunctionSeat("a", mixer)), ("b", FunctionSeat("b", caller))]
    result = entry.finish(asyncio.run(Match(spec, seats, [entry], recorded=entry.played).run()))  # type: ignore[arg-type]
    assert result.reason is MatchStatus.COMPLETED and result.hands_played == 10
    check = verify_match(db, "m-running")
    assert check.ok and check.hands == 10 and check.commitment_version == 1, check.problems
