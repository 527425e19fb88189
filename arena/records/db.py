"""The embedded database (SQLite, WAL mode), storage only: the connection, the schema and its migrations,
transactions. One transaction per finished hand, so a crash loses at most the hand in play.

Tables: ``bots`` (name, version, language), ``matches`` (seed, commitment, table config, status, final hash),
``match_bots`` (who sat in a match), ``joins`` (what each participant's bot said of itself in its Join),
``hands`` (deal, rotation, button, deck, board, and the hand's place in the match's hash chain), ``hand_seats``
(each seat's bot, hole cards, payoff), ``actions`` (every event of the hand, with how the referee got each
decision and the bot's comment on it), ``violations``; ``game_results`` how every game of a cash game or a
freezeout ended for every player (places, R11.4); ``comparisons`` and ``comparison_matches`` a comparison's
parameters and each match's role in it; ``registered_bots`` a league's bots (owner, the hash of each one's API key:
arena.records.registry); ``submissions`` the versions of its hosted bots, each an archive named by its SHA-256 in
the store beside the database, with its command, its validation and its failed matches (arena.records.submissions).

What a row means is the codec's business (arena.records.codec), a match's lifecycle the ledger's
(arena.records.ledger), reading the queries' (arena.records.queries): nobody outside arena.records writes SQL.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from arena.records.errors import DatabaseError, RecordsDamaged
from arena.records.vault import SeedVault, VaultError

SCHEMA_VERSION = 7
ARENA_TABLES = {"meta", "bots", "matches", "match_bots", "hands", "hand_seats", "actions", "violations"}

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS bots (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    version TEXT NOT NULL DEFAULT '',
    language TEXT NOT NULL DEFAULT '',
    command TEXT NOT NULL DEFAULT '',
    UNIQUE (name, version)
);
CREATE TABLE IF NOT EXISTS matches (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL DEFAULT 'match',
    tournament TEXT,
    created_at REAL NOT NULL,
    finished_at REAL,
    status TEXT NOT NULL,
    seed TEXT NOT NULL,
    commitment TEXT NOT NULL,
    config TEXT NOT NULL,
    starting_stack INTEGER NOT NULL,
    hands_total INTEGER NOT NULL,
    duplicate INTEGER NOT NULL,
    all_orders INTEGER NOT NULL,
    policy TEXT NOT NULL,
    seats INTEGER NOT NULL DEFAULT 0,
    game TEXT NOT NULL DEFAULT '',
    commitment_version INTEGER NOT NULL DEFAULT 1,
    committed TEXT NOT NULL DEFAULT '',
    final_hash TEXT NOT NULL DEFAULT '',
    tables INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE IF NOT EXISTS match_bots (
    match_id TEXT NOT NULL REFERENCES matches(id),
    participant INTEGER NOT NULL,
    bot_id INTEGER NOT NULL REFERENCES bots(id),
    outcome TEXT NOT NULL DEFAULT '',
    detail TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (match_id, participant)
);
CREATE TABLE IF NOT EXISTS joins (
    match_id TEXT NOT NULL REFERENCES matches(id),
    participant INTEGER NOT NULL,
    bot_name TEXT NOT NULL,
    bot_version TEXT NOT NULL,
    language TEXT NOT NULL,
    PRIMARY KEY (match_id, participant, bot_name, bot_version, language)
);
CREATE TABLE IF NOT EXISTS hands (
    match_id TEXT NOT NULL REFERENCES matches(id),
    hand_number INTEGER NOT NULL,
    deal INTEGER NOT NULL,
    rotation INTEGER NOT NULL,
    table_id TEXT NOT NULL,
    button INTEGER NOT NULL,
    deck TEXT NOT NULL,
    board TEXT NOT NULL,
    started_at REAL NOT NULL,
    finished_at REAL NOT NULL,
    config TEXT,
    chain_index INTEGER,
    digests TEXT,
    chain TEXT,
    PRIMARY KEY (match_id, hand_number)
);
CREATE TABLE IF NOT EXISTS hand_seats (
    match_id TEXT NOT NULL,
    hand_number INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    participant INTEGER NOT NULL,
    hole TEXT NOT NULL,
    starting_stack INTEGER NOT NULL,
    payoff INTEGER NOT NULL,
    final_stack INTEGER NOT NULL,
    PRIMARY KEY (match_id, hand_number, seat),
    FOREIGN KEY (match_id, hand_number) REFERENCES hands(match_id, hand_number)
);
CREATE TABLE IF NOT EXISTS actions (
    match_id TEXT NOT NULL,
    hand_number INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    street INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    kind TEXT NOT NULL,
    amount INTEGER NOT NULL,
    cards TEXT NOT NULL,
    all_in INTEGER NOT NULL,
    pot INTEGER NOT NULL,
    how TEXT,
    elapsed_ms REAL,
    request_id INTEGER,
    rejected TEXT,
    policy TEXT,
    comment TEXT,
    PRIMARY KEY (match_id, hand_number, seq),
    FOREIGN KEY (match_id, hand_number) REFERENCES hands(match_id, hand_number)
);
CREATE TABLE IF NOT EXISTS violations (
    match_id TEXT NOT NULL,
    hand_number INTEGER NOT NULL,
    participant INTEGER NOT NULL,
    kind TEXT NOT NULL,
    detail TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS game_results (
    match_id TEXT NOT NULL REFERENCES matches(id),
    game INTEGER NOT NULL,
    rotation INTEGER NOT NULL,
    participant INTEGER NOT NULL,
    place INTEGER,
    hands INTEGER NOT NULL,
    bought_in INTEGER NOT NULL,
    final_stack INTEGER NOT NULL,
    eliminated INTEGER,
    hands_played INTEGER NOT NULL,
    end_reason TEXT NOT NULL,
    PRIMARY KEY (match_id, game, rotation, participant)
);
CREATE TABLE IF NOT EXISTS comparisons (
    id TEXT PRIMARY KEY,
    params TEXT NOT NULL DEFAULT '{}',
    outcome TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE IF NOT EXISTS comparison_matches (
    match_id TEXT PRIMARY KEY REFERENCES matches(id),
    comparison_id TEXT NOT NULL REFERENCES comparisons(id),
    role TEXT NOT NULL,
    reference INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS registered_bots (
    name TEXT PRIMARY KEY,
    owner TEXT NOT NULL DEFAULT '',
    key_hash TEXT NOT NULL UNIQUE,
    created_at REAL NOT NULL,
    key_issued_at REAL NOT NULL,
    revoked_at REAL
);
CREATE TABLE IF NOT EXISTS submissions (
    bot TEXT NOT NULL REFERENCES registered_bots(name),
    version TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    command TEXT NOT NULL,
    size INTEGER NOT NULL,
    submitted_at REAL NOT NULL,
    report TEXT NOT NULL DEFAULT '',
    failures INTEGER NOT NULL DEFAULT 0,
    last_failure TEXT NOT NULL DEFAULT '',
    retired_at REAL,
    retired_reason TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (bot, version)
);
CREATE INDEX IF NOT EXISTS hand_seats_participant ON hand_seats(match_id, participant);
"""

_REFERENCE_MATCH = re.compile(r"-ref(\d+)-(candidate|baseline)$")  # how schema 4 named a comparison's matches


class Database:
    """A connection to an arena database file (created on first use, readable by its owner only).

    ``read_only`` opens an existing file without ever writing to it (a file an older arena wrote is then refused
    with the way to upgrade it); otherwise the file is created unless ``create`` is False, and upgraded in place.
    A match's seed is not stored here until the match is over: before, the database holds its commitment and the
    seed waits in the ``SeedVault`` beside it (``<file>.seeds``), from which ``--resume`` takes it.
    """

    def __init__(self, path: str | Path, *, read_only: bool = False, create: bool = True) -> None:
        self.path = Path(path)
        self.read_only = read_only
        self.create = create
        if self.path.is_dir():
            raise DatabaseError(f"{self.path} is a folder, not a database file")
        if (read_only or not create) and not self.path.is_file():
            raise DatabaseError(f"no database at {self.path} (record one with --db, e.g. arena match ... --db "
                                f"{self.path})")
        self.vault = SeedVault(self.path)
        try:
            self.conn = self._connect()
            self._check_schema()
        except UnicodeDecodeError as exc:  # text in a damaged page that is not UTF-8
            raise RecordsDamaged(f"{self.path} cannot be read as an arena database ({exc}): the file is "
                                 "damaged") from None
        except sqlite3.DatabaseError as exc:
            if "file is not a database" in str(exc):  # no SQLite header: nobody's database, so not ours either
                raise DatabaseError(f"{self.path} is not an arena database ({exc})") from None
            raise RecordsDamaged(f"{self.path} cannot be read as an arena database ({exc}): the file is "
                                 "damaged") from None

    def _connect(self) -> sqlite3.Connection:
        if self.read_only:
            # mode=ro: a read-only command never adds a table (or a journal) to a file it was only asked to read
            conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True, timeout=30.0,
                                   isolation_level=None)
            conn.row_factory = sqlite3.Row
            return conn
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if not self.path.exists():
                with contextlib.suppress(FileExistsError):
                    os.close(os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        except OSError as exc:
            raise DatabaseError(f"cannot create the database {self.path}: {exc.strerror}") from None
        if not os.access(self.path, os.W_OK) or not os.access(self.path.parent, os.W_OK):
            raise DatabaseError(f"cannot write to the database {self.path} (read-only file or folder)")
        conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
        conn.row_factory = sqlite3.Row
        return conn

    def _check_schema(self) -> None:
        """Refuse a file that is not an arena database (and do not write to it); set up or upgrade ours."""
        tables = {r["name"] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if tables and "meta" not in tables:
            raise DatabaseError(f"{self.path} is an SQLite database of something else (tables: "
                                f"{', '.join(sorted(tables)[:5])}): not touching it")
        version = 0
        if "meta" in tables:
            row = self.conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            if row is None or not str(row["value"]).isdigit():
                raise DatabaseError(f"{self.path} has a meta table but no arena schema version: not an arena database")
            version = int(row["value"])
            if version > SCHEMA_VERSION:
                raise DatabaseError(f"{self.path} was written by a newer arena (schema {version}; this one reads "
                                    f"up to {SCHEMA_VERSION})")
            missing = ARENA_TABLES - tables  # the tables of every schema version
            if missing:
                raise RecordsDamaged(f"{self.path} lacks the tables {', '.join(sorted(missing))}: damaged")
        if version == 0 and (self.read_only or not self.create):
            raise DatabaseError(f"{self.path} is empty: no arena database was recorded there")
        if self.read_only:
            if version < SCHEMA_VERSION:
                raise DatabaseError(f"{self.path} was written by an older arena (schema {version}; this one writes "
                                    f"{SCHEMA_VERSION}): any command that records or verifies upgrades it in place, "
                                    f"e.g. arena verify --db {self.path}")
            return
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute("PRAGMA foreign_keys=ON")
        with self.transaction():
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    self.conn.execute(statement)
            if version:
                self._migrate(version)
            self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)",
                              (str(SCHEMA_VERSION),))

    def _migrate(self, version: int) -> None:
        """Bring a database an older arena wrote up to this schema, in place (inside the caller's transaction)."""
        if version == 1:  # schema 2 records how each bot's match went, and tables of fewer seats than bots
            for column in ("outcome", "detail"):
                self._add_column("match_bots", column, "TEXT NOT NULL DEFAULT ''")
            self._add_column("matches", "seats", "INTEGER NOT NULL DEFAULT 0")
        if version < 3:  # schema 3 records the mixed action a decision was drawn from
            self._add_column("actions", "policy", "TEXT")
        if version < 4:  # schema 4: cash games and freezeouts (R11.3, R11.4), each hand's own table
            self._add_column("matches", "game", "TEXT NOT NULL DEFAULT ''")
            self._add_column("hands", "config", "TEXT")
        if version < 5:  # schema 5: the record is evidence (arena.records.evidence); comparisons in a table
            for column, declaration in (("commitment_version", "INTEGER NOT NULL DEFAULT 1"),
                                        ("committed", "TEXT NOT NULL DEFAULT ''"),
                                        ("final_hash", "TEXT NOT NULL DEFAULT ''"),
                                        ("tables", "INTEGER NOT NULL DEFAULT 1")):
                self._add_column("matches", column, declaration)
            for column in ("chain_index INTEGER", "digests TEXT", "chain TEXT"):
                self._add_column("hands", *column.split(" ", 1))
            self._move_comparisons()
        if version < 6:  # schema 6: a bot's decision comment on its action (proto Action.comment)
            self._add_column("actions", "comment", "TEXT")
        # schema 7: a league's hosted bots (the submissions table, made above with every table it lacks)

    def _move_comparisons(self) -> None:
        """Schema 4 kept a comparison's parameters in a ``note:compare:ID`` meta row and each match's role only in
        its id (``ID-h2h``, ``ID-ref<k>-candidate``, ``ID-ref<k>-baseline``): read them once, into the tables."""
        for row in self.conn.execute("SELECT key, value FROM meta WHERE key LIKE 'note:compare:%'").fetchall():
            comparison_id = str(row["key"]).removeprefix("note:compare:")
            try:
                note = json.loads(row["value"])
            except ValueError:
                note = {}
            note = note if isinstance(note, dict) else {}
            outcome = {k: note.pop(k) for k in ("verdict", "test_verdict", "sessions", "llr") if k in note}
            self.conn.execute("INSERT OR IGNORE INTO comparisons(id, params, outcome) VALUES (?, ?, ?)",
                              (comparison_id, json.dumps(note, sort_keys=True), json.dumps(outcome, sort_keys=True)))
            self.conn.execute("DELETE FROM meta WHERE key = ?", (row["key"],))
        for row in self.conn.execute("SELECT id, tournament FROM matches WHERE kind = 'compare'").fetchall():
            match_id, comparison_id = str(row["id"]), str(row["tournament"] or "")
            found = _REFERENCE_MATCH.search(match_id)
            if match_id == f"{comparison_id}-h2h":
                role, reference = "head_to_head", 0
            elif found is not None and match_id.startswith(comparison_id):
                role, reference = found.group(2), int(found.group(1))
            else:
                continue
            self.conn.execute("INSERT OR IGNORE INTO comparisons(id) VALUES (?)", (comparison_id,))
            self.conn.execute("INSERT OR IGNORE INTO comparison_matches(match_id, comparison_id, role, reference)"
                              " VALUES (?, ?, ?, ?)", (match_id, comparison_id, role, reference))

    def _add_column(self, table: str, column: str, declaration: str) -> None:
        """Add a column an older schema lacks (unless it is there already)."""
        columns = {r["name"] for r in self.conn.execute(f"PRAGMA table_info({table})")}
        if column not in columns:
            self.conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()

    def transaction(self) -> _Transaction:
        """``with db.transaction():`` runs the block in one BEGIN IMMEDIATE ... COMMIT."""
        return _Transaction(self)

    # ------------------------------------------------------------------ reading and writing, with damage named

    def rows(self, table: str, sql: str, params: Sequence[Any] = (), match_id: str | None = None) -> list[sqlite3.Row]:
        """Every row of a query on ``table``; a file that cannot be read is ``RecordsDamaged`` naming the table."""
        try:
            return self.conn.execute(sql, params).fetchall()
        except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
            raise _damaged(exc, table, match_id) from None

    def row(self, table: str, sql: str, params: Sequence[Any] = (), match_id: str | None = None) -> sqlite3.Row | None:
        """The first row of a query on ``table`` (or None), as ``rows``."""
        try:
            found: sqlite3.Row | None = self.conn.execute(sql, params).fetchone()
            return found
        except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
            raise _damaged(exc, table, match_id) from None

    def stream(self, table: str, sql: str, params: Sequence[Any] = (), match_id: str | None = None,
               ) -> Iterator[sqlite3.Row]:
        """The rows of a query on ``table`` one at a time (a long match's hands), as ``rows``."""
        try:
            cursor = self.conn.execute(sql, params)
            while (found := cursor.fetchone()) is not None:
                yield found
        except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
            raise _damaged(exc, table, match_id) from None

    def write(self, table: str, sql: str, params: Sequence[Any] = (), many: bool = False) -> None:
        """Run one statement that writes ``table`` (``many``: once per parameter row)."""
        try:
            if many:
                self.conn.executemany(sql, params)
            else:
                self.conn.execute(sql, params)
        except sqlite3.IntegrityError as exc:
            raise RecordsDamaged(f"a write was refused ({exc})", table=table) from None
        except sqlite3.DatabaseError as exc:
            raise _damaged(exc, table, None) from None

    def vault_seed(self, key: str) -> str | None:
        """A seed kept in the vault beside the database (``RecordsDamaged`` if the seed file is damaged)."""
        try:
            return self.vault.get(key)
        except VaultError as exc:
            raise RecordsDamaged(str(exc)) from None


def _damaged(exc: Exception, table: str, match_id: str | None) -> RecordsDamaged:
    return RecordsDamaged(f"cannot be read ({exc})", table=table, match_id=match_id)


class _Transaction:
    def __init__(self, db: Database) -> None:
        self.db = db

    def __enter__(self) -> sqlite3.Connection:
        try:
            self.db.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.DatabaseError as exc:
            raise RecordsDamaged(f"{self.db.path} cannot be written ({exc})") from None
        return self.db.conn

    def __exit__(self, kind: Any, value: Any, traceback: Any) -> None:
        try:
            self.db.conn.execute("COMMIT" if kind is None else "ROLLBACK")
        except sqlite3.DatabaseError as exc:
            if kind is None:
                raise RecordsDamaged(f"{self.db.path} cannot be written ({exc})") from None
