"""A match's lifecycle in the records: open it (or resume it, verified), record each hand, finish it.

``Ledger(db).open(spec, participants, kind, event)`` records a match before its first hand, with its commitment
(arena.records.evidence), and returns a ``LedgerEntry``: a ``HandSink`` that writes each finished hand in one
transaction, chained to the hand written before it, and knows what was played (``played``, and for a cash game or
a freezeout each hand's final stacks, ``history``); ``finish(result)`` stores how the match ended and its final
hash. ``Ledger(None)`` keeps nothing but still gives the commitment and the final hash (a match played without
``--db``).

A resume (``open(..., resume=True)``, and ``entry.reopen()`` before the executor plays a lost match on) verifies
before it plays: the seed against the commitment, the schedule and participants asked for and recorded against the
commitment, every recorded hand against the chain, and that no hand is missing in the middle. Whatever differs is
refused: ``RecordsDamaged`` when the record was changed, ``LedgerError`` when the request differs from the record.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, replace
from pathlib import Path

from arena.deals import commitment as seed_commitment
from arena.engine.units import mbb_per_hand
from arena.records.audit import (
    ChainAudit,
    chain_entries,
    check_commitment,
    check_final,
    check_schedule,
    holes,
    stored_games,
    stored_outcomes,
    walk_chain,
)
from arena.records.codec import config_to_json, decode, game_json, hand_rows
from arena.records.db import Database
from arena.records.errors import LedgerError, RecordsDamaged
from arena.records.evidence import (
    COMMITMENT_VERSION,
    canonical,
    chain_link,
    commitment_document,
    commitment_of,
    final_hash,
    part_digests,
)
from arena.records.queries import Contestant, MatchInfo, match_info, participants, published_seed
from arena.referee import HandRecord, MatchKind, MatchResult, MatchSpec, MatchStatus, ParticipantResult
from arena.referee.status import DecisionHow
from arena.runner.ledger import Entrant


class LedgerEntry:
    """One match, open in the ledger: record its hands (the HandSink interface), then ``finish`` it."""

    def __init__(self, db: Database | None, spec: MatchSpec, contestants: Sequence[Contestant], commitment: str,
                 version: int = COMMITMENT_VERSION) -> None:
        self.db = db
        self.spec = spec
        self.contestants = list(contestants)
        self.commitment = commitment
        self.commitment_version = version
        self.played: frozenset[int] = frozenset()  # hands recorded before this run
        self.history: dict[int, tuple[int, ...]] | None = {} if spec.game.is_game else None
        self.final_hash: str | None = None
        self.written = 0  # hands written by this entry
        self._links = 0  # the chain's length
        self._tail: str | None = None  # its last link
        self._earlier: list[ParticipantResult] = []
        self._config = config_to_json(spec.config)

    @property
    def match_id(self) -> str:
        return self.spec.match_id

    @property
    def last_link(self) -> str | None:
        """The last link of the match's hash chain (None before its first hand)."""
        return self._tail

    @property
    def chained(self) -> bool:
        """Whether this match's hands are hash-chained: every match recorded since schema 5 (a match recorded
        nowhere has a commitment, but no record to chain or seal)."""
        return self.db is not None and self.commitment_version >= COMMITMENT_VERSION

    @property
    def durable(self) -> bool:
        """Whether its hands are stored (in a database): a match recorded nowhere keeps only its commitment."""
        return self.db is not None

    @property
    def commits(self) -> bool:
        """Whether recording a hand commits a transaction (a match recorded in a database): then several hands
        stored in one (``hands_finished``) cost less than one each; recorded nowhere, they cost nothing either way."""
        return self.db is not None

    # ------------------------------------------------------------------ recording

    def hand_finished(self, record: HandRecord) -> None:
        """Store one finished hand in one transaction, chained to the hand written before it."""
        self.hands_finished((record,))

    def hands_finished(self, records: Sequence[HandRecord]) -> None:
        """Store finished hands, in order, in one transaction (the hands of every table that finished one in the same
        turn of the referee's loop: a commit writes each page it touched once, where a transaction per hand wrote the
        same pages again for each), each chained to the hand written before it: the same rows and links as storing
        them one at a time. Nothing of them is stored if the transaction fails."""
        if self.db is not None:
            self._write(self.db, records)
        self.written += len(records)
        if self.history is not None:
            for record in records:
                self.history[record.hand_number] = tuple(record.final_stacks)

    def _write(self, db: Database, records: Sequence[HandRecord]) -> None:
        hands, seats, actions, violations = [], [], [], []
        links, tail = self._links, self._tail
        for record in records:
            own = None if record.config == self.spec.config else config_to_json(record.config)
            rows = hand_rows(record, own)
            index = link = digests = None
            if self.chained:
                parts = part_digests(rows)
                index, digests = links + 1, ".".join(parts)
                link = chain_link(tail or self.commitment, record.hand_number, parts)
                links, tail = links + 1, link
            hands.append((self.match_id, *rows.hand, index, digests, link))
            seats += [(self.match_id, rows.number, *s) for s in rows.seats]
            actions += [(self.match_id, rows.number, *a) for a in rows.actions]
            violations += [(self.match_id, rows.number, *v) for v in rows.violations]
        with db.transaction():
            db.write("hands", "INSERT INTO hands(match_id, hand_number, deal, rotation, table_id, button, deck, board,"
                     " started_at, finished_at, config, chain_index, digests, chain) VALUES"
                     " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", hands, many=True)
            db.write("hand_seats", "INSERT INTO hand_seats(match_id, hand_number, seat, participant, hole,"
                     " starting_stack, payoff, final_stack) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", seats, many=True)
            db.write("actions", "INSERT INTO actions(match_id, hand_number, seq, street, seat, kind, amount, cards,"
                     " all_in, pot, how, elapsed_ms, request_id, rejected, policy, comment) VALUES"
                     " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", actions, many=True)
            db.write("violations", "INSERT INTO violations(match_id, hand_number, participant, kind, detail)"
                     " VALUES (?, ?, ?, ?, ?)", violations, many=True)
        self._links, self._tail = links, tail

    def finish(self, result: MatchResult) -> MatchResult:
        """Record how the match ended (each bot's outcome, what each said of itself when it joined, a game's places)
        and its final hash; once it is over for good its seed is published. Returns the whole match's result (the
        part played before a resume added in) with the match's commitment."""
        result = replace(result.after(self._earlier, self.spec.config.big_blind), commitment=self.commitment)
        status = MatchStatus(result.reason)
        outcomes = [(i, r.outcome.value, r.failure or "") for i, r in enumerate(result.results)]
        games = [(g.game, g.rotation, p, g.places[p], g.hands[p], g.bought_in[p], g.final_stacks[p], g.eliminated[p],
                  g.hands_played, g.end.name) for g in result.games for p in range(len(g.hands))]
        hands = len(self.played) + self.written
        self.final_hash = (final_hash(self.commitment, self._tail, hands, status.value, outcomes, games)
                           if self.chained else None)
        if self.db is None:
            return result
        db = self.db
        with db.transaction():
            db.write("matches", "UPDATE matches SET status = ?, finished_at = ?, final_hash = ? WHERE id = ?",
                     (status.value, time.time(), self.final_hash or "", self.match_id))
            for participant, r in enumerate(result.results):
                for introduction in r.joined:
                    db.write("joins", "INSERT OR IGNORE INTO joins(match_id, participant, bot_name, bot_version,"
                             " language) VALUES (?, ?, ?, ?, ?)", (self.match_id, participant, introduction.bot_name,
                                                                   introduction.bot_version, introduction.language))
                    if introduction.language:  # the bot's language fills its row where it is unknown
                        db.write("bots", "UPDATE bots SET language = ? WHERE language = '' AND id = (SELECT bot_id"
                                 " FROM match_bots WHERE match_id = ? AND participant = ?)",
                                 (introduction.language, self.match_id, participant))
            if status.over:
                db.write("matches", "UPDATE matches SET seed = ? WHERE id = ?", (self.spec.seed, self.match_id))
            db.write("match_bots", "UPDATE match_bots SET outcome = ?, detail = ? WHERE match_id = ? AND"
                     " participant = ?", [(o, d, self.match_id, i) for i, o, d in outcomes], many=True)
            if games:
                db.write("game_results", "DELETE FROM game_results WHERE match_id = ?", (self.match_id,))
                db.write("game_results", "INSERT INTO game_results(match_id, game, rotation, participant, place,"
                         " hands, bought_in, final_stack, eliminated, hands_played, end_reason) VALUES"
                         " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [(self.match_id, *g) for g in games], many=True)
        if status.over:
            db.vault.pop(self.match_id)
        return result

    # ------------------------------------------------------------------ resuming

    def reopen(self) -> None:
        """Verify what is recorded of the match and take it as played (a resume, or the executor playing a match
        on after its worker died): the seed against the commitment, every hand against the chain, no hand missing
        in the middle. ``RecordsDamaged`` names the first thing that differs."""
        if self.db is None:
            return
        info = _info(self.db, self.match_id)
        problems = check_commitment(info, self.contestants, self.spec.seed, "the seed to resume with")
        entries, stacks = chain_entries(self.db, self.match_id)
        audit = walk_chain(self.commitment, entries) if self.chained else ChainAudit()
        problems += audit.problems
        if self.chained and audit.unchained:
            problems.append(f"hand {audit.unchained[0]}: has no place in the hash chain (it was not written by the "
                            "referee)")
        played = {number for _, number, *_ in entries}
        problems += holes(self.spec, len(self.contestants), played, info.tables, stacks)
        if self.chained and info.final_hash:  # cut short on purpose (aborted): its end was sealed
            problems += check_final(info, audit, len(played), stored_outcomes(self.db, self.match_id),
                                    stored_games(self.db, self.match_id))[1]
        if problems:
            more = f" (and {len(problems) - 1} more: arena verify names them)" if len(problems) > 1 else ""
            raise RecordsDamaged(f"{problems[0]}; not resumed{more}", match_id=self.match_id)
        self.played = frozenset(played)
        self.history = {n: stacks[n] for n in played} if self.spec.game.is_game else None
        self._links, self._tail = audit.links, audit.tail
        self.written = 0
        self._earlier = _totals(self.db, self.match_id, self.contestants, self.spec.config.big_blind)
        with self.db.transaction():
            self.db.write("matches", "UPDATE matches SET status = ?, final_hash = '', tables = ? WHERE id = ?",
                          (MatchStatus.RUNNING.value, self.spec.tables, self.match_id))


class Ledger:
    """Where matches are recorded (``db``; None: nowhere, though commitments and final hashes are still made)."""

    def __init__(self, db: Database | None) -> None:
        self.db = db

    @property
    def hidden(self) -> tuple[Path, ...]:
        """The files no bot may see: the database and the seed vault."""
        return () if self.db is None else (self.db.path, *self.db.vault.files)

    def open(self, spec: MatchSpec, entrants: Sequence[Entrant], kind: MatchKind = MatchKind.MATCH,
             event: str | None = None, resume: bool = False) -> LedgerEntry:
        """Record a match before its first hand and return its entry; with ``resume``, take up a match recorded
        already (verified first: see the module's documentation). A match recorded already is refused otherwise."""
        contestants = [Contestant(e.name, e.version) for e in entrants]
        document = commitment_document(spec.match_id, MatchKind(kind).value, event, seed_commitment(spec.seed),
                                       spec.hands_planned(len(contestants)), spec.seats, config_to_json(spec.config),
                                       spec.starting_stack, spec.duplicate, spec.all_orders, game_json(spec),
                                       [(c.name, c.version) for c in contestants])
        commitment = commitment_of(document)
        if self.db is None:
            return LedgerEntry(None, spec, contestants, commitment)
        info = match_info(self.db, spec.match_id)
        if info is not None:
            if not resume:
                raise LedgerError(f"match {spec.match_id} is already in {self.db.path}: use --resume to finish it")
            return self._resume(info, spec, contestants)
        if resume:
            raise LedgerError(f"no match {spec.match_id} in {self.db.path} to resume")
        db = self.db
        db.vault.put(spec.match_id, spec.seed)  # secret until the match is over
        with db.transaction():
            db.write("matches", "INSERT INTO matches(id, kind, tournament, created_at, status, seed, commitment,"
                     " config, starting_stack, hands_total, duplicate, all_orders, policy, seats, game,"
                     " commitment_version, committed, final_hash, tables) VALUES"
                     " (?, ?, ?, ?, ?, '', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', ?)",
                     (spec.match_id, MatchKind(kind).value, event, time.time(), MatchStatus.RUNNING.value, commitment,
                      config_to_json(spec.config), spec.starting_stack, spec.hands_planned(len(contestants)),
                      int(spec.duplicate), int(spec.all_orders), json.dumps(asdict(spec.policy)), spec.seats,
                      game_json(spec), COMMITMENT_VERSION, canonical(document).decode(), spec.tables))
            for participant, entrant in enumerate(entrants):
                db.write("match_bots", "INSERT INTO match_bots(match_id, participant, bot_id) VALUES (?, ?, ?)",
                         (spec.match_id, participant, _bot_id(db, entrant)))
        return LedgerEntry(db, spec, contestants, commitment)

    def _resume(self, info: MatchInfo, spec: MatchSpec, contestants: list[Contestant]) -> LedgerEntry:
        assert self.db is not None
        if info.status.over:
            raise LedgerError(f"match {info.match_id} in {self.db.path} is over ({info.status.value}): nothing to "
                              "resume")
        if info.seed:
            raise RecordsDamaged(f"its status is {info.status.value} but its seed was published, as only a match "
                                 "over for good has: the status was changed", table="matches", match_id=info.match_id)
        recorded = participants(self.db, info.match_id)
        seed = self.db.vault_seed(info.match_id)
        damage = check_commitment(info, recorded, seed, f"the seed in {self.db.vault.path}")
        if damage:
            raise RecordsDamaged(f"{damage[0]}; not resumed", match_id=info.match_id)
        asked = check_schedule(info, recorded, spec, contestants)
        if asked:
            raise LedgerError(f"match {info.match_id} cannot be resumed as asked: {'; '.join(asked)}")
        entry = LedgerEntry(self.db, spec, recorded, info.commitment, info.commitment_version)
        entry.reopen()
        return entry

    def check(self, spec: MatchSpec, entrants: Sequence[Entrant]) -> None:
        """Whether a recorded match (if it is) is the one asked for: its record first against its commitment
        (``RecordsDamaged``), then its seed, schedule and participants against the request (``LedgerError`` naming
        what differs: a tournament file changed since the tournament began)."""
        info = None if self.db is None else match_info(self.db, spec.match_id)
        if self.db is None or info is None:
            return
        recorded = participants(self.db, spec.match_id)
        damage = check_commitment(info, recorded, info.seed or self.db.vault_seed(spec.match_id))
        if damage:
            raise RecordsDamaged(damage[0], match_id=spec.match_id)
        asked = check_schedule(info, recorded, spec, [Contestant(e.name, e.version) for e in entrants])
        if asked:
            raise LedgerError(f"match {spec.match_id} in {self.db.path}: {'; '.join(asked)}")

    def status(self, match_id: str) -> MatchStatus | None:
        """How a match stands, if it is recorded."""
        info = None if self.db is None else match_info(self.db, match_id)
        return None if info is None else info.status

    # ------------------------------------------------------------------ an event's seed

    def seed(self, key: str) -> str | None:
        """A seed kept under ``key`` (a tournament's): in the vault until published, then in the database."""
        if self.db is None:
            return None
        return self.db.vault_seed(key) or published_seed(self.db, key)

    def keep_seed(self, key: str, seed: str) -> None:
        """Keep a seed secret in the vault under ``key`` until ``publish_seed``."""
        if self.db is not None:
            self.db.vault.put(key, seed)

    def publish_seed(self, key: str) -> str | None:
        """Move a seed kept in the vault under ``key`` into the database, where it is published."""
        if self.db is None:
            return None
        seed = self.db.vault_seed(key)
        if seed is not None:
            with self.db.transaction():
                self.db.write("meta", "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (f"seed:{key}", seed))
            self.db.vault.pop(key)
        return seed

    def interrupt_running(self, event: str, kind: MatchKind) -> list[str]:
        """End every match of an event still marked running (its referee died) as ``interrupted``: the hands it
        finished stand (verified against the chain and the commitment first), nothing more is dealt, and its seed is
        published so that they can be verified."""
        if self.db is None:
            return []
        db = self.db
        rows = db.rows("matches", "SELECT id FROM matches WHERE tournament = ? AND kind = ? AND status = ?",
                       (event, kind.value, MatchStatus.RUNNING.value))
        ids = [str(r["id"]) for r in rows]
        for match_id in ids:
            info = _info(db, match_id)
            seed = db.vault_seed(match_id) or ""
            entry = LedgerEntry(db, info.spec(seed), participants(db, match_id), info.commitment,
                                info.commitment_version)
            entry.reopen()
            status = MatchStatus.INTERRUPTED
            final = final_hash(info.commitment, entry.last_link, len(entry.played), status.value,
                               stored_outcomes(db, match_id), stored_games(db, match_id)) if entry.chained else ""
            with db.transaction():
                db.write("matches", "UPDATE matches SET status = ?, finished_at = ?, seed = ?, final_hash = ? WHERE"
                         " id = ?", (status.value, time.time(), seed, final, match_id))
            db.vault.pop(match_id)
        return ids


def _info(db: Database, match_id: str) -> MatchInfo:
    info = match_info(db, match_id)
    if info is None:
        raise RecordsDamaged("the match's row is gone", table="matches", match_id=match_id)
    return info


def _bot_id(db: Database, entrant: Entrant) -> int:
    """The id of a bot (name, version), created if new; its command is filled in when known."""
    db.write("bots", "INSERT OR IGNORE INTO bots(name, version, language, command) VALUES (?, ?, '', ?)",
             (entrant.name, entrant.version, entrant.command))
    if entrant.command:
        db.write("bots", "UPDATE bots SET command = ? WHERE name = ? AND version = ?",
                 (entrant.command, entrant.name, entrant.version))
    row = db.row("bots", "SELECT id FROM bots WHERE name = ? AND version = ?", (entrant.name, entrant.version))
    assert row is not None
    return int(row["id"])


def _totals(db: Database, match_id: str, contestants: Sequence[Contestant],
            big_blind: int) -> list[ParticipantResult]:
    """Each participant's figures over the hands recorded so far (what a resumed match adds to)."""
    totals: list[ParticipantResult] = decode("a participant's figures", "hand_seats", match_id,
                                             lambda: _sums(db, match_id, contestants, big_blind))
    return totals


def _sums(db: Database, match_id: str, contestants: Sequence[Contestant],
          big_blind: int) -> list[ParticipantResult]:
    seats = {int(r["participant"]): (int(r["hands"]), int(r["net"])) for r in db.rows(
        "hand_seats", "SELECT participant, COUNT(*) AS hands, COALESCE(SUM(payoff), 0) AS net FROM hand_seats"
        " WHERE match_id = ? GROUP BY participant", (match_id,), match_id)}
    how: dict[tuple[int, str], tuple[int, float]] = {}
    for r in db.rows("actions", "SELECT s.participant, a.how, COUNT(*) AS n, SUM(a.elapsed_ms) AS ms FROM actions a"
                     " JOIN hand_seats s USING (match_id, hand_number, seat) WHERE a.match_id = ? AND a.how IS NOT"
                     " NULL GROUP BY s.participant, a.how", (match_id,), match_id):
        how[int(r["participant"]), str(r["how"])] = (int(r["n"]), float(r["ms"] or 0.0))
    violations = {int(r["participant"]): int(r["n"]) for r in db.rows(
        "violations", "SELECT participant, COUNT(*) AS n FROM violations WHERE match_id = ? GROUP BY participant",
        (match_id,), match_id)}
    out = []
    for index, contestant in enumerate(contestants):
        asked = [v for (p, k), v in how.items() if p == index and k not in (DecisionHow.FORFEITED, DecisionHow.ABSENT)]
        decisions = sum(n for n, _ in asked)
        hands, net = seats.get(index, (0, 0))
        count: Mapping[str, int] = {k: n for (p, k), (n, _) in how.items() if p == index}
        out.append(ParticipantResult(
            name=contestant.name, version=contestant.version, net=net, hands=hands,
            mbb_per_hand=mbb_per_hand(net, big_blind, hands), decisions=decisions,
            mean_think_ms=sum(ms for _, ms in asked) / decisions if decisions else 0.0,
            violations=violations.get(index, 0), timeouts=count.get(DecisionHow.TIMEOUT, 0),
            illegal=count.get(DecisionHow.ILLEGAL, 0), absent=count.get(DecisionHow.ABSENT, 0),
            forfeited=DecisionHow.FORFEITED in count, notes=(),
        ))
    return out
