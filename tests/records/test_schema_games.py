"""Schema 4 (cash games and freezeouts): a schema-3 database is refused read-only with the way to upgrade it, and
upgraded in place by the first command that writes."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from arena.records import queries
from arena.records.db import SCHEMA_VERSION, Database, DatabaseError
from arena.records.ledger import Ledger
from arena.records.verify import verify_match
from arena.referee import FunctionSeat, GameKind, Match, MatchSpec
from arena.runner.bots import BotSpec
from tests.records.test_phh_pokerkit import random_bot


def test_a_schema_3_database_is_upgraded_in_place(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = Database(path)
    spec = MatchSpec("m", "s", 6)
    entry = Ledger(db).open(spec, [BotSpec("a", ""), BotSpec("b", "")])
    seats = [("a", FunctionSeat("a", random_bot(1))), ("b", FunctionSeat("b", random_bot(2)))]
    entry.finish(asyncio.run(Match(spec, seats, [entry]).run()))
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
        SCHEMA_VERSION) == "7"
    assert queries.game_kind(upgraded, "m") is GameKind.RESET and queries.game_results(upgraded, "m") == []
    assert verify_match(upgraded, "m").ok and queries.match_spec(upgraded, "m").game.kind is GameKind.RESET
    upgraded.close()
    Database(path, read_only=True).close()
