"""Scoring finished sessions off the referee's event loop: all-in EV and AIVAT (1-3 ms a hand) worked out in one
worker process while the match goes on, so the referee's loop never pays for them and the result waits only for the
sessions still in the worker when the last hand ends.

The worker is fed batches of finished sessions (``BATCH_HANDS`` hands or more at a time): with a database, only
their hand numbers (the worker reads the hands back from the file, which holds every hand before the tally hears
of it); without one, the hands themselves, packed into plain tuples (``pack``: cheaper to send than the records).
It computes ``arena.ratings.session_scoring.session_changes``, the same function the tally runs in-process, so the
figures are the same to the last bit. Should the worker die or fail, the batches it did not return are scored in
this process instead (from the database, or from the packed hands they were sent with), and said so in the log.
"""

from __future__ import annotations

import logging
import multiprocessing
import signal
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.engine import Action, ActionKind, Event, EventKind
from arena.engine.config import TableConfig
from arena.ratings.session_scoring import Changes, SessionJob, session_changes
from arena.records.db import Database
from arena.referee import DecisionRecord, HandRecord

log = logging.getLogger("arena.ratings.scoring")

BATCH_HANDS = 256  # hands sent to the worker at once: a fraction of a second of its work, little overhead per hand
BACKLOG_HANDS = 20_000  # hands sent but not scored back past which the tally waits for the worker (memory bound)

Packed = tuple[Any, ...]  # a hand as plain tuples (``pack``)


# ---------------------------------------------------------------------------------------------- hands as tuples


def pack(record: HandRecord, config: int) -> Packed:
    """What scoring needs of a hand, as tuples of numbers (``config``: its table's index in the batch's list)."""
    events = tuple((e.kind.value, e.seat, e.street, e.amount, e.cards, e.all_in, e.pot) for e in record.events)
    decisions = tuple((d.seat, d.participant, d.action.kind.value, d.action.amount, d.event_index,
                       tuple((a.kind.value, a.amount, p) for a, p in d.policy)) for d in record.decisions)
    return (record.hand_number, record.deal, record.rotation, record.seating, record.button, config,
            record.starting_stacks, record.deck, record.hole, record.board, events, record.payoffs,
            record.final_stacks, decisions)


def unpack(packed: Packed, configs: Sequence[TableConfig], match_id: str = "") -> HandRecord:
    """A packed hand as a HandRecord (without what scoring does not read: names, times, how each action came)."""
    (number, deal, rotation, seating, button, config, stacks, deck, hole, board, events, payoffs, final,
     decisions) = packed
    return HandRecord(
        match_id=match_id, table_id="", hand_id=f"{match_id}-{number}", hand_number=number, deal=deal,
        rotation=rotation, seating=seating, button=button, config=configs[config], starting_stacks=stacks, deck=deck,
        hole=hole, board=board,
        events=tuple(Event(EventKind(k), seat, street, amount, cards, all_in, pot)
                     for k, seat, street, amount, cards, all_in, pot in events),
        payoffs=payoffs, final_stacks=final,
        decisions=[DecisionRecord(seat=seat, participant=participant, request_id=0,
                                  action=Action(ActionKind(kind), amount), elapsed_ms=0.0, how="ok",
                                  event_index=index,
                                  policy=tuple((Action(ActionKind(k), a), p) for k, a, p in policy))
                   for seat, participant, kind, amount, index, policy in decisions],
    )


# ---------------------------------------------------------------------------------------------- in the worker


@dataclass(frozen=True, slots=True)
class Batch:
    """Sessions to score, with where their hands are: ``db_path`` and ``match_id`` (read back), else ``hands``
    (packed, ``configs`` their tables)."""

    jobs: tuple[SessionJob, ...]
    big_blind: int
    cross_table: bool
    db_path: str = ""
    match_id: str = ""
    hands: tuple[Packed, ...] = ()
    configs: tuple[TableConfig, ...] = ()

    @property
    def hand_count(self) -> int:
        return sum(len(job.numbers) for job in self.jobs)


_DATABASES: dict[str, Database] = {}  # in the worker: the match's database, opened once


def score_batch(batch: Batch) -> list[Changes]:
    """Each session's changes (arena.ratings.session_scoring), in the batch's order; runs in the worker."""
    if batch.db_path:
        db = _DATABASES.get(batch.db_path)
        if db is None:
            db = _DATABASES[batch.db_path] = Database(batch.db_path, read_only=True)
        numbers = [n for job in batch.jobs for n in job.numbers]
        records = {r.hand_number: r for r in db.hand_records(batch.match_id, numbers)}
    else:
        records = {r.hand_number: r for r in (unpack(h, batch.configs, batch.match_id) for h in batch.hands)}
    missing = [n for job in batch.jobs for n in job.numbers if n not in records]
    if missing:
        raise LookupError(f"hands {missing[:5]} of match {batch.match_id!r} are not in {batch.db_path or 'the batch'}")
    return [session_changes([records[n] for n in job.numbers], job, batch.big_blind, batch.cross_table)
            for job in batch.jobs]


def _ignore_interrupts() -> None:
    """The worker leaves Ctrl-C to the referee, which says what to do (stops, and closes the worker)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


# ---------------------------------------------------------------------------------------------- in the referee


class ScoringWorker:
    """Sessions of one match scored in a worker process as they finish (the ``Scorer`` of a SessionTally): give
    ``db_path`` and ``match_id`` when a database records the match (only hand numbers go to the worker), else the
    hands themselves go, packed."""

    needs_records = True  # the tally hands over each finished session's records

    def __init__(self, big_blind: int, cross_table: bool, db_path: str | Path | None = None, match_id: str = "",
                 batch_hands: int = BATCH_HANDS, backlog_hands: int = BACKLOG_HANDS) -> None:
        self.big_blind = big_blind
        self.cross_table = cross_table
        self.db_path = str(Path(db_path).resolve()) if db_path is not None else ""
        self.match_id = match_id
        self.batch_hands = batch_hands
        self.backlog_hands = backlog_hands
        self._jobs: list[SessionJob] = []
        self._hands: list[Packed] = []
        self._configs: dict[TableConfig, int] = {}
        self._sent: deque[tuple[Batch, Future[list[Changes]] | None]] = deque()  # in order; None: score here
        self._sent_hands = 0
        self._pool: ProcessPoolExecutor | None = None
        self._broken = False

    @property
    def pending_hands(self) -> int:
        """Hands of finished sessions not scored back yet."""
        return self._sent_hands + sum(len(job.numbers) for job in self._jobs)

    def submit(self, job: SessionJob, records: Sequence[HandRecord]) -> None:
        """A finished session (its hands ``records``): scored with the next batch."""
        self._jobs.append(job)
        if not self.db_path:
            for record in records:
                config = self._configs.setdefault(record.config, len(self._configs))
                self._hands.append(pack(record, config))
        if sum(len(j.numbers) for j in self._jobs) >= self.batch_hands:
            self._send()

    def _send(self) -> None:
        if not self._jobs:
            return
        configs = tuple(self._configs)
        batch = Batch(tuple(self._jobs), self.big_blind, self.cross_table, self.db_path, self.match_id,
                      tuple(self._hands), configs)
        self._jobs, self._hands = [], []
        self._configs = {}
        future = None
        if not self._broken:
            try:
                if self._pool is None:
                    self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"),
                                                     initializer=_ignore_interrupts)
                future = self._pool.submit(score_batch, batch)
            except (OSError, RuntimeError) as exc:  # no worker to be had: score here
                self._give_up(exc)
        self._sent.append((batch, future))
        self._sent_hands += batch.hand_count

    def results(self, wait: bool = False) -> list[Changes]:
        """The scored sessions' changes, in the order they were submitted: those back from the worker so far, or,
        with ``wait``, every session submitted (the last batch is sent now, and waited for)."""
        if wait:
            self._send()
        out: list[Changes] = []
        while self._sent:
            batch, future = self._sent[0]
            if future is not None and not wait and not future.done() and self._sent_hands <= self.backlog_hands:
                break  # (past the backlog bound the oldest batch is waited for: the worker is far behind)
            self._sent.popleft()
            self._sent_hands -= batch.hand_count
            out.extend(self._scored(batch, future))
        return out

    def _scored(self, batch: Batch, future: Future[list[Changes]] | None) -> list[Changes]:
        if future is not None:
            try:
                return future.result()
            except Exception as exc:  # a worker that died or failed: its batches are scored here
                self._give_up(exc)
        return score_batch(batch)

    def _give_up(self, exc: BaseException) -> None:
        if not self._broken:
            log.warning("the scoring worker failed (%r): the sessions it did not score are scored in the referee's "
                        "process", exc)
        self._broken = True

    def close(self) -> None:
        """Stop the worker (sessions not collected are dropped)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
