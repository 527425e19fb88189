"""A database written by an older arena is upgraded in place by the first command that writes, and refused with
the way to upgrade it by a read-only reader (which must not write)."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from arena.records.db import SCHEMA_VERSION, Database, DatabaseError
from arena.referee import FunctionSeat, Match, MatchSpec
from tests.referee.test_mixed_action import caller, mixer


def test_a_schema_2_database_is_upgraded_in_place(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = Database(path)
    spec = MatchSpec("old", "schema", 6)
    seats = [("a", FunctionSeat("a", caller)), ("b", FunctionSeat("b", caller))]
    db.start_match(spec, [(n, "", "") for n, _ in seats], len(spec.plan(2)))
    db.finish_match(asyncio.run(Match(spec, seats, [db]).run()))
    db.close()
    raw = sqlite3.connect(path)  # as schema 2 wrote it: no column for mixed actions
    raw.execute("ALTER TABLE actions DROP COLUMN policy")
    raw.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    raw.commit()
    raw.close()
    with pytest.raises(DatabaseError, match=r"older arena \(schema 2.*arena verify --db"):
        Database(path, read_only=True)
    upgraded = Database(path)
    assert [len(r.decisions) > 0 for r in upgraded.hand_records("old")] == [True] * 6
    spec2 = MatchSpec("new", "schema-new", 4)
    mixed_seats = [("a", FunctionSeat("a", mixer)), ("b", FunctionSeat("b", caller))]
    upgraded.start_match(spec2, [(n, "", "") for n, _ in mixed_seats], len(spec2.plan(2)))
    upgraded.finish_match(asyncio.run(Match(spec2, mixed_seats, [upgraded]).run()))  # type: ignore[arg-type]
    assert any(d.policy for r in upgraded.hand_records("new") for d in r.decisions)
    version = upgraded.conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
    assert int(version) == SCHEMA_VERSION
    upgraded.close()
    Database(path, read_only=True).close()
