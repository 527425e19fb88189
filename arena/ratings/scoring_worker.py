"""Scoring a match's hands off the referee's event loop: all-in EV and AIVAT worked out in a worker process while
the match goes on (``WORKERS`` of them, each deal's hands to one), so the referee's loop never pays for them and the
result waits only for the hands still in the worker when the last hand ends. A packed hand that no all-in and no
drawn mixed action touches (most) is scored without unpacking it (``packed_deltas``: about 20 us, AIVAT's terms
compiled); the others, and a database's hands, go through ``hand_deltas``.

Each hand is sent as it finishes (``BATCH_HANDS`` hands at a time), not when its duplicate session does: a local
match plays its rotations one after the other, so every session ends in the match's second half, and a worker given
sessions got all of its work then, and was still at it seconds after the last hand. With a database, only the hands'
numbers go (the worker reads the hands back from the file, which holds every hand before the tally hears of it);
without one, the hands themselves, packed into plain tuples and pickled as they finish (``pack``). The worker returns
each hand's deltas (``arena.ratings.session_scoring.hand_deltas``), and a session's changes are folded from them as
it completes (``fold_changes``): the functions the tally runs in-process, so the figures are the same to the last
bit. Should a worker die or fail, the batches it did not return, and every batch after them, are scored in this
process instead, a batch at a time (from the database, or from the packed hands they were sent with), and said so in
the log.

A tournament's matches are rescored the same way as their hands are recorded (``RecordedScoring``: each hand's
payoffs by all-in EV and AIVAT, ``arena.ratings.estimators.rescore``, the function its leaderboard runs), so the
leaderboard after the last hand finds them worked out; a match the worker did not finish is rescored by the
leaderboard itself, as before.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import queue
import signal
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Protocol, TypeVar

from arena.engine import Action, ActionKind, Event, EventKind, RuleError
from arena.engine.config import TableConfig
from arena.ratings.aivat import adjusted, compiled_terms
from arena.ratings.estimators import ADJUSTED, Estimator, Rescored, remember, rescore
from arena.ratings.session_scoring import Changes, HandDeltas, SessionJob, fold_changes, hand_deltas
from arena.records import queries
from arena.records.db import Database
from arena.referee import DecisionRecord, HandRecord
from arena.referee.status import DecisionHow
from arena.runner.collector import collect_in_batches

try:
    from arena.engine import _core
except ImportError:  # installed without the compiled engine: every hand is unpacked and scored by the reference
    _core = None  # type: ignore[assignment]

log = logging.getLogger("arena.ratings.scoring")

BATCH_HANDS = 256  # hands sent to the worker at once: a fraction of a second of its work, little overhead per hand
# A worker is started for the first batch of BATCH_HANDS hands: a match (or a tournament) that ends with fewer in all
# is scored in this process, since starting the worker (about 0.35 s of CPU: an interpreter and its imports) costs
# as much as scoring 100 to 300 hands does
WORKERS = 1  # worker processes of a match (each deal's hands to one, its check-downs remembered there). One: a hand
# costs it about 20 us (AIVAT compiled, packed hands not unpacked), so it keeps up with play and little is left at
# the end, while a second one's start and its pickling beside the match cost more than it saved: paired against two,
# a 64-table match of the C++ bots took 0.962 of the time (five pairs) and 0.960 with --db (three); the Python bots
# 0.996 (four) and one table 1.018 (three), both within their noise
NICE = 10  # the workers' niceness above the referee's: while the match is played they score with the CPU the
# referee and the bots leave, and both catch up once it is over (two workers at the referee's priority slowed the
# play of a 20,000-hand match by a fifth, for 0.7 s less waiting at its end)
BACKLOG_HANDS = 20_000  # hands sent but not scored back past which the tally waits for the worker (memory bound)
CLOSE_TIMEOUT_S = 5.0

Packed = tuple[Any, ...]  # a hand as plain tuples (``pack``)
Pickled = bytes  # a packed hand, pickled as it finishes (``ScoringWorker.keep``)
Scored = dict[int, tuple[tuple[int, ...], HandDeltas]]  # hand number -> its seating and deltas
R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)


# ---------------------------------------------------------------------------------------------- hands as tuples


def pack(record: HandRecord, config: int) -> Packed:
    """What scoring needs of a hand, as tuples of numbers (``config``: its table's index in the batch's list). The
    events are the compiled engine's bytes when the record carries them (``HandRecord.packed_events``: one object
    to pickle, read back in C), else a tuple per event. The kinds' numbers are read as ``_value_``: the ``value``
    property was a third of the time (it runs for every hand in the referee's loop). With packed events and no
    drawn mixed action, the decisions are None: the worker reads them off the events (``_core.packed_actions``, the
    actions as the engine applied them), where packing them took the referee's loop 3 µs a hand."""
    events: bytes | tuple[tuple[Any, ...], ...] = record.packed_events or tuple(
        (e.kind._value_, e.seat, e.street, e.amount, e.cards, e.all_in, e.pot) for e in record.events)
    decisions: tuple[tuple[Any, ...], ...] | None = None
    if not isinstance(events, bytes) or any(d.policy for d in record.decisions):
        decisions = tuple((d.seat, d.participant, d.action.kind._value_, d.action.amount, d.event_index,
                           tuple((a.kind._value_, a.amount, p) for a, p in d.policy)) for d in record.decisions)
    return (record.hand_number, record.deal, record.rotation, record.seating, record.button, config,
            record.starting_stacks, record.deck, record.hole, record.board, events, record.payoffs,
            record.final_stacks, decisions)


_EVENT_KINDS = {kind.value: kind for kind in EventKind}  # a dict lookup: calling the enum took 30 us a hand
_ACTION_KINDS = {kind.value: kind for kind in ActionKind}


def _unpack_events(data: bytes) -> tuple[Event, ...]:
    """Events the compiled engine packed (``Hand.packed_events``), by its ``unpack_events``."""
    from arena.engine import _core  # only a record of the compiled engine carries packed events

    return _core.unpack_events(data)


def unpack(packed: Packed, configs: Sequence[TableConfig], match_id: str = "") -> HandRecord:
    """A packed hand as a HandRecord (without what scoring does not read: names, times, how each action came)."""
    (number, deal, rotation, seating, button, config, stacks, deck, hole, board, events, payoffs, final,
     decisions) = packed
    return HandRecord(
        match_id=match_id, table_id="", hand_id=f"{match_id}-{number}", hand_number=number, deal=deal,
        rotation=rotation, seating=seating, button=button, config=configs[config], starting_stacks=stacks, deck=deck,
        hole=hole, board=board,
        events=_unpack_events(events) if isinstance(events, bytes) else tuple(
            Event(_EVENT_KINDS[k], seat, street, amount, cards, all_in, pot)
            for k, seat, street, amount, cards, all_in, pot in events),
        payoffs=payoffs, final_stacks=final,
        decisions=[DecisionRecord(seat, participant, 0, _action(kind, amount), 0.0, _OK, index, (),
                                  tuple([(_action(k, a), p) for k, a, p in policy]) if policy else ())
                   for seat, participant, kind, amount, index, policy in decisions] if decisions is not None else
        [DecisionRecord(seat, seating[seat], 0, _action(kind, amount), 0.0, _OK, index, (), ())
         for seat, kind, amount, index in _packed_actions(events)],
    )


def _packed_actions(events: object) -> list[tuple[int, int, int, int]]:
    """The decisions of a hand packed without them, read off its packed events (``pack``)."""
    from arena.engine import _core  # only a record of the compiled engine is packed without its decisions

    assert isinstance(events, bytes), "a hand is packed without its decisions only with its events packed"
    return _core.packed_actions(events)


_OK = DecisionHow.OK
_ACTIONS: dict[tuple[int, int], Action] = {}  # actions are frozen: one object for each kind and amount met
_ACTIONS_KEPT = 4_096


def _action(kind: int, amount: int) -> Action:
    """The action of a packed kind and amount (a dict lookup where a frozen dataclass's __init__ took 0.4 us)."""
    action = _ACTIONS.get((kind, amount))
    if action is None:
        if len(_ACTIONS) >= _ACTIONS_KEPT:  # raise amounts vary without bound: start again
            _ACTIONS.clear()
        action = _ACTIONS[(kind, amount)] = Action(_ACTION_KINDS[kind], amount)
    return action


# ---------------------------------------------------------------------------------------------- in the worker


@dataclass(frozen=True, slots=True)
class Batch:
    """Hands to score, with where they are: ``numbers`` read back from the match ``match_id`` in ``db_path``, else
    ``hands`` (packed and pickled, ``configs`` their tables)."""

    db_path: str = ""
    match_id: str = ""
    numbers: tuple[int, ...] = ()
    hands: tuple[Pickled, ...] = ()
    configs: tuple[TableConfig, ...] = ()

    @property
    def hand_count(self) -> int:
        return len(self.numbers) + len(self.hands)

    def run(self) -> Scored:
        """``score_batch`` of it (in the worker)."""
        return score_batch(self)


Rescorings = dict[Estimator, Rescored]  # each adjusted estimator's rescored hands


@dataclass(frozen=True, slots=True)
class HandsBatch:
    """Hands of a recorded match (``numbers``), to be rescored by every adjusted estimator."""

    db_path: str
    match_id: str
    numbers: tuple[int, ...]

    def run(self) -> Rescorings:
        """``estimators.rescore`` of its hands by each adjusted estimator, read back from the database (in the
        worker)."""
        records = list(queries.hand_records(_database(self.db_path), self.match_id, self.numbers))
        missing = sorted(set(self.numbers) - {r.hand_number for r in records})
        if missing:
            raise LookupError(f"hands {missing[:5]} of match {self.match_id!r} are not in {self.db_path}")
        return {estimator: rescore(records, estimator) for estimator in ADJUSTED}


class Job(Protocol[R_co]):
    """What the worker is sent: it runs it and sends back what it returns."""

    def run(self) -> R_co: ...


_DATABASES: dict[str, Database] = {}  # in the worker: the match's database, opened once


def _database(path: str) -> Database:
    """The database at ``path``, opened read-only once in this process."""
    db = _DATABASES.get(path)
    if db is None:
        db = _DATABASES[path] = Database(path, read_only=True)
    return db


def score_batch(batch: Batch) -> Scored:
    """Each hand's seating and deltas (arena.ratings.session_scoring.hand_deltas), by hand number; runs in the
    worker."""
    if batch.db_path:
        records = list(queries.hand_records(_database(batch.db_path), batch.match_id, batch.numbers))
        missing = sorted(set(batch.numbers) - {r.hand_number for r in records})
        if missing:
            raise LookupError(f"hands {missing[:5]} of match {batch.match_id!r} are not in {batch.db_path}")
        return {r.hand_number: (r.seating, hand_deltas(r)) for r in records}
    scored: Scored = {}
    for pickled in batch.hands:
        packed = pickle.loads(pickled)
        quick = packed_deltas(packed, batch.configs)
        if quick is None:
            record = unpack(packed, batch.configs, batch.match_id)
            quick = (record.seating, hand_deltas(record))
        scored[packed[0]] = quick
    return scored


def packed_deltas(packed: Packed, configs: Sequence[TableConfig]) -> tuple[tuple[int, ...], HandDeltas] | None:
    """``hand_deltas`` of a packed hand of the compiled engine that no all-in EV rescores and no drawn mixed action
    touches (most hands), without unpacking it: all-in EV changes nothing, and AIVAT's terms come from the packed
    decisions (``aivat.compiled_terms``); the same deltas to the last bit (tests/ratings/test_aivat_compiled.py).
    None for any other hand, which ``unpack`` and ``hand_deltas`` then score."""
    (_, _, _, seating, button, config, stacks, deck, hole, board, events, payoffs, _, decisions) = packed
    if _core is None or not isinstance(events, bytes):
        return None
    if decisions is None:  # no mixed action drawn: the actions as the engine applied them
        actions = [(seat, kind, amount) for seat, kind, amount, _ in _core.packed_actions(events)]
    else:
        for decision in decisions:
            if decision[5]:  # a drawn mixed action: the reference's action terms
                return None
        actions = [(d[0], d[2], d[3]) for d in decisions]
    entries, known = _core.packed_facts(events)
    if 0 <= known < len(board):  # an all-in before the river: all-in EV's (arena.ratings.allin.runout_point)
        return None
    table = configs[config]
    try:
        hand = _core.Hand(table, stacks, deck, button, entries)
    except RuleError:  # a hand the engine refuses: the reference says why
        return None
    terms = compiled_terms(hand, actions, hole, table.big_blind)
    if terms is None:
        return None
    unchanged = tuple([p - p for p in payoffs])  # all-in EV's deltas, as hand_deltas has them (ints)
    return seating, (unchanged, tuple([e - p for e, p in zip(adjusted(payoffs, terms), payoffs, strict=True)]))


assert ADJUSTED == (Estimator.ALLIN, Estimator.AIVAT), "packed_deltas gives the deltas in this order"


def serve(requests: BinaryIO, replies: BinaryIO) -> None:
    """The worker's loop: a pickled ``Job`` in (a ``Batch`` or a ``HandsBatch``), ``("ok", what it returns)`` or
    ``("error", why)`` out, until the input ends (the referee closed it, or died). Ctrl-C is left to the referee,
    which then closes the worker."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        try:
            job = pickle.load(requests)
        except EOFError:
            return
        try:
            reply: tuple[str, Any] = ("ok", job.run())
        except Exception as exc:  # said to the referee, which scores the batch itself
            reply = ("error", f"{exc!r}")
        pickle.dump(reply, replies, protocol=pickle.HIGHEST_PROTOCOL)
        replies.flush()


def main() -> None:
    """``python -m arena.ratings.scoring_worker``: serve on standard input and output (anything printed by mistake
    goes to standard error, not into the replies)."""
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    # its garbage collector as the referee's (young passes every 50,000 objects, what the imports made frozen out of
    # them): the C++ row's match took 0.93 of its time, the Python random bots' 0.94 (five and four pairs)
    collect_in_batches()
    serve(sys.stdin.buffer, replies)


# ---------------------------------------------------------------------------------------------- in the referee


class WorkerFailed(RuntimeError):
    """The scoring worker could not score a batch: it failed on it, or it is gone."""


class _Worker:
    """The worker process (``python -m arena.ratings.scoring_worker``, a child with pipes: no multiprocessing
    machinery, nothing asked of the caller's main module) and two threads: one pickles batches into its input,
    one reads its replies into futures, in order. It runs ``NICE`` above this process (a match's workers and a
    tournament's alike) and, on Linux, under SCHED_IDLE: the referee's loop and the bots come first. (Niceness alone
    was not enough on this 2-core machine: a busy process at nice 19 beside a match slowed it by a fifth, one under
    SCHED_IDLE by a sixth, the rest being the cores' own contention.) Once the referee waits for it (``hurry``: the
    match's end, or a backlog past its bound) it is scheduled as usual, still niced: busy bots cannot starve it."""

    def __init__(self) -> None:
        package_root = str(Path(__file__).resolve().parents[2])  # the worker imports the same arena as we do
        path = os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH", "")) if p)
        self.process = subprocess.Popen([sys.executable, "-m", "arena.ratings.scoring_worker"],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                        env=dict(os.environ, PYTHONPATH=path))
        with contextlib.suppress(OSError, AttributeError):  # the referee and the bots first (no niceness on Windows)
            os.setpriority(os.PRIO_PROCESS, self.process.pid, min(19, os.getpriority(os.PRIO_PROCESS, 0) + NICE))
        with contextlib.suppress(OSError, AttributeError):  # and only on a core nobody else wants (Linux)
            os.sched_setscheduler(self.process.pid, os.SCHED_IDLE, os.sched_param(0))
        self._hurried = False
        self._outbox: queue.SimpleQueue[Job[Any] | None] = queue.SimpleQueue()
        self._futures: deque[Future[Any]] = deque()
        self._lock = threading.Lock()  # the futures, and why the worker ended (``_ended``)
        self._ended = ""
        self._writer = threading.Thread(target=self._write, name="scoring-writer", daemon=True)
        self._reader = threading.Thread(target=self._read, name="scoring-reader", daemon=True)
        self._writer.start()
        self._reader.start()

    def hurry(self) -> None:
        """The referee is about to wait for this worker: from now on it is scheduled as any process is (still
        niced), so that bots that keep both cores busy cannot starve what the referee waits for."""
        if self._hurried:
            return
        self._hurried = True
        with contextlib.suppress(OSError, AttributeError):
            os.sched_setscheduler(self.process.pid, os.SCHED_OTHER, os.sched_param(0))

    def result(self, future: Future[R]) -> R:
        """The result of one of this worker's jobs, waited for if need be (``hurry`` first: the referee waits)."""
        if not future.done():
            self.hurry()
        return future.result()

    def submit(self, job: Job[R]) -> Future[R]:
        future: Future[R] = Future()
        with self._lock:
            if self._ended:
                future.set_exception(WorkerFailed(self._ended))
                return future
            self._futures.append(future)
        self._outbox.put(job)
        return future

    def _write(self) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        try:
            while (job := self._outbox.get()) is not None:
                pickle.dump(job, stdin, protocol=pickle.HIGHEST_PROTOCOL)
                stdin.flush()
        except OSError:  # the worker is gone: the reader fails what is pending
            pass
        finally:
            with contextlib.suppress(OSError):
                stdin.close()

    def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        why = "the scoring worker ended"
        try:
            while True:
                kind, payload = pickle.load(stdout)
                with self._lock:
                    future = self._futures.popleft()
                if kind == "ok":
                    future.set_result(payload)
                else:
                    future.set_exception(WorkerFailed(f"the scoring worker failed: {payload}"))
        except Exception as exc:  # EOF (it died or was closed), or a reply that makes no sense
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=1.0)
            why = f"the scoring worker ended ({exc!r}, exit status {self.process.returncode})"
        with self._lock:
            self._ended = why
            while self._futures:
                self._futures.popleft().set_exception(WorkerFailed(why))

    def close(self) -> None:
        """Close its input and wait for it to end (at once if it has nothing left to score; killed if it still has,
        or does not end)."""
        self._outbox.put(None)
        with self._lock:
            busy = bool(self._futures)
        if busy:
            self.process.kill()
        try:
            self.process.wait(timeout=CLOSE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._writer.join(timeout=CLOSE_TIMEOUT_S)
        self._reader.join(timeout=CLOSE_TIMEOUT_S)
        if self.process.stdout is not None:
            self.process.stdout.close()


class ScoringWorker:
    """The hands of one match scored in worker processes as they finish (a deal's hands in one), and its sessions'
    changes folded from them as the sessions complete (the ``Scorer`` of a SessionTally): give ``db_path`` and
    ``match_id`` when a database records the match (only hand numbers go to the workers), else the hands themselves
    go, packed."""

    def __init__(self, big_blind: int, cross_table: bool, db_path: str | Path | None = None, match_id: str = "",
                 batch_hands: int = BATCH_HANDS, backlog_hands: int = BACKLOG_HANDS, workers: int = WORKERS) -> None:
        self.big_blind = big_blind
        self.cross_table = cross_table
        self.db_path = str(Path(db_path).resolve()) if db_path is not None else ""
        self.match_id = match_id
        self.batch_hands = batch_hands
        self.backlog_hands = backlog_hands
        self._lanes = [_Lane() for _ in range(max(1, workers))]  # a deal's hands go to lane ``deal % workers``
        self._configs: dict[TableConfig, int] = {}  # every table's config so far, by its index in ``pack``
        self._last_config: tuple[TableConfig, int] | None = None  # the last one looked up, and its index
        self._sent: deque[_Sent] = deque()  # batches at the workers, in order
        self._sent_hands = 0
        self._scored: Scored = {}  # hands back from the worker whose session is not complete or not folded yet
        self._sessions: deque[SessionJob] = deque()  # complete sessions, in order, not folded yet
        self._broken = False
        # a batch came back (or failed) since ``_take`` last looked: set by the worker's reader thread, so that the
        # tally's call for every session it completes looks at the batches only when one did (it went over every
        # batch out, about 3.5 us each of 10,000 calls in a 20,000-hand match)
        self._returned = False

    @property
    def pending_hands(self) -> int:
        """Hands finished and not scored back yet."""
        return self._sent_hands + sum(lane.hand_count for lane in self._lanes)

    @property
    def _started(self) -> bool:
        return any(lane.worker is not None for lane in self._lanes)

    def keep(self, record: HandRecord) -> None:
        """A hand that just finished: on its way to a worker with the next batch of its lane, its number when the
        worker reads it back, else the hand packed and pickled (bytes: one object, which the garbage collector's
        passes skip). Nothing is kept for its session, which ``submit`` names by its hands' numbers."""
        lane = self._lanes[record.deal % len(self._lanes)]
        if self.db_path:
            lane.numbers.append(record.hand_number)
        else:
            config = self._config_index(record.config)
            lane.hands.append(pickle.dumps(pack(record, config), protocol=pickle.HIGHEST_PROTOCOL))
        if lane.hand_count >= self.batch_hands:
            self._send(lane)

    def _config_index(self, config: TableConfig) -> int:
        """``config``'s place in the batches' list of tables (the last one found again by identity: hashing a
        frozen dataclass is a Python call a hand)."""
        last = self._last_config
        if last is not None and last[0] is config:
            return last[1]
        index = self._configs.setdefault(config, len(self._configs))
        self._last_config = (config, index)
        return index

    def submit(self, job: SessionJob, kept: Sequence[object]) -> None:
        """A complete session (its hands were ``keep``'s): its changes come from ``results`` once its hands' deltas
        are back."""
        self._sessions.append(job)

    def _send(self, lane: _Lane, inline: bool = False) -> None:
        """The lane's hands as a batch to its worker (started for its first batch), or scored here if ``inline``
        (a short match, whose hands in all are fewer than a batch) or if no worker can be had."""
        if not lane.hand_count:
            return
        batch = Batch(self.db_path, self.match_id, tuple(lane.numbers), tuple(lane.hands), tuple(self._configs))
        lane.numbers, lane.hands = [], []
        if not self._broken and not inline:
            try:
                worker = lane.worker
                if worker is None and batch.hand_count < self.batch_hands:  # the last hands: to a worker started
                    worker = next((other.worker for other in self._lanes if other.worker is not None), None)
                if worker is None:
                    worker = lane.worker = _Worker()
                future = worker.submit(batch)
                future.add_done_callback(self._came_back)
                self._sent.append(_Sent(batch, future, worker))
                self._sent_hands += batch.hand_count
                self._take(wait=False)
                return
            except OSError as exc:  # no worker to be had
                self._give_up(exc)
        self._scored.update(score_batch(batch))  # here and now, a batch at a time (as a worker would have)

    def _send_last(self) -> None:
        """Every lane's hands left: scored here when no worker was started and they are fewer than a batch (a
        worker's start costs about as much as scoring 100 to 300 hands)."""
        inline = not self._started and self.pending_hands - self._sent_hands < self.batch_hands
        for lane in self._lanes:
            self._send(lane, inline)

    def results(self, wait: bool = False) -> list[Changes]:
        """The complete sessions' changes, in the order they were submitted, as far as their hands are back from
        the worker; with ``wait``, every session submitted (the last batch is sent now, and waited for). Past
        ``backlog_hands`` hands sent and not back, the oldest batches are waited for: the worker is far behind."""
        if wait:
            self._send_last()
        self._take(wait)
        out: list[Changes] = []
        scored = self._scored
        while self._sessions and all(n in scored for n in self._sessions[0].numbers):
            job = self._sessions.popleft()
            out.append(fold_changes(((n, *scored.pop(n)) for n in job.numbers), job, self.big_blind,
                                    self.cross_table))
        if wait and self._sessions:
            missing = [n for n in self._sessions[0].numbers if n not in scored]
            raise LookupError(f"hands {missing[:5]} of a complete session were never given to the scorer (keep)")
        return out

    def _take(self, wait: bool) -> None:
        """The batches the workers have scored, or failed, so far; with ``wait`` every one (each waited for), and
        past ``backlog_hands`` hands sent and not back the oldest are waited for (the workers are far behind). A
        failed batch is scored here at once, as it is taken (never left to pile up)."""
        if not (wait or self._returned or self._sent_hands > self.backlog_hands):
            return  # nothing came back since the last look
        self._returned = False  # (before looking: a batch back while this looks is looked at by the next call)
        # a worker answers its batches in order: past its first one not back, none of its others is (a dead
        # worker's all fail at once), so each call asks about a few batches, not all of a long backlog
        waiting: set[_Worker] = set()
        kept: deque[_Sent] = deque()
        for sent in self._sent:
            if sent.worker in waiting:
                kept.append(sent)
            elif sent.future.done():
                self._absorb(sent)
            else:
                waiting.add(sent.worker)
                kept.append(sent)
        self._sent = kept
        while self._sent and (wait or self._sent_hands > self.backlog_hands):
            self._absorb(self._sent.popleft())

    def _came_back(self, future: Future[Scored]) -> None:
        self._returned = True

    def _absorb(self, sent: _Sent) -> None:
        """A batch taken back: its hands' deltas, from the worker, or worked out here if the worker failed."""
        self._sent_hands -= sent.batch.hand_count
        try:
            scored: Scored = sent.worker.result(sent.future)
            self._scored.update(scored)
        except WorkerFailed as exc:  # a worker that died or failed: its batches are scored here
            self._give_up(exc)
            self._scored.update(score_batch(sent.batch))

    def _give_up(self, exc: BaseException) -> None:
        if not self._broken:
            log.warning("%s: the hands it did not score, and every hand from now on, are scored in the referee's "
                        "process", exc)
        self._broken = True

    def close(self) -> None:
        """Stop the workers (sessions not collected are dropped)."""
        for lane in self._lanes:
            if lane.worker is not None:
                lane.worker.close()
                lane.worker = None


@dataclass(frozen=True, slots=True)
class _Sent:
    """A batch at a worker, and the future of its scores."""

    batch: Batch
    future: Future[Scored]
    worker: _Worker


@dataclass(slots=True)
class _Lane:
    """One worker of a ScoringWorker and the hands for its next batch: their numbers (read back), or the hands,
    packed."""

    numbers: list[int] = field(default_factory=list)
    hands: list[Pickled] = field(default_factory=list)
    worker: _Worker | None = None

    @property
    def hand_count(self) -> int:
        return len(self.numbers) + len(self.hands)


class RecordedScoring:
    """The hands of matches recorded in ``db`` rescored by the adjusted estimators in a worker process as they are
    recorded (a tournament's: ``add`` each hand once the database has it, as its ``on_hand`` does); ``finish`` then
    keeps the figures of every match rescored whole where its leaderboard looks first (``estimators.remember``).
    A worker that fails or dies is said in the log, and the matches it did not rescore are left to the leaderboard,
    which rescores them itself as it always did."""

    def __init__(self, db: Database, batch_hands: int = BATCH_HANDS) -> None:
        self.db = db
        self.batch_hands = batch_hands
        self._db_path = str(Path(db.path).resolve())
        self._waiting: dict[str, list[int]] = {}  # match -> its hands not sent yet
        self._waiting_hands = 0
        self._sent: deque[tuple[HandsBatch, Future[Rescorings]]] = deque()
        self._numbers: dict[str, set[int]] = {}  # match -> the hands rescored so far
        self._figures: dict[str, Rescorings] = {}
        self._failed: set[str] = set()  # matches with hands the worker did not rescore
        self._worker: _Worker | None = None
        self._broken = False

    def add(self, record: HandRecord) -> None:
        """A hand recorded in the database: rescored with the next batch."""
        self._waiting.setdefault(record.match_id, []).append(record.hand_number)
        self._waiting_hands += 1
        if self._waiting_hands >= self.batch_hands:
            self._send()
        self._collect(wait=False)

    def _send(self) -> None:
        for match_id, numbers in self._waiting.items():
            batch = HandsBatch(self._db_path, match_id, tuple(numbers))
            try:
                if self._broken:
                    raise WorkerFailed("the scoring worker failed before")
                if self._worker is None:
                    self._worker = _Worker()
                self._sent.append((batch, self._worker.submit(batch)))
            except (OSError, WorkerFailed) as exc:
                self._give_up(exc)
                self._failed.add(match_id)
        self._waiting, self._waiting_hands = {}, 0

    def _collect(self, wait: bool) -> None:
        """Take in the batches rescored so far (every one sent, with ``wait``)."""
        while self._sent and (wait or self._sent[0][1].done()):
            batch, future = self._sent.popleft()
            try:
                rescored = self._worker.result(future) if self._worker is not None else future.result()
            except WorkerFailed as exc:
                self._give_up(exc)
                self._failed.add(batch.match_id)
                continue
            figures = self._figures.setdefault(batch.match_id, {estimator: {} for estimator in ADJUSTED})
            for estimator, hands in rescored.items():
                figures[estimator].update(hands)
            self._numbers.setdefault(batch.match_id, set()).update(batch.numbers)

    def _give_up(self, exc: BaseException) -> None:
        if not self._broken:
            log.warning("%s: the matches it did not rescore are rescored by the leaderboard", exc)
        self._broken = True

    def finish(self) -> list[str]:
        """Send the hands left, wait for the worker, and keep each match's figures if it rescored every hand recorded
        of it (a resumed tournament's earlier hands were not: the leaderboard rescores those matches itself); the
        matches kept (none when fewer than a batch of hands were recorded in all: the leaderboard rescores them as
        fast as a worker started for them would)."""
        if self._worker is None and not self._sent:
            return []
        self._send()
        self._collect(wait=True)
        kept = []
        for match_id, figures in self._figures.items():
            hands = len(self._numbers[match_id])
            in_order = {estimator: dict(sorted(figures[estimator].items())) for estimator in ADJUSTED}  # as read
            if match_id not in self._failed and all(
                    remember(self.db, match_id, estimator, in_order[estimator], hands) for estimator in ADJUSTED):
                kept.append(match_id)
        return kept

    def close(self) -> None:
        """Stop the worker (batches not collected are dropped)."""
        if self._worker is not None:
            self._worker.close()
            self._worker = None


if __name__ == "__main__":
    main()
