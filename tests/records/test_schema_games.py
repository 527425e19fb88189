"""Schema 3 (cash games and freezeouts): a schema-2 database is read as it is (read-only) and upgraded in place."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from arena.records.db import SCHEMA_VERSION, Database
from arena.records.verify import verify_match
from arena.referee import FunctionSeat, GameKind, Match, MatchSpec
from tests.records.test_phh_pokerkit import random_bot


def test_a_schema_2_database_is_read_read_only_and_upgraded_to_schema_3(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = Database(path)
    spec = MatchSpec("m", "s", 6)
    db.start_match(spec, [("a", "", ""), ("b", "", "")], 6)
    seats = [("a", FunctionSeat("a", random_bot(1))), ("b", FunctionSeat("b", random_bot(2)))]
    db.finish_match(asyncio.run(Match(spec, seats, [db]).run()))
    db.close()
    conn = sqlite3.connect(path)  # what schema 2 had: no games
    conn.executescript("ALTER TABLE matches DROP COLUMN game; ALTER TABLE hands DROP COLUMN config;"
                       "DROP TABLE game_results; UPDATE meta SET value = '2' WHERE key = 'schema_version';")
    conn.commit()
    conn.close()
    old = Database(path, read_only=True)
    assert old.game_kind("m") is GameKind.RESET and old.game_results("m") == []
    assert verify_match(old, "m").ok and len(list(old.hand_records("m"))) == 6
    old.close()
    upgraded = Database(path)
    assert upgraded.conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == str(
        SCHEMA_VERSION) == "3"
    assert verify_match(upgraded, "m").ok and upgraded.match_spec("m").game.kind is GameKind.RESET
