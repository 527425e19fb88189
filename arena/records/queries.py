"""Reading the records, in types: every reader outside arena.records goes through here and never sees a row.

Each function takes the ``Database`` and returns dataclasses and enums (``MatchInfo`` with its ``MatchStatus`` and
``MatchKind``, ``HandResult``, ``PlayerEvent``, ``GameResult``...). A row that does not decode is
``RecordsDamaged`` naming the table and the match; a match that is not there is ``None`` or a ``KeyError``.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, NamedTuple

from arena.engine import EventKind, TableConfig
from arena.records.codec import (
    ACTION_COLUMNS,
    HAND_COLUMNS,
    SEAT_COLUMNS,
    VIOLATION_COLUMNS,
    HandRows,
    card_parser,
    config_from_json,
    decode,
    game_from,
    hand_record,
    stamp,
)
from arena.records.db import Database
from arena.records.errors import RecordsDamaged
from arena.referee import ClockPolicy, DecisionHow, HandRecord, Introduction, MatchSpec
from arena.referee.game import EndReason, GameKind, GameResult, GameRules
from arena.referee.status import BotOutcome, MatchKind, MatchStatus
from arena.runner.settings import MAX_HANDS


@dataclass(frozen=True, slots=True)
class MatchInfo:
    """A recorded match: what it is, how it stands, and what was committed to before it was played."""

    match_id: str
    kind: MatchKind
    event: str | None  # the tournament, comparison or league it belongs to
    created_at: float
    finished_at: float | None
    status: MatchStatus
    seed: str  # published once the match is over; '' before
    commitment: str
    commitment_version: int  # 1: the seed's hash alone (recorded before schema 5); 2: arena.records.evidence
    committed: str  # the document the commitment is the hash of (version 2), as stored
    final_hash: str  # stored when the match ended ('' while it runs)
    config: TableConfig
    config_json: str
    starting_stack: int
    hands_total: int
    duplicate: bool
    all_orders: bool
    policy: ClockPolicy
    seats: int
    game: GameRules
    game_hands: int  # a cash game's length (0 for the reset game)
    game_json: str
    tables: int  # tables played side by side by the run that last played it

    def spec(self, seed: str) -> MatchSpec:
        """The match's spec as it was played, dealt from ``seed`` (``RecordsDamaged`` if no match can be so)."""
        spec: MatchSpec = decode("the match's settings", "matches", self.match_id, lambda: MatchSpec(
            match_id=self.match_id, seed=seed, hands=self.game_hands or self.hands_total, game=self.game,
            config=self.config, starting_stack=self.starting_stack, policy=self.policy, duplicate=self.duplicate,
            all_orders=self.all_orders, seats=self.seats, tables=self.tables,
        ))
        return spec


class Contestant(NamedTuple):
    """Who a participant of a match is: a bot's name and version."""

    name: str
    version: str


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
    and, for decisions, how the referee got it and how long it took."""

    hand_number: int
    participant: int
    street: int
    kind: EventKind
    how: DecisionHow | None
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


# ---------------------------------------------------------------------------------------------- matches


def match_info(db: Database, match_id: str) -> MatchInfo | None:
    """A match as recorded, or None."""
    row = db.row("matches", "SELECT * FROM matches WHERE id = ?", (match_id,), match_id)
    if row is None:
        return None

    def convert() -> MatchInfo:
        game, hands = game_from(row["game"])
        if not game.is_game and not 0 <= int(row["hands_total"]) <= 2 * MAX_HANDS:  # its schedule must fit in memory
            raise ValueError(f"hands_total {row['hands_total']} is no match's (at most {2 * MAX_HANDS:,})")
        return MatchInfo(
            match_id=match_id, kind=MatchKind(row["kind"]), event=row["tournament"],
            created_at=stamp(row["created_at"]),
            finished_at=None if row["finished_at"] is None else stamp(row["finished_at"]),
            status=MatchStatus(row["status"]), seed=str(row["seed"]), commitment=str(row["commitment"]),
            commitment_version=int(row["commitment_version"]), committed=str(row["committed"]),
            final_hash=str(row["final_hash"]), config=config_from_json(row["config"]), config_json=str(row["config"]),
            starting_stack=int(row["starting_stack"]), hands_total=int(row["hands_total"]),
            duplicate=bool(row["duplicate"]), all_orders=bool(row["all_orders"]),
            policy=ClockPolicy(**json.loads(row["policy"])), seats=int(row["seats"]), game=game, game_hands=hands,
            game_json=str(row["game"]), tables=max(1, int(row["tables"])),
        )

    info: MatchInfo = decode("the match's row", "matches", match_id, convert)
    return info


def require(db: Database, match_id: str) -> MatchInfo:
    """A match as recorded; ``KeyError`` naming the database when it is not there."""
    info = match_info(db, match_id)
    if info is None:
        raise KeyError(f"no match {match_id!r} in {db.path}")
    return info


def match_ids(db: Database) -> list[str]:
    """Every recorded match, oldest first."""
    return _ids(db.rows("matches", "SELECT id FROM matches ORDER BY created_at, id"))


def _ids(rows: list[Any]) -> list[str]:
    """The match ids of ``rows`` (a damaged row's id may be anything: ``RecordsDamaged``)."""
    ids = [r["id"] for r in rows]
    for found in ids:
        if not isinstance(found, str) or not found:
            raise RecordsDamaged(f"a match's id is {found!r}, not a name", table="matches")
    return ids


def match_seed(db: Database, match_id: str) -> str | None:
    """A match's seed: published once it is over, else kept in the vault (for a resume), else unknown."""
    info = match_info(db, match_id)
    if info is not None and info.seed:
        return info.seed
    return db.vault_seed(match_id)


def match_spec(db: Database, match_id: str) -> MatchSpec:
    """A recorded match's spec as it was played (its seed from the database or the vault, '' if unknown)."""
    return require(db, match_id).spec(match_seed(db, match_id) or "")


def participants(db: Database, match_id: str) -> list[Contestant]:
    """Who each participant of a match is, in participant order."""
    rows = db.rows("match_bots", "SELECT m.participant, b.name, b.version FROM match_bots m JOIN bots b ON"
                   " b.id = m.bot_id WHERE m.match_id = ? ORDER BY m.participant", (match_id,), match_id)
    if [r["participant"] for r in rows] != list(range(len(rows))) or len(rows) < 2:
        raise RecordsDamaged(f"the participants are numbered {[r['participant'] for r in rows]}, not 0 to n-1 "
                             "(at least two)",
                             table="match_bots", match_id=match_id)
    return [Contestant(str(r["name"]), str(r["version"])) for r in rows]


def hands_recorded(db: Database, match_id: str) -> int:
    """How many hands of a match are stored (not always the first ones: tables play side by side)."""
    row = db.row("hands", "SELECT COUNT(*) AS n FROM hands WHERE match_id = ?", (match_id,), match_id)
    return int(row["n"]) if row is not None else 0


def recorded_hands(db: Database, match_id: str) -> set[int]:
    """The hand numbers of a match stored so far."""
    rows = db.rows("hands", "SELECT hand_number FROM hands WHERE match_id = ?", (match_id,), match_id)
    numbers: set[int] = decode("a hand's number", "hands", match_id, lambda: {int(r["hand_number"]) for r in rows})
    return numbers


def final_stacks(db: Database, match_id: str) -> dict[int, tuple[int, ...]]:
    """Each recorded hand's final stacks, seat by seat, by hand number (a resumed game starts from them)."""
    rows = db.rows("hand_seats", "SELECT hand_number, final_stack FROM hand_seats WHERE match_id = ?"
                   " ORDER BY hand_number, seat", (match_id,), match_id)

    def convert() -> dict[int, tuple[int, ...]]:
        out: dict[int, list[int]] = {}
        for r in rows:
            out.setdefault(int(r["hand_number"]), []).append(int(r["final_stack"]))
        return {number: tuple(stacks) for number, stacks in out.items()}

    stacks: dict[int, tuple[int, ...]] = decode("a final stack", "hand_seats", match_id, convert)
    return stacks


def game_kind(db: Database, match_id: str) -> GameKind:
    """The game a recorded match played (the reset game for matches recorded before games existed)."""
    info = match_info(db, match_id)
    return info.game.kind if info is not None else GameKind.RESET


def game_results(db: Database, match_id: str) -> list[GameResult]:
    """How each game of a cash game's or a freezeout's match ended (recorded when the match ended), by game and
    rotation."""
    kind = require(db, match_id).game.kind
    if kind is GameKind.RESET:
        return []
    rows = db.rows("game_results", "SELECT * FROM game_results WHERE match_id = ? ORDER BY game, rotation,"
                   " participant", (match_id,), match_id)

    def convert() -> list[GameResult]:
        grouped: dict[tuple[int, int], list[Any]] = {}
        for r in rows:
            grouped.setdefault((int(r["game"]), int(r["rotation"])), []).append(r)
        return [GameResult(
            game=game, rotation=rotation, kind=kind, hands_played=int(group[0]["hands_played"]),
            end=EndReason[group[0]["end_reason"]], places=tuple(r["place"] for r in group),
            hands=tuple(int(r["hands"]) for r in group), bought_in=tuple(int(r["bought_in"]) for r in group),
            final_stacks=tuple(int(r["final_stack"]) for r in group), eliminated=tuple(r["eliminated"] for r in group),
        ) for (game, rotation), group in grouped.items()]

    results: list[GameResult] = decode("a game's result", "game_results", match_id, convert)
    return results


def joined(db: Database, match_id: str) -> dict[int, list[Introduction]]:
    """What each participant's bot said of itself when it joined, by participant (those that never joined are
    missing)."""
    rows = db.rows("joins", "SELECT participant, bot_name, bot_version, language FROM joins WHERE match_id = ?"
                   " ORDER BY participant, rowid", (match_id,), match_id)

    def convert() -> dict[int, list[Introduction]]:
        out: dict[int, list[Introduction]] = {}
        for r in rows:
            out.setdefault(int(r["participant"]), []).append(
                Introduction(str(r["bot_name"]), str(r["bot_version"]), str(r["language"])))
        return out

    found: dict[int, list[Introduction]] = decode("a join", "joins", match_id, convert)
    return found


# ---------------------------------------------------------------------------------------------- hands


class ChainPlace(NamedTuple):
    """Where a stored hand sits in its match's hash chain (arena.records.evidence): all None before schema 5."""

    position: int | None
    digests: str | None
    link: str | None


HANDS_READ_AT_ONCE = 500  # hand numbers per query when some hands of a match are read (SQLite allows 32,766)


def hand_rows(db: Database, match_id: str, numbers: Collection[int] | None = None,
              ) -> Iterator[tuple[HandRows, ChainPlace]]:
    """Every stored hand of a match (or those of ``numbers``) as its rows, by hand number, each with its place in
    the hash chain; read in four queries, however long the match (two a hand for a few ``numbers``, four for each
    ``HANDS_READ_AT_ONCE`` of many: the scoring worker reads a long match's sessions without reading the rest)."""
    wanted = None if numbers is None else sorted(set(numbers))
    if wanted is None:
        yield from _merged(db, match_id, "", ())
    elif len(wanted) < 64:  # a few hands: two queries each
        for number in wanted:
            hand = db.row("hands", _HAND_SQL + " AND hand_number = ?", (match_id, number), match_id)
            if hand is not None:
                yield _rows(db, match_id, hand, number), _place(hand)
    else:
        for start in range(0, len(wanted), HANDS_READ_AT_ONCE):
            chunk = wanted[start:start + HANDS_READ_AT_ONCE]
            yield from _merged(db, match_id, f" AND hand_number IN ({', '.join('?' * len(chunk))})", chunk)


_HAND_SQL = f"SELECT {', '.join(HAND_COLUMNS)}, chain_index, digests, chain FROM hands WHERE match_id = ?"


def _merged(db: Database, match_id: str, where: str, params: Sequence[int],
            ) -> Iterator[tuple[HandRows, ChainPlace]]:
    """The hands a ``where`` clause picks, with their seats, actions and violations, in four streamed queries."""
    hands = db.stream("hands", _HAND_SQL + where + " ORDER BY hand_number", (match_id, *params), match_id)
    seats = db.stream("hand_seats", f"SELECT hand_number, {', '.join(SEAT_COLUMNS)} FROM hand_seats"
                      f" WHERE match_id = ?{where} ORDER BY hand_number, seat", (match_id, *params), match_id)
    actions = db.stream("actions", f"SELECT hand_number, {', '.join(ACTION_COLUMNS)} FROM actions"
                        f" WHERE match_id = ?{where} ORDER BY hand_number, seq", (match_id, *params), match_id)
    violations = db.stream("violations", f"SELECT hand_number, {', '.join(VIOLATION_COLUMNS)} FROM violations"
                           f" WHERE match_id = ?{where} ORDER BY hand_number, rowid", (match_id, *params), match_id)
    streams = [_numbered(table, stream, match_id) for table, stream in
               (("hand_seats", seats), ("actions", actions), ("violations", violations))]
    pending = [next(stream, None) for stream in streams]
    for hand in _numbered("hands", hands, match_id):
        number = hand["hand_number"]
        parts: list[list[tuple[object, ...]]] = [[], [], []]
        for i, stream in enumerate(streams):
            while (row := pending[i]) is not None and row[0] <= number:
                if row[0] == number:
                    parts[i].append(tuple(row)[1:])
                pending[i] = next(stream, None)
        yield HandRows(tuple(hand)[:len(HAND_COLUMNS)], *(tuple(p) for p in parts)), _place(hand)


def _numbered(table: str, rows: Iterator[Any], match_id: str) -> Iterator[Any]:
    """The rows of a hand's table, each with a hand number that is a number (an edit may have made it text)."""
    for row in rows:
        if not isinstance(row["hand_number"], int):
            raise RecordsDamaged(f"a row's hand number is {row['hand_number']!r}", table=table, match_id=match_id)
        yield row


def _place(hand: Any) -> ChainPlace:
    index, digests, link = hand["chain_index"], hand["digests"], hand["chain"]
    return ChainPlace(None if index is None else decode("the chain index", "hands", None, lambda: int(index)),
                      None if digests is None else str(digests), None if link is None else str(link))


def _rows(db: Database, match_id: str, hand: Any, number: int) -> HandRows:
    where = " WHERE match_id = ? AND hand_number = ?"
    seats = db.rows("hand_seats", f"SELECT {', '.join(SEAT_COLUMNS)} FROM hand_seats" + where + " ORDER BY seat",
                    (match_id, number), match_id)
    actions = db.rows("actions", f"SELECT {', '.join(ACTION_COLUMNS)} FROM actions" + where + " ORDER BY seq",
                      (match_id, number), match_id)
    violations = db.rows("violations", f"SELECT {', '.join(VIOLATION_COLUMNS)} FROM violations" + where
                         + " ORDER BY rowid", (match_id, number), match_id)
    return HandRows(tuple(hand)[:len(HAND_COLUMNS)], tuple(tuple(r) for r in seats),
                    tuple(tuple(r) for r in actions), tuple(tuple(r) for r in violations))


def hand_records(db: Database, match_id: str, numbers: Collection[int] | None = None) -> Iterator[HandRecord]:
    """Every stored hand of a match (or those of ``numbers``) as a HandRecord, by hand number (for exports,
    verification, statistics and the site's pages)."""
    info = require(db, match_id)
    names = [c.name for c in participants(db, match_id)]
    configs: dict[str, TableConfig] = {}  # a freezeout's hands share a few tables (its blind levels)
    cards = card_parser()
    for rows, _ in hand_rows(db, match_id, numbers):
        yield hand_record(match_id, rows, info.config, configs, names, cards)


def _seated(value: object, count: int) -> int:
    """A participant as recorded in a row: one of the match's ``count`` (``ValueError`` otherwise)."""
    if not isinstance(value, int) or not 0 <= value < count:
        raise ValueError(f"participant {value!r} is not one of the match's {count}")
    return value


def hand_results(db: Database, match_id: str) -> list[HandResult]:
    """Every recorded hand of a match in brief, by hand number (for sessions, listings and pages)."""
    count = len(participants(db, match_id))
    rows = db.rows("hand_seats", "SELECT h.hand_number, h.deal, h.rotation, h.board, s.participant, s.payoff FROM"
                   " hands h JOIN hand_seats s USING (match_id, hand_number) WHERE h.match_id = ?"
                   " ORDER BY h.hand_number, s.seat", (match_id,), match_id)

    def convert() -> list[HandResult]:
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
            seating.append(_seated(r["participant"], count))
            payoffs.append(int(r["payoff"]))
        if current is not None:
            out.append(HandResult(*current[:3], tuple(seating), tuple(payoffs), current[3]))
        return out

    results: list[HandResult] = decode("a hand's seats", "hand_seats", match_id, convert)
    return results


def player_events(db: Database, match_id: str) -> list[PlayerEvent]:
    """Every event a player made in a match's recorded hands (for play statistics)."""
    rows = db.rows("actions", "SELECT a.hand_number, s.participant, a.street, a.kind, a.how, a.elapsed_ms FROM"
                   " actions a JOIN hand_seats s USING (match_id, hand_number, seat) WHERE a.match_id = ? AND"
                   " a.seat >= 0 ORDER BY a.hand_number, a.seq", (match_id,), match_id)
    count = len(participants(db, match_id))
    events: list[PlayerEvent] = decode("an action", "actions", match_id, lambda: [
        PlayerEvent(int(r["hand_number"]), _seated(r["participant"], count), int(r["street"]), EventKind[r["kind"]],
                    None if r["how"] is None else DecisionHow(r["how"]), float(r["elapsed_ms"] or 0.0))
        for r in rows])
    return events


def runouts(db: Database, match_id: str) -> list[int]:
    """The hands of a match that went to a showdown with board cards dealt after the last action (an all-in
    before the river), by hand number."""
    rows = db.rows("actions", "SELECT hand_number FROM actions WHERE match_id = ? GROUP BY hand_number"
                   " HAVING SUM(kind IN ('SHOW', 'MUCK')) > 0 AND MAX(CASE WHEN kind = 'DEAL_BOARD' THEN seq END) >"
                   " COALESCE(MAX(CASE WHEN kind IN ('FOLD', 'CHECK', 'CALL', 'BET', 'RAISE') THEN seq END), -1)"
                   " ORDER BY hand_number", (match_id,), match_id)
    numbers: list[int] = decode("a hand's number", "actions", match_id, lambda: [int(r["hand_number"]) for r in rows])
    return numbers


def violation_counts(db: Database, match_id: str) -> dict[int, int]:
    """Violations recorded per participant of a match."""
    rows = db.rows("violations", "SELECT participant, COUNT(*) AS n FROM violations WHERE match_id = ?"
                   " GROUP BY participant", (match_id,), match_id)
    count = len(participants(db, match_id))
    counts: dict[int, int] = decode("a violation", "violations", match_id, lambda: {
        _seated(r["participant"], count): int(r["n"]) for r in rows})
    return counts


def hands_per_participant(db: Database, match_id: str) -> dict[int, int]:
    """How many recorded hands each participant of a match was dealt into."""
    rows = db.rows("hand_seats", "SELECT participant, COUNT(*) AS n FROM hand_seats WHERE match_id = ?"
                   " GROUP BY participant", (match_id,), match_id)
    count = len(participants(db, match_id))
    counts: dict[int, int] = decode("a seat", "hand_seats", match_id, lambda: {
        _seated(r["participant"], count): int(r["n"]) for r in rows})
    return counts


def net_chips(db: Database, match_id: str) -> list[int]:
    """Each participant's chips won over the recorded hands of a match."""
    count = len(participants(db, match_id))
    rows = db.rows("hand_seats", "SELECT participant, SUM(payoff) AS s FROM hand_seats WHERE match_id = ?"
                   " GROUP BY participant", (match_id,), match_id)

    def convert() -> list[int]:
        net = [0] * count
        for r in rows:
            net[_seated(r["participant"], count)] = int(r["s"])
        return net

    net: list[int] = decode("a seat's payoff", "hand_seats", match_id, convert)
    return net


# ---------------------------------------------------------------------------------------------- bots and events


def bot_outcomes(db: Database, ids: Collection[str]) -> list[BotMatchOutcome]:
    """How each match went for each of its bots (recorded when the match ended; empty before)."""
    out: list[BotMatchOutcome] = []
    for match_id in ids:
        rows = db.rows("match_bots", "SELECT b.name, b.version, m.outcome, m.detail FROM match_bots m JOIN bots b"
                       " ON b.id = m.bot_id WHERE m.match_id = ? AND m.outcome != '' ORDER BY m.participant",
                       (match_id,), match_id)
        for r in rows:
            outcome: BotOutcome = decode("a bot's outcome", "match_bots", match_id, partial(BotOutcome, r["outcome"]))
            out.append(BotMatchOutcome(match_id, str(r["name"]), str(r["version"]), outcome, str(r["detail"])))
    return out


def bot_infos(db: Database) -> list[BotInfo]:
    """Every bot version recorded, by name and version."""
    rows = db.rows("bots", "SELECT name, version, language, command FROM bots ORDER BY name, version")
    return [BotInfo(str(r["name"]), str(r["version"]), str(r["language"]), str(r["command"])) for r in rows]


def owners(db: Database) -> dict[str, str]:
    """The owner of each registered (league) bot, by name."""
    rows = db.rows("registered_bots", "SELECT name, owner FROM registered_bots")
    return {str(r["name"]): str(r["owner"]) for r in rows}


def event_match_ids(db: Database, event: str) -> list[str]:
    """The matches of a tournament, comparison or league (whatever their kind), oldest first."""
    return _ids(db.rows("matches", "SELECT id FROM matches WHERE tournament = ? ORDER BY created_at, id", (event,)))


def event_names(db: Database) -> list[str]:
    """Every tournament, comparison and league recorded, by name."""
    rows = db.rows("matches", "SELECT DISTINCT tournament FROM matches WHERE tournament IS NOT NULL"
                   " ORDER BY tournament")
    return [str(r["tournament"]) for r in rows]


def event_taken(db: Database, name: str) -> bool:
    """Whether a tournament or comparison of this name (or matches named after it) is recorded already."""
    return db.row("matches", "SELECT 1 FROM matches WHERE id LIKE ? OR tournament = ?",
                  (f"{name}-%", name)) is not None


def matches_of(db: Database, event: str, kind: MatchKind) -> list[str]:
    """The match ids of a tournament, comparison or league, by id."""
    return _ids(db.rows("matches", "SELECT id FROM matches WHERE tournament = ? AND kind = ? ORDER BY id",
                        (event, kind)))


def finished_matches_of(db: Database, event: str, kind: MatchKind) -> list[str]:
    """The match ids of an event that are over for good, in the order they ended (a league's online ratings
    are replayed in this order, the order they were updated in as the matches ended)."""
    rows = db.rows("matches", "SELECT id, status FROM matches WHERE tournament = ? AND kind = ? AND finished_at IS"
                   " NOT NULL ORDER BY finished_at, id", (event, kind))
    statuses: list[tuple[str, MatchStatus]] = decode("a match's status", "matches", None, lambda: list(zip(
        _ids(rows), [MatchStatus(r["status"]) for r in rows], strict=True)))
    return [match_id for match_id, status in statuses if status.over]


def bots_played(db: Database, event: str, kind: MatchKind, since: float = 0.0) -> dict[str, tuple[int, float]]:
    """Per bot name of an event's finished matches (those that ended at ``since`` or later): how many it played,
    and when its last one ended."""
    rows = db.rows("matches", "SELECT b.name AS name, COUNT(*) AS n, MAX(m.finished_at) AS last FROM matches m"
                   " JOIN match_bots mb ON mb.match_id = m.id JOIN bots b ON b.id = mb.bot_id WHERE m.tournament = ?"
                   " AND m.kind = ? AND m.finished_at >= ? GROUP BY b.name", (event, kind, since))
    played: dict[str, tuple[int, float]] = decode("a bot's matches", "matches", None, lambda: {
        str(r["name"]): (int(r["n"]), stamp(r["last"])) for r in rows})
    return played


def published_seed(db: Database, key: str) -> str | None:
    """A seed of an event published once all its matches were over (a tournament's)."""
    row = db.row("meta", "SELECT value FROM meta WHERE key = ?", (f"seed:{key}",))
    return str(row["value"]) if row else None
