"""Schema 4 (cash games and freezeouts): a schema-3 database is refused read-only with the way to upgrade it, and
upgraded in place by the first command that writes."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from arena.records.db import SCHEMA_VERSION, Database, DatabaseError
from arena.records.verify import verify_match
from arena.referee import FunctionSeat, GameKind, Match, MatchSpec
from tests.records.test_phh_pokerkit import random_bot


def test_a_schema_3_database_is_upgraded_to_schema_4_in_place(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = Database(path)
    spec = MatchSpec("m", "s", 6)
    db.start_match(spec, [("a", "", ""), ("b", "", "")], 6)
    seats = [("a", FunctionSeat("a", random_bot(1))), ("b", FunctionSeat("b", random_bot(2)))]
    db.finish_match(asyncio.run(Match(spec, seats, [db]).run()))
    db.close()
    conn = sqlite3.connect(path)  # what schema 3 had: no games
    conn.executescript("ALTER TABLE matches DROP COLUMN game; ALTER TABLE hands DROP COLUMN config;"
                       "DROP TABLE game_results; UPDATE meta SET value = '3' WHERE key = 'schema_version';")
    conn.commit()
    conn.close()
    with pytest.raises(DatabaseError, match=r"older arena \(schema 3"):
        Database(path, read_only=True)
    upgraded = Database(path)
    assert upgraded.conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == str(
        SCHEMA_VERSION) == "4"
    assert upgraded.game_kind("m") is GameKind.RESET and upgraded.game_results("m") == []
    assert verify_match(upgraded, "m").ok and upgraded.match_spec("m").game.kind is GameKind.RESET
    upgraded.close()
    Database(path, read_only=True).close()
