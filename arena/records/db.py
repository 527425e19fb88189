"""The embedded database (SQLite, WAL mode): every hand with every card and action, one transaction per hand,
so a crash loses at most the hand in play.

Tables: ``bots`` (name, version, language), ``matches`` (seed, commitment, table config, status),
``match_bots`` (who sat in a match), ``joins`` (what each participant's bot said of itself in its Join),
``hands`` (deal, rotation, button, deck, board), ``hand_seats`` (each seat's bot, hole cards, payoff), ``actions``
(every event of the hand, with how the referee got each decision), ``violations``; ``registered_bots`` holds a
league's bots (owner, the hash of each one's API key: arena.records.registry). A cash game's or a freezeout's match
keeps its rules in ``matches.game``, each hand whose table differs from the match's (a freezeout's blind level) its
own in ``hands.config``, and ``game_results`` how every game ended for every player (places, R11.4).
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from arena.cards import format_cards, parse_cards
from arena.engine import Action, ActionKind, AnteMode, Event, EventKind, Structure, TableConfig
from arena.records.vault import SeedVault
from arena.referee import ClockPolicy, DecisionRecord, HandRecord, Introduction
from arena.referee.game import EndReason, GameKind, GameResult, GameRules
from arena.referee.match import MatchResult, MatchSpec, ParticipantResult
from arena.referee.status import BotOutcome, MatchKind, MatchStatus

SCHEMA_VERSION = 4
ARENA_TABLES = {"meta", "bots", "matches", "match_bots", "hands", "hand_seats", "actions", "violations"}
HANDS_READ_AT_ONCE = 500  # hand numbers per query when some hands of a match are read (SQLite allows 32,766 variables)

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
    game TEXT NOT NULL DEFAULT ''
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
CREATE TABLE IF NOT EXISTS registered_bots (
    name TEXT PRIMARY KEY,
    owner TEXT NOT NULL DEFAULT '',
    key_hash TEXT NOT NULL UNIQUE,
    created_at REAL NOT NULL,
    key_issued_at REAL NOT NULL,
    revoked_at REAL
);
CREATE INDEX IF NOT EXISTS hand_seats_participant ON hand_seats(match_id, participant);
"""


def config_to_json(config: TableConfig) -> str:
    """A table config as JSON (enums by value)."""
    data = asdict(config)
    data["structure"] = config.structure.value
    data["ante_mode"] = config.ante_mode.value
    return json.dumps(data, sort_keys=True)


def _game_json(spec: MatchSpec) -> str:
    """A match's game as stored in ``matches.game``: its rules and its ``hands`` (a cash game's length); ''
    for the reset game."""
    if not spec.game.is_game:
        return ""
    data = json.loads(spec.game.to_json())
    data["match_hands"] = spec.hands
    return json.dumps(data, sort_keys=True)


def _game_from(text: str) -> tuple[GameRules, int]:
    """The inverse of ``_game_json``: the rules and the match's ``hands`` (0 for the reset game)."""
    if not text:
        return GameRules(), 0
    data = json.loads(text)
    hands = int(data.pop("match_hands"))
    return GameRules.from_json(json.dumps(data)), hands


def config_from_json(text: str) -> TableConfig:
    """The inverse of ``config_to_json``."""
    data = json.loads(text)
    data["structure"] = Structure(data["structure"])
    data["ante_mode"] = AnteMode(data["ante_mode"])
    return TableConfig(**data)


@dataclass(frozen=True, slots=True)
class HandResult:
    """One recorded hand in brief: which deal and rotation (or table) it was, who sat where, who won what."""

    hand_number: int
    deal: int
    rotation: int
    seating: tuple[int, ...]  # the participant in each seat
    payoffs: tuple[int, ...]  # each seat's chips won or lost
    board: str


@dataclass(frozen=True, slots=True)
class PlayerEvent:
    """One event of a player in a recorded hand (an action, a blind, a show), with the participant who made it
    and, for decisions, how the referee got it (``how``: ok, timeout, illegal, absent, forfeited) and how long."""

    hand_number: int
    participant: int
    street: int
    kind: EventKind
    how: str | None
    elapsed_ms: float


@dataclass(frozen=True, slots=True)
class BotMatchOutcome:
    """How one match went for one bot."""

    match_id: str
    name: str
    version: str
    outcome: BotOutcome
    detail: str


@dataclass(frozen=True, slots=True)
class BotInfo:
    """What the database knows of one bot version: its language (from its Join) and its command (a local bot)."""

    name: str
    version: str
    language: str
    command: str


class DatabaseError(RuntimeError):
    """A file that cannot serve as an arena database: missing, a folder, another program's, damaged, read-only."""


class Database:
    """A connection to an arena database file (created on first use, readable by its owner only).

    A match's seed is not stored here until the match is over: before, the database holds its commitment and the
    seed waits in the ``SeedVault`` beside it (``<file>.seeds``), from which ``--resume`` takes it.
    """

    def __init__(self, path: str | Path, *, read_only: bool = False) -> None:
        self.path = Path(path)
        self.read_only = read_only
        if self.path.is_dir():
            raise DatabaseError(f"{self.path} is a folder, not a database file")
        if read_only and not self.path.is_file():
            raise DatabaseError(f"no database at {self.path} (record one with --db, e.g. arena match ... --db "
                                f"{self.path})")
        self.vault = SeedVault(self.path)
        self._configs: dict[str, TableConfig] = {}
        try:
            self.conn = self._connect()
            self._check_schema()
        except sqlite3.DatabaseError as exc:
            raise DatabaseError(f"{self.path} is not an arena database ({exc})") from None

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
                raise DatabaseError(f"{self.path} lacks the tables {', '.join(sorted(missing))}: damaged")
        if self.read_only:
            if version == 0:
                raise DatabaseError(f"{self.path} is empty: no arena database was recorded there")
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
            if version == 1:  # schema 2 records how each bot's match went, and tables of fewer seats than bots
                for column in ("outcome", "detail"):
                    self.conn.execute(f"ALTER TABLE match_bots ADD COLUMN {column} TEXT NOT NULL DEFAULT ''")
                self.conn.execute("ALTER TABLE matches ADD COLUMN seats INTEGER NOT NULL DEFAULT 0")
            if 0 < version < 3:  # schema 3 records the mixed action a decision was drawn from
                self._add_column("actions", "policy", "TEXT")
            if 0 < version < 4:  # schema 4: cash games and freezeouts (R11.3, R11.4), each hand's own table
                self._add_column("matches", "game", "TEXT NOT NULL DEFAULT ''")
                self._add_column("hands", "config", "TEXT")
            self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)",
                              (str(SCHEMA_VERSION),))

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
        return _Transaction(self.conn)

    # ------------------------------------------------------------------ writing

    def bot_id(self, name: str, version: str = "", language: str = "", command: str = "") -> int:
        """The id of a bot (name, version), created if new; language and command are filled in when known."""
        self.conn.execute(
            "INSERT OR IGNORE INTO bots(name, version, language, command) VALUES (?, ?, ?, ?)",
            (name, version, language, command),
        )
        if language or command:
            self.conn.execute(
                "UPDATE bots SET language = CASE WHEN ? != '' THEN ? ELSE language END, "
                "command = CASE WHEN ? != '' THEN ? ELSE command END WHERE name = ? AND version = ?",
                (language, language, command, command, name, version),
            )
        row = self.conn.execute("SELECT id FROM bots WHERE name = ? AND version = ?", (name, version)).fetchone()
        return int(row["id"])

    def start_match(
        self,
        spec: MatchSpec,
        bots: Sequence[tuple[str, str, str]],
        hands_total: int,
        kind: MatchKind = MatchKind.MATCH,
        tournament: str | None = None,
    ) -> None:
        """Record a match before its first hand; ``bots`` are (name, version, command) in participant order.
        Starting a match id that exists already (a resume) keeps it and its hands.
        """
        self.vault.put(spec.match_id, spec.seed)  # secret until the match is over
        with self.transaction():
            exists = self.conn.execute("SELECT 1 FROM matches WHERE id = ?", (spec.match_id,)).fetchone()
            if exists:
                self.conn.execute("UPDATE matches SET status = ? WHERE id = ?", (MatchStatus.RUNNING, spec.match_id))
                return
            self.conn.execute(
                "INSERT INTO matches(id, kind, tournament, created_at, status, seed, commitment, config,"
                " starting_stack, hands_total, duplicate, all_orders, policy, seats, game)"
                " VALUES (?, ?, ?, ?, ?, '', ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    spec.match_id, kind, tournament, time.time(), MatchStatus.RUNNING, spec.commitment,
                    config_to_json(spec.config), spec.starting_stack, hands_total, int(spec.duplicate),
                    int(spec.all_orders), json.dumps(asdict(spec.policy)), spec.seats,
                    _game_json(spec),
                ),
            )
            for participant, (name, version, command) in enumerate(bots):
                self.conn.execute(
                    "INSERT INTO match_bots(match_id, participant, bot_id) VALUES (?, ?, ?)",
                    (spec.match_id, participant, self.bot_id(name, version, command=command)),
                )

    def hand_finished(self, record: HandRecord) -> None:
        """Store one finished hand in one transaction (the HandSink interface)."""
        by_event = {d.event_index: d for d in record.decisions}
        own = None if record.config == self._match_config(record.match_id) else config_to_json(record.config)
        with self.transaction():
            self.conn.execute(
                "INSERT INTO hands(match_id, hand_number, deal, rotation, table_id, button, deck, board, started_at,"
                " finished_at, config) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    record.match_id, record.hand_number, record.deal, record.rotation, record.table_id, record.button,
                    format_cards(record.deck), format_cards(record.board), record.started_at, record.finished_at,
                    own,
                ),
            )
            self.conn.executemany(
                "INSERT INTO hand_seats(match_id, hand_number, seat, participant, hole, starting_stack, payoff,"
                " final_stack) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        record.match_id, record.hand_number, seat, record.seating[seat],
                        format_cards(record.hole[seat]), record.starting_stacks[seat], record.payoffs[seat],
                        record.final_stacks[seat],
                    )
                    for seat in range(len(record.seating))
                ],
            )
            rows = []
            for seq, event in enumerate(record.events):
                decision = by_event.get(seq)
                rows.append((
                    record.match_id, record.hand_number, seq, event.street, event.seat, event.kind.name,
                    event.amount, format_cards(event.cards), int(event.all_in), event.pot,
                    decision.how if decision else None,
                    decision.elapsed_ms if decision else None,
                    decision.request_id if decision else None,
                    json.dumps(list(decision.rejected)) if decision and decision.rejected else None,
                    _policy_json(decision.policy) if decision and decision.policy else None,
                ))
            self.conn.executemany(
                "INSERT INTO actions(match_id, hand_number, seq, street, seat, kind, amount, cards, all_in, pot, how,"
                " elapsed_ms, request_id, rejected, policy) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            self.conn.executemany(
                "INSERT INTO violations(match_id, hand_number, participant, kind, detail) VALUES (?, ?, ?, ?, ?)",
                [
                    (record.match_id, record.hand_number, d.participant, d.how, "; ".join(d.rejected))
                    for d in record.decisions
                    if d.how in ("timeout", "illegal") or (d.how == "absent" and d.elapsed_ms > 0)
                ],
            )

    def _match_config(self, match_id: str) -> TableConfig | None:
        """A match's table (kept: read once per match), to store only the hands' tables that differ from it."""
        config = self._configs.get(match_id)
        if config is None:
            row = self.conn.execute("SELECT config FROM matches WHERE id = ?", (match_id,)).fetchone()
            if row is None:
                return None
            config = self._configs[match_id] = config_from_json(row["config"])
        return config

    def finish_match(self, result: MatchResult) -> None:
        """Record how a match ended and what each bot said of itself when it joined (``record_joined``); once it is
        over for good (``MatchStatus.over``) its seed is published here."""
        status = MatchStatus(result.reason)
        with self.transaction():
            self.conn.execute(
                "UPDATE matches SET status = ?, finished_at = ? WHERE id = ?",
                (status, time.time(), result.match_id),
            )
            for participant, r in enumerate(result.results):
                for introduction in r.joined:
                    self.record_joined(result.match_id, participant, introduction)
            if status.over:
                self.conn.execute("UPDATE matches SET seed = ? WHERE id = ?", (result.seed, result.match_id))
            self.conn.executemany(
                "UPDATE match_bots SET outcome = ?, detail = ? WHERE match_id = ? AND participant = ?",
                [(r.outcome, r.failure or "", result.match_id, i) for i, r in enumerate(result.results)],
            )
            if result.games:
                self.conn.execute("DELETE FROM game_results WHERE match_id = ?", (result.match_id,))
                self.conn.executemany(
                    "INSERT INTO game_results(match_id, game, rotation, participant, place, hands, bought_in,"
                    " final_stack, eliminated, hands_played, end_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [(result.match_id, g.game, g.rotation, p, g.places[p], g.hands[p], g.bought_in[p],
                      g.final_stacks[p], g.eliminated[p], g.hands_played, g.end.name)
                     for g in result.games for p in range(len(g.hands))],
                )
        if status.over:
            self.vault.pop(result.match_id)

    def publish_seed(self, key: str) -> str | None:
        """Move a seed kept in the vault under ``key`` (a tournament's) into the database, where it is published."""
        seed = self.vault.get(key)
        if seed is not None:
            with self.transaction():
                self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (f"seed:{key}", seed))
            self.vault.pop(key)
        return seed

    def published_seed(self, key: str) -> str | None:
        """A seed published with ``publish_seed``."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (f"seed:{key}",)).fetchone()
        return str(row["value"]) if row else None

    def match_spec(self, match_id: str) -> MatchSpec:
        """A recorded match's spec as it was played (its seed from the database or the vault, '' if unknown)."""
        row = self.match_row(match_id)
        if row is None:
            raise KeyError(f"no match {match_id!r} in {self.path}")
        game, hands = _game_from(_column(row, "game"))
        return MatchSpec(
            match_id=match_id, seed=self.match_seed(match_id) or "", hands=hands or row["hands_total"], game=game,
            config=config_from_json(row["config"]), starting_stack=row["starting_stack"],
            policy=ClockPolicy(**json.loads(row["policy"])), duplicate=bool(row["duplicate"]),
            all_orders=bool(row["all_orders"]), seats=int(row["seats"]),
        )

    def record_joined(self, match_id: str, participant: int, introduction: Introduction) -> None:
        """Note what a participant's bot said of itself in its Join (its name, version and language, which are not
        its identity: that is the participant's bot). The bot's language fills the ``bots`` row where it is unknown.
        """
        self.conn.execute(
            "INSERT OR IGNORE INTO joins(match_id, participant, bot_name, bot_version, language)"
            " VALUES (?, ?, ?, ?, ?)",
            (match_id, participant, introduction.bot_name, introduction.bot_version, introduction.language),
        )
        if introduction.language:
            self.conn.execute(
                "UPDATE bots SET language = ? WHERE language = '' AND id ="
                " (SELECT bot_id FROM match_bots WHERE match_id = ? AND participant = ?)",
                (introduction.language, match_id, participant),
            )

    def joined(self, match_id: str) -> dict[int, list[Introduction]]:
        """What each participant's bot said of itself when it joined, by participant (those that never joined are
        missing)."""
        rows = self.conn.execute(
            "SELECT participant, bot_name, bot_version, language FROM joins WHERE match_id = ?"
            " ORDER BY participant, rowid",
            (match_id,),
        )
        out: dict[int, list[Introduction]] = {}
        for r in rows:
            out.setdefault(int(r["participant"]), []).append(
                Introduction(r["bot_name"], r["bot_version"], r["language"])
            )
        return out

    def hand_results(self, match_id: str) -> list[HandResult]:
        """Every recorded hand of a match in brief, by hand number (for sessions, listings and pages)."""
        rows = self.conn.execute(
            "SELECT h.hand_number, h.deal, h.rotation, h.board, s.participant, s.payoff FROM hands h JOIN hand_seats s"
            " USING (match_id, hand_number) WHERE h.match_id = ? ORDER BY h.hand_number, s.seat", (match_id,))
        out: list[HandResult] = []
        seating: list[int] = []
        payoffs: list[int] = []
        current: tuple[int, int, int, str] | None = None
        for r in rows:
            key = (int(r["hand_number"]), int(r["deal"]), int(r["rotation"]), str(r["board"]))
            if key != current:
                if current is not None:
                    out.append(HandResult(*current[:3], tuple(seating), tuple(payoffs), current[3]))
                current, seating, payoffs = key, [], []
            seating.append(int(r["participant"]))
            payoffs.append(int(r["payoff"]))
        if current is not None:
            out.append(HandResult(*current[:3], tuple(seating), tuple(payoffs), current[3]))
        return out

    def player_events(self, match_id: str) -> list[PlayerEvent]:
        """Every event a player made in a match's recorded hands (for play statistics)."""
        rows = self.conn.execute(
            "SELECT a.hand_number, s.participant, a.street, a.kind, a.how, a.elapsed_ms FROM actions a"
            " JOIN hand_seats s USING (match_id, hand_number, seat) WHERE a.match_id = ? AND a.seat >= 0"
            " ORDER BY a.hand_number, a.seq", (match_id,))
        return [PlayerEvent(int(r["hand_number"]), int(r["participant"]), int(r["street"]), EventKind[r["kind"]],
                            r["how"], float(r["elapsed_ms"] or 0.0)) for r in rows]

    def violation_counts(self, match_id: str) -> dict[int, int]:
        """Violations recorded per participant of a match."""
        rows = self.conn.execute("SELECT participant, COUNT(*) AS n FROM violations WHERE match_id = ?"
                                 " GROUP BY participant", (match_id,))
        return {int(r["participant"]): int(r["n"]) for r in rows}

    def hands_per_participant(self, match_id: str) -> dict[int, int]:
        """How many recorded hands each participant of a match was dealt into."""
        rows = self.conn.execute("SELECT participant, COUNT(*) AS n FROM hand_seats WHERE match_id = ?"
                                 " GROUP BY participant", (match_id,))
        return {int(r["participant"]): int(r["n"]) for r in rows}

    def net_chips(self, match_id: str) -> list[int]:
        """Each participant's chips won over the recorded hands of a match."""
        net = [0] * len(self.participants(match_id))
        for r in self.conn.execute("SELECT participant, SUM(payoff) AS s FROM hand_seats WHERE match_id = ?"
                                   " GROUP BY participant", (match_id,)):
            net[int(r["participant"])] = int(r["s"])
        return net

    def bot_outcomes(self, match_ids: list[str]) -> list[BotMatchOutcome]:
        """How each match went for each of its bots (recorded when the match ended; empty before)."""
        out: list[BotMatchOutcome] = []
        for match_id in match_ids:
            rows = self.conn.execute(
                "SELECT b.name, b.version, m.outcome, m.detail FROM match_bots m JOIN bots b ON b.id = m.bot_id"
                " WHERE m.match_id = ? AND m.outcome != '' ORDER BY m.participant", (match_id,))
            out.extend(BotMatchOutcome(match_id, r["name"], r["version"], BotOutcome(r["outcome"]), r["detail"])
                       for r in rows)
        return out

    def event_taken(self, name: str) -> bool:
        """Whether a tournament or comparison of this name (or matches named after it) is recorded already."""
        row = self.conn.execute("SELECT 1 FROM matches WHERE id LIKE ? OR tournament = ?",
                                (f"{name}-%", name)).fetchone()
        return row is not None

    def matches_of(self, event: str, kind: MatchKind) -> list[str]:
        """The match ids of a tournament or comparison, by id."""
        rows = self.conn.execute("SELECT id FROM matches WHERE tournament = ? AND kind = ? ORDER BY id",
                                 (event, kind))
        return [str(r["id"]) for r in rows]

    def finished_matches_of(self, event: str, kind: MatchKind) -> list[str]:
        """The match ids of an event that are over for good, in the order they ended (a league's online ratings
        are replayed in this order, the order they were updated in as the matches ended)."""
        rows = self.conn.execute(
            "SELECT id, status FROM matches WHERE tournament = ? AND kind = ? AND finished_at IS NOT NULL"
            " ORDER BY finished_at, id", (event, kind))
        return [str(r["id"]) for r in rows if MatchStatus(r["status"]).over]

    def bots_played(self, event: str, kind: MatchKind, since: float = 0.0) -> dict[str, tuple[int, float]]:
        """Per bot name of an event's finished matches (those that ended at ``since`` or later): how many it played,
        and when its last one ended."""
        rows = self.conn.execute(
            "SELECT b.name AS name, COUNT(*) AS n, MAX(m.finished_at) AS last FROM matches m"
            " JOIN match_bots mb ON mb.match_id = m.id JOIN bots b ON b.id = mb.bot_id"
            " WHERE m.tournament = ? AND m.kind = ? AND m.finished_at >= ? GROUP BY b.name", (event, kind, since))
        return {str(r["name"]): (int(r["n"]), float(r["last"])) for r in rows}

    def interrupt_running(self, event: str, kind: MatchKind) -> list[str]:
        """End every match of an event still marked running (its referee died) as ``interrupted``: the hands it
        finished stand, nothing more is dealt, and its seed is published so that they can be verified."""
        rows = self.conn.execute("SELECT id FROM matches WHERE tournament = ? AND kind = ? AND status = ?",
                                 (event, kind, MatchStatus.RUNNING)).fetchall()
        ids = [str(r["id"]) for r in rows]
        for match_id in ids:
            seed = self.vault.get(match_id) or ""
            with self.transaction():
                self.conn.execute("UPDATE matches SET status = ?, finished_at = ?, seed = ? WHERE id = ?",
                                  (MatchStatus.INTERRUPTED, time.time(), seed, match_id))
            self.vault.pop(match_id)
        return ids

    def save_note(self, key: str, data: dict[str, Any]) -> None:
        """Keep a JSON document beside the hands (a comparison's parameters and verdict)."""
        with self.transaction():
            self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                              (f"note:{key}", json.dumps(data, sort_keys=True)))

    def note(self, key: str) -> dict[str, Any] | None:
        """A document kept with ``save_note``."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (f"note:{key}",)).fetchone()
        if row is None:
            return None
        data = json.loads(row["value"])
        return data if isinstance(data, dict) else None

    def match_seed(self, match_id: str) -> str | None:
        """A match's seed: published once it is over, else kept in the vault (for a resume), else unknown."""
        row = self.match_row(match_id)
        if row is not None and row["seed"]:
            return str(row["seed"])
        return self.vault.get(match_id)

    # ------------------------------------------------------------------ reading

    def hands_recorded(self, match_id: str) -> int:
        """How many hands of a match are stored (not always the first ones: lanes and tables play side by side)."""
        row = self.conn.execute("SELECT COUNT(*) AS n FROM hands WHERE match_id = ?", (match_id,)).fetchone()
        return int(row["n"])

    def participant_totals(self, match_id: str) -> list[ParticipantResult]:
        """Each participant's figures over the hands recorded so far (what a resumed match adds to)."""
        match = self.match_row(match_id)
        if match is None:
            raise KeyError(f"no match {match_id!r} in {self.path}")
        big_blind = config_from_json(match["config"]).big_blind
        out = []
        for index, (name, version) in enumerate(self.participants(match_id)):
            seats = self.conn.execute(
                "SELECT COUNT(*) AS hands, COALESCE(SUM(payoff), 0) AS net FROM hand_seats"
                " WHERE match_id = ? AND participant = ?", (match_id, index)).fetchone()
            how = {r["how"]: (int(r["n"]), float(r["ms"] or 0.0)) for r in self.conn.execute(
                "SELECT a.how, COUNT(*) AS n, SUM(a.elapsed_ms) AS ms FROM actions a JOIN hand_seats s"
                " USING (match_id, hand_number, seat) WHERE a.match_id = ? AND s.participant = ? AND a.how IS NOT NULL"
                " GROUP BY a.how", (match_id, index))}
            violations = self.conn.execute(
                "SELECT COUNT(*) AS n FROM violations WHERE match_id = ? AND participant = ?",
                (match_id, index)).fetchone()["n"]
            asked = {k: v for k, v in how.items() if k not in ("forfeited", "absent")}
            decisions = sum(n for n, _ in asked.values())
            hands, net = int(seats["hands"]), int(seats["net"])
            out.append(ParticipantResult(
                name=name, version=version, net=net, hands=hands,
                mbb_per_hand=1000.0 * net / big_blind / hands if hands else 0.0, decisions=decisions,
                mean_think_ms=sum(ms for _, ms in asked.values()) / decisions if decisions else 0.0,
                violations=int(violations), timeouts=how.get("timeout", (0, 0.0))[0],
                illegal=how.get("illegal", (0, 0.0))[0], absent=how.get("absent", (0, 0.0))[0],
                forfeited="forfeited" in how, notes=(),
            ))
        return out

    def final_stacks(self, match_id: str) -> dict[int, tuple[int, ...]]:
        """Each recorded hand's final stacks, seat by seat, by hand number (a resumed game starts from them)."""
        rows = self.conn.execute("SELECT hand_number, final_stack FROM hand_seats WHERE match_id = ?"
                                 " ORDER BY hand_number, seat", (match_id,))
        out: dict[int, list[int]] = {}
        for r in rows:
            out.setdefault(int(r["hand_number"]), []).append(int(r["final_stack"]))
        return {number: tuple(stacks) for number, stacks in out.items()}

    def game_results(self, match_id: str) -> list[GameResult]:
        """How each game of a cash game's or a freezeout's match ended (recorded when the match ended), by game and
        rotation."""
        row = self.match_row(match_id)
        if row is None:
            raise KeyError(f"no match {match_id!r} in {self.path}")
        kind = _game_from(_column(row, "game"))[0].kind
        if kind is GameKind.RESET:
            return []
        rows = self.conn.execute("SELECT * FROM game_results WHERE match_id = ? ORDER BY game, rotation, participant",
                                 (match_id,)).fetchall()
        grouped: dict[tuple[int, int], list[sqlite3.Row]] = {}
        for r in rows:
            grouped.setdefault((int(r["game"]), int(r["rotation"])), []).append(r)
        out = []
        for (game, rotation), players in grouped.items():
            first = players[0]
            out.append(GameResult(
                game=game, rotation=rotation, kind=kind, hands_played=int(first["hands_played"]),
                end=EndReason[first["end_reason"]], places=tuple(r["place"] for r in players),
                hands=tuple(int(r["hands"]) for r in players), bought_in=tuple(int(r["bought_in"]) for r in players),
                final_stacks=tuple(int(r["final_stack"]) for r in players),
                eliminated=tuple(r["eliminated"] for r in players),
            ))
        return out

    def game_kind(self, match_id: str) -> GameKind:
        """The game a recorded match played (the reset game for matches recorded before games existed)."""
        row = self.match_row(match_id)
        return _game_from(_column(row, "game"))[0].kind if row is not None else GameKind.RESET

    def recorded_hands(self, match_id: str) -> set[int]:
        """The hand numbers of a match already stored (a resumed match plays the others)."""
        rows = self.conn.execute("SELECT hand_number FROM hands WHERE match_id = ?", (match_id,))
        return {int(r["hand_number"]) for r in rows}

    def match_row(self, match_id: str) -> sqlite3.Row | None:
        """The ``matches`` row of a match."""
        row: sqlite3.Row | None = self.conn.execute("SELECT * FROM matches WHERE id = ?", (match_id,)).fetchone()
        return row

    def match_ids(self) -> list[str]:
        """Every recorded match, oldest first."""
        return [r["id"] for r in self.conn.execute("SELECT id FROM matches ORDER BY created_at, id")]

    def participants(self, match_id: str) -> list[tuple[str, str]]:
        """(name, version) of each participant of a match, in order."""
        rows = self.conn.execute(
            "SELECT b.name, b.version FROM match_bots m JOIN bots b ON b.id = m.bot_id WHERE m.match_id = ?"
            " ORDER BY m.participant",
            (match_id,),
        )
        return [(r["name"], r["version"]) for r in rows]

    def runouts(self, match_id: str) -> list[int]:
        """The hands of a match that went to a showdown with board cards dealt after the last action (an all-in
        before the river), by hand number."""
        rows = self.conn.execute(
            "SELECT hand_number FROM actions WHERE match_id = ? GROUP BY hand_number"
            " HAVING SUM(kind IN ('SHOW', 'MUCK')) > 0 AND MAX(CASE WHEN kind = 'DEAL_BOARD' THEN seq END) >"
            " COALESCE(MAX(CASE WHEN kind IN ('FOLD', 'CHECK', 'CALL', 'BET', 'RAISE') THEN seq END), -1)"
            " ORDER BY hand_number", (match_id,))
        return [int(r["hand_number"]) for r in rows]

    def hand_records(self, match_id: str, numbers: Collection[int] | None = None) -> Iterator[HandRecord]:
        """Every stored hand of a match (or those of ``numbers``) as a HandRecord, in order (for exports,
        verification and statistics)."""
        match = self.match_row(match_id)
        if match is None:
            raise KeyError(f"no match {match_id!r} in {self.path}")
        config = config_from_json(match["config"])
        names = [name for name, _ in self.participants(match_id)]
        configs: dict[str, TableConfig] = {}  # a freezeout's hands share a few tables (its blind levels)
        if numbers is not None:
            yield from self._hands_of(match_id, sorted(set(numbers)), config, configs, names)
            return
        hands = self.conn.execute(
            "SELECT * FROM hands WHERE match_id = ? ORDER BY hand_number", (match_id,)
        ).fetchall()
        for hand in hands:
            number = hand["hand_number"]
            seats = self.conn.execute(
                "SELECT * FROM hand_seats WHERE match_id = ? AND hand_number = ? ORDER BY seat", (match_id, number)
            ).fetchall()
            actions = self.conn.execute(
                "SELECT * FROM actions WHERE match_id = ? AND hand_number = ? ORDER BY seq", (match_id, number)
            ).fetchall()
            yield _hand_record(match_id, hand, seats, actions, config, configs, names, _cards)

    def _hands_of(self, match_id: str, numbers: list[int], config: TableConfig, configs: dict[str, TableConfig],
                  names: list[str]) -> Iterator[HandRecord]:
        """The stored hands of ``numbers`` (sorted), three queries for each ``HANDS_READ_AT_ONCE`` of them: a few
        hands of a long match are read without reading the others (the scoring worker reads each session's)."""
        parsed: dict[str, tuple[int, ...]] = {}  # a deal's deck and holes come up in each of its hands

        def cards(text: str) -> tuple[int, ...]:
            found = parsed.get(text)
            if found is None:
                found = parsed[text] = tuple(parse_cards(text))
            return found

        for start in range(0, len(numbers), HANDS_READ_AT_ONCE):
            parsed.clear()
            chunk = numbers[start:start + HANDS_READ_AT_ONCE]
            marks = ", ".join("?" * len(chunk))
            rows: dict[str, dict[int, list[sqlite3.Row]]] = {}
            for table, order in (("hands", "hand_number"), ("hand_seats", "hand_number, seat"),
                                 ("actions", "hand_number, seq")):
                found = rows[table] = {}
                for row in self.conn.execute(f"SELECT * FROM {table} WHERE match_id = ? AND hand_number IN ({marks})"
                                             f" ORDER BY {order}", (match_id, *chunk)):
                    found.setdefault(row["hand_number"], []).append(row)
            for number, (hand,) in rows["hands"].items():
                yield _hand_record(match_id, hand, rows["hand_seats"].get(number, []),
                                   rows["actions"].get(number, []), config, configs, names, cards)

    def event_match_ids(self, event: str) -> list[str]:
        """The matches of a tournament, comparison or league (whatever their kind), oldest first."""
        rows = self.conn.execute("SELECT id FROM matches WHERE tournament = ? ORDER BY created_at, id", (event,))
        return [str(r["id"]) for r in rows]

    def event_names(self) -> list[str]:
        """Every tournament, comparison and league recorded, by name."""
        rows = self.conn.execute("SELECT DISTINCT tournament FROM matches WHERE tournament IS NOT NULL"
                                 " ORDER BY tournament")
        return [str(r["tournament"]) for r in rows]

    def bot_infos(self) -> list[BotInfo]:
        """Every bot version recorded, by name and version."""
        rows = self.conn.execute("SELECT name, version, language, command FROM bots ORDER BY name, version")
        return [BotInfo(str(r["name"]), str(r["version"]), str(r["language"]), str(r["command"])) for r in rows]

    def owners(self) -> dict[str, str]:
        """The owner of each registered (league) bot, by name; empty for a database without a league."""
        try:
            rows = self.conn.execute("SELECT name, owner FROM registered_bots")
        except sqlite3.OperationalError:  # a read-only database of an arena that had no leagues yet
            return {}
        return {str(r["name"]): str(r["owner"]) for r in rows}

    def match_hand_records(self, match_id: str) -> Iterator[HandRecord]:
        """Every stored hand of a match as ``hand_records`` gives it, in order, read in three queries instead of
        two a hand (a published site replays every hand of a match, 20,000 of them for a long one)."""
        match = self.match_row(match_id)
        if match is None:
            raise KeyError(f"no match {match_id!r} in {self.path}")
        config = config_from_json(match["config"])
        names = [name for name, _ in self.participants(match_id)]
        hands = self.conn.execute("SELECT * FROM hands WHERE match_id = ? ORDER BY hand_number", (match_id,))
        seat_rows = self.conn.execute(
            "SELECT * FROM hand_seats WHERE match_id = ? ORDER BY hand_number, seat", (match_id,))
        action_rows = self.conn.execute(
            "SELECT * FROM actions WHERE match_id = ? ORDER BY hand_number, seq", (match_id,))
        parsed: dict[str, tuple[int, ...]] = {}  # the same cards come up again and again (holes, shared decks)
        configs: dict[str, TableConfig] = {}

        def cards(text: str) -> tuple[int, ...]:
            found = parsed.get(text)
            if found is None:
                found = parsed[text] = tuple(parse_cards(text))
                if len(parsed) > 100_000:
                    parsed.clear()
            return found

        next_seat: sqlite3.Row | None = seat_rows.fetchone()
        next_action: sqlite3.Row | None = action_rows.fetchone()
        for hand in hands:
            number = hand["hand_number"]
            seats: list[sqlite3.Row] = []
            while next_seat is not None and next_seat["hand_number"] <= number:
                if next_seat["hand_number"] == number:
                    seats.append(next_seat)
                next_seat = seat_rows.fetchone()
            actions: list[sqlite3.Row] = []
            while next_action is not None and next_action["hand_number"] <= number:
                if next_action["hand_number"] == number:
                    actions.append(next_action)
                next_action = action_rows.fetchone()
            yield _hand_record(match_id, hand, seats, actions, config, configs, names, cards)


def _column(row: sqlite3.Row, name: str) -> Any:
    """A column that older schemas lack (a database opened read-only is never upgraded): '' when it is missing."""
    return row[name] if name in row.keys() else ""  # noqa: SIM118 (sqlite3.Row has keys(), not __contains__)


def _cards(text: str) -> tuple[int, ...]:
    return tuple(parse_cards(text))


def _hand_record(match_id: str, hand: sqlite3.Row, seats: Sequence[sqlite3.Row], actions: Sequence[sqlite3.Row],
                 default: TableConfig, configs: dict[str, TableConfig], names: Sequence[str],
                 cards: Callable[[str], tuple[int, ...]]) -> HandRecord:
    """One stored hand as a HandRecord, from its rows (``configs``: the hands' own tables parsed so far, e.g. a
    freezeout's blind levels; ``cards``: how card text is parsed)."""
    number = hand["hand_number"]
    events = tuple(Event(EventKind[row["kind"]], row["seat"], row["street"], row["amount"], cards(row["cards"]),
                         bool(row["all_in"]), row["pot"]) for row in actions)
    seating = tuple(int(s["participant"]) for s in seats)
    decisions = [
        DecisionRecord(
            seat=row["seat"], participant=seating[row["seat"]], request_id=row["request_id"] or 0,
            action=_action(events[row["seq"]]), elapsed_ms=row["elapsed_ms"] or 0.0, how=row["how"],
            event_index=row["seq"], rejected=tuple(json.loads(row["rejected"])) if row["rejected"] else (),
            policy=_policy_from_json(_column(row, "policy")),
        )
        for row in actions
        if row["how"] is not None
    ]
    own = _column(hand, "config")
    if own and own not in configs:
        configs[own] = config_from_json(own)
    return HandRecord(
        match_id=match_id, table_id=hand["table_id"], hand_id=f"{match_id}-{number}", hand_number=number,
        deal=hand["deal"], rotation=hand["rotation"], seating=seating, button=hand["button"],
        config=configs[own] if own else default,
        starting_stacks=tuple(int(s["starting_stack"]) for s in seats),
        deck=cards(hand["deck"]), hole=tuple(cards(s["hole"]) for s in seats), board=cards(hand["board"]),
        events=events, payoffs=tuple(int(s["payoff"]) for s in seats),
        final_stacks=tuple(int(s["final_stack"]) for s in seats),
        decisions=decisions, names=tuple(names[p] for p in seating),
        started_at=hand["started_at"], finished_at=hand["finished_at"],
    )


def _policy_json(policy: Sequence[tuple[Action, float]]) -> str:
    """A mixed action as stored: ``[["RAISE", 300, 0.25], ...]``."""
    return json.dumps([[a.kind.name, a.amount, p] for a, p in policy])


def _policy_from_json(text: str | None) -> tuple[tuple[Action, float], ...]:
    """A stored mixed action (none: empty, or a schema without the column)."""
    if not text:
        return ()
    return tuple((Action(ActionKind[kind], int(amount)), float(p)) for kind, amount, p in json.loads(text))


def _action(event: Event) -> Action:
    """The action a decision event stands for (bets and raises are raise-to totals, R6.2)."""
    kind = {
        EventKind.FOLD: ActionKind.FOLD,
        EventKind.CHECK: ActionKind.CHECK,
        EventKind.CALL: ActionKind.CALL,
        EventKind.BET: ActionKind.RAISE,
        EventKind.RAISE: ActionKind.RAISE,
    }[event.kind]
    return Action(kind, event.amount if kind is ActionKind.RAISE else 0)


class _Transaction:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute("BEGIN IMMEDIATE")
        return self.conn

    def __exit__(self, kind: Any, value: Any, traceback: Any) -> None:
        if kind is None:
            self.conn.execute("COMMIT")
        else:
            self.conn.execute("ROLLBACK")
