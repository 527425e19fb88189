"""Sessions scored as they finish, in a worker process (arena.ratings.scoring_worker): the same figures, to the last
bit, as the tally's in-process scoring, whether the worker reads the hands back from the match's database or is sent
them; and a worker that dies leaves its sessions to be scored in the referee's process. A tournament's hands rescored
as they are recorded are the leaderboard's figures, bit for bit, and a worker that dies leaves them to it."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import random
import signal
import sys
import time
from pathlib import Path

import pytest

from arena.engine import Action, ActionKind, AnteMode, TableConfig, hand_class
from arena.engine.hand import Hand as PythonHand
from arena.ratings import estimators
from arena.ratings.estimators import ADJUSTED, Estimator
from arena.ratings.scoring_worker import RecordedScoring, ScoringWorker, pack, unpack
from arena.ratings.session_scoring import session_changes
from arena.ratings.tally import SessionTally
from arena.records.db import Database
from arena.records.ledger import Ledger
from arena.referee import Decision, FunctionSeat, HandRecord, Match, MatchSpec, MixedAction
from arena.runner.bots import BotSpec

HANDS = 240
BATCH = 16  # hands per batch sent to the worker: many batches in a short match


def player(seed: int) -> object:
    """Shoves now and then (all-ins before the river: all-in EV), lets the referee draw now and then (AIVAT's
    action terms), else calls or checks."""
    rng = random.Random(seed)

    def choose(decision: Decision) -> Action | MixedAction:
        legal = decision.view.legal
        assert legal is not None
        passive = Action(ActionKind.CALL) if legal.call_amount else Action(ActionKind.CHECK)
        roll = rng.random()
        if roll < 0.15 and legal.max_raise_to:
            return Action(ActionKind.RAISE, legal.max_raise_to)
        if roll < 0.4 and legal.min_raise_to:
            return MixedAction(((passive, 0.6), (Action(ActionKind.RAISE, legal.min_raise_to), 0.4)))
        return passive

    return choose


class Tallies:
    """A sink feeding every finished hand to several tallies, and keeping the hands."""

    def __init__(self, *tallies: SessionTally) -> None:
        self.tallies = tallies
        self.records: list[HandRecord] = []
        self.packed: list[bytes] = []  # each record's packed events, which it carries only until its seats are told

    def hand_finished(self, record: HandRecord) -> None:
        self.records.append(record)
        self.packed.append(record.packed_events)
        for tally in self.tallies:
            tally.add(record)


def recorded_match(tmp_path: Path, sink: Tallies, seed: str = "worker") -> tuple[Database, MatchSpec]:
    db = Database(tmp_path / "w.db")
    spec = MatchSpec("w", seed, HANDS)
    seats = [(n, FunctionSeat(n, player(i))) for i, n in enumerate("ab")]  # type: ignore[arg-type]
    entry = Ledger(db).open(spec, [BotSpec(n, "") for n, _ in seats])
    entry.finish(asyncio.run(Match(spec, seats, [entry, sink]).run()))  # the database first, as arena match has it
    return db, spec


def test_the_worker_gives_the_in_process_figures_of_a_recorded_match(tmp_path: Path) -> None:
    """Three tallies of one real match: scored in-process as each session ends, by a worker reading the hands back
    from the database, and by a worker sent the hands packed: every estimator's figures are equal, bit for bit."""
    db_path = tmp_path / "w.db"
    here = SessionTally(2, 2, 100)
    from_db = SessionTally(2, 2, 100, scorer=ScoringWorker(100, False, db_path, "w", batch_hands=BATCH))
    sent = SessionTally(2, 2, 100, scorer=ScoringWorker(100, False, None, "w", batch_hands=BATCH))
    sink = Tallies(here, from_db, sent)
    try:
        recorded_match(tmp_path, sink)
        assert any(d.policy for r in sink.records for d in r.decisions)  # AIVAT's action terms are exercised
        for participant in (0, 1):
            for estimator in Estimator:
                expected = here.win_rate(participant, estimator)
                assert expected.sessions == HANDS // 2
                assert from_db.win_rate(participant, estimator) == expected
                assert sent.win_rate(participant, estimator) == expected
        for estimator in ADJUSTED:  # the adjusted figures are not the raw ones: there was something to score
            assert here.win_rate(0, estimator).mean != here.win_rate(0).mean
    finally:
        from_db.close()
        sent.close()


def test_a_packed_hand_scores_as_the_record(tmp_path: Path) -> None:
    sink = Tallies()
    recorded_match(tmp_path, sink)
    configs = [sink.records[0].config]
    from arena.ratings.session_scoring import SessionJob

    for first in range(0, HANDS, 2):
        pair = sink.records[first:first + 2]
        job = SessionJob(tuple(r.hand_number for r in pair), (2, 2))
        unpacked = [unpack(pack(r, 0), configs, "w") for r in pair]
        assert session_changes(unpacked, job, 100, False) == session_changes(pair, job, 100, False)
        # with the compiled engine's packed events (what the referee sends): the same hands, event for event
        compiled = [unpack(pack(dataclasses.replace(r, packed_events=p), 0), configs, "w")
                    for r, p in zip(pair, sink.packed[first:first + 2], strict=True)]
        assert [r.events for r in compiled] == [r.events for r in pair]
        assert [type(e.kind) for r in compiled for e in r.events] == [type(e.kind) for r in pair for e in r.events]
        assert session_changes(compiled, job, 100, False) == session_changes(pair, job, 100, False)
    if hand_class() is not PythonHand:
        assert all(sink.packed)


def test_packed_events_are_read_back_exactly_and_refused_when_damaged() -> None:
    from arena.engine import _core

    hand = _core.Hand(TableConfig(ante=5, ante_mode=AnteMode.EACH), [100, 3000, 40], list(range(52)))
    while not hand.is_over:  # all in and called: side pots, all-in flags, a showdown
        legal = hand.legal_actions()
        hand.apply(legal.seat, ActionKind.RAISE if legal.max_raise_to else ActionKind.CALL, legal.max_raise_to)
    data = hand.packed_events()
    assert _core.unpack_events(data) == tuple(hand.events)
    with pytest.raises(ValueError, match="version"):
        _core.unpack_events(b"\x02" + data[1:])
    with pytest.raises(ValueError, match="version"):
        _core.unpack_events(data[:-1])
    with pytest.raises(ValueError, match="not an event"):
        _core.unpack_events(data[:9] + b"\x63" + data[10:])  # the first event's kind: 99
    with pytest.raises(ValueError, match="not an event"):
        _core.unpack_events(data[:10] + b"\xfe" + data[11:])  # the first event's seat: -2
    with pytest.raises(ValueError, match="not an event"):
        _core.unpack_events(data[:15] + b"\x07" + data[16:])  # a card where the first event has none


def test_sessions_of_a_dead_worker_are_scored_in_the_referee(tmp_path: Path,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    """The worker is killed halfway through the match: the batches it never returned are scored in this process,
    with a warning, and the figures are still those of in-process scoring."""
    here = SessionTally(2, 2, 100)
    worker = ScoringWorker(100, False, tmp_path / "w.db", "w", batch_hands=BATCH, workers=2)
    killed = SessionTally(2, 2, 100, scorer=worker)

    class KillHalfway(Tallies):
        def hand_finished(self, record: HandRecord) -> None:
            super().hand_finished(record)
            if len(self.records) == HANDS // 2:
                processes = [lane.worker.process for lane in worker._lanes if lane.worker is not None]
                assert len(processes) == 2  # a deal's hands go to one of two workers
                for process in processes:
                    os.kill(process.pid, signal.SIGKILL)  # as an OOM killer would
                    process.wait()

    try:
        with caplog.at_level(logging.WARNING, logger="arena.ratings.scoring"):
            recorded_match(tmp_path, KillHalfway(here, killed))
            for participant in (0, 1):
                for estimator in ADJUSTED:
                    assert killed.win_rate(participant, estimator) == here.win_rate(participant, estimator)
        assert "exit status -9" in caplog.text  # it did die, and the fallback scored its sessions
    finally:
        killed.close()


def test_after_a_worker_dies_each_batch_is_scored_as_it_is_formed(tmp_path: Path) -> None:
    """Hands whose sessions are still open (a local match's first rotation) keep coming after a worker died: each
    batch is scored here as it is formed, never left to pile up for the first session that completes (which would
    then stall the referee's loop for all of them at once)."""
    sink = Tallies()
    recorded_match(tmp_path, sink)
    worker = ScoringWorker(100, False, tmp_path / "w.db", "w", batch_hands=BATCH, workers=1)
    try:
        for record in sink.records[:BATCH]:
            worker.keep(record)  # the first batch: the worker is started for it
        lane = worker._lanes[0]
        assert lane.worker is not None
        dead = lane.worker
        os.kill(dead.process.pid, signal.SIGKILL)
        dead.process.wait()
        for _ in range(100):  # until its reader has seen it go
            if dead._ended:
                break
            time.sleep(0.05)
        for record in sink.records[BATCH:BATCH * 4]:
            worker.keep(record)
            assert worker._sent_hands <= BATCH  # the first batch at most (it may be scored yet)
        worker.results()
        assert worker._sent_hands == 0 and not worker._sent
        assert len(worker._scored) == BATCH * 4  # every hand scored, none waiting for a session
    finally:
        worker.close()


def test_the_workers_run_below_the_referee() -> None:
    """A worker is niced ``NICE`` above the referee and, on Linux, scheduled only on a core nobody else wants
    (SCHED_IDLE): while a match is played, the referee's loop and the bots get the CPU first; once the referee waits
    for it, it is scheduled as usual."""
    from arena.ratings.scoring_worker import NICE, _Worker

    worker = _Worker()
    try:
        mine = os.getpriority(os.PRIO_PROCESS, 0)
        assert os.getpriority(os.PRIO_PROCESS, worker.process.pid) == min(19, mine + NICE)
        if sys.platform == "linux":
            assert os.sched_getscheduler(worker.process.pid) == os.SCHED_IDLE
            worker.hurry()  # the referee waits for it: scheduled as usual, still niced
            assert os.sched_getscheduler(worker.process.pid) == os.SCHED_OTHER
            assert os.getpriority(os.PRIO_PROCESS, worker.process.pid) == min(19, mine + NICE)
    finally:
        worker.close()


class Rescoring(Tallies):
    """A sink handing every recorded hand to a RecordedScoring, as a tournament's hands callback does."""

    def __init__(self, scoring: RecordedScoring) -> None:
        super().__init__()
        self.scoring = scoring

    def hand_finished(self, record: HandRecord) -> None:
        super().hand_finished(record)
        self.scoring.add(record)


@pytest.fixture(scope="module")
def rescored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Database, list[str], list[HandRecord]]:
    """A match recorded with its hands rescored by the worker as they were recorded: its database, the matches
    kept, its hands."""
    folder = tmp_path_factory.mktemp("rescored")
    scoring = RecordedScoring(Database(folder / "w.db"), batch_hands=BATCH)
    sink = Rescoring(scoring)
    try:
        db, _ = recorded_match(folder, sink)
        kept = scoring.finish()
    finally:
        scoring.close()
    return db, kept, sink.records


def test_a_tournaments_hands_rescored_as_recorded_are_the_leaderboards(
        rescored: tuple[Database, list[str], list[HandRecord]], monkeypatch: pytest.MonkeyPatch) -> None:
    """A recorded match's hands rescored by the worker as they are recorded are kept for its leaderboard, which
    then rescores nothing itself; and they are, bit for bit, what the leaderboard works out from the database."""
    db, kept_matches, _ = rescored
    assert kept_matches == ["w"]
    kept = {estimator: estimators.adjusted_payoffs(db, "w", estimator) for estimator in ADJUSTED}
    with monkeypatch.context() as patched:  # kept: nothing is rescored in this process
        patched.setattr(estimators, "rescore", lambda *_: pytest.fail("the leaderboard rescored a kept match"))
        assert {e: estimators.adjusted_payoffs(db, "w", e) for e in ADJUSTED} == kept
    estimators._CACHE.clear()
    for estimator in ADJUSTED:
        recomputed = estimators.adjusted_payoffs(db, "w", estimator)
        assert recomputed == kept[estimator] and list(recomputed) == list(kept[estimator])
        assert recomputed  # there was something to rescore (all-ins; every hand by AIVAT)
    assert len(kept[Estimator.AIVAT]) == HANDS


def test_a_match_rescored_in_part_is_left_to_the_leaderboard(
        rescored: tuple[Database, list[str], list[HandRecord]]) -> None:
    """Hands recorded that the worker was not given (a resumed tournament's earlier ones) leave the match to the
    leaderboard: nothing of it is kept (all of them: the test above)."""
    db, _, records = rescored
    scoring = RecordedScoring(db, batch_hands=BATCH)
    try:
        for record in records[HANDS // 2:]:
            scoring.add(record)
        assert scoring.finish() == []
    finally:
        scoring.close()


def test_a_dead_rescoring_worker_is_said_and_leaves_its_matches_to_the_leaderboard(
        rescored: tuple[Database, list[str], list[HandRecord]], caplog: pytest.LogCaptureFixture) -> None:
    """The worker is killed halfway through: a warning says so and nothing is kept (with the worker alive, the
    first test of these, the same match is kept)."""
    db, _, records = rescored
    scoring = RecordedScoring(db, batch_hands=BATCH)
    try:
        with caplog.at_level(logging.WARNING, logger="arena.ratings.scoring"):
            for record in records:
                scoring.add(record)
                if record.hand_number == HANDS // 2:
                    worker = scoring._worker
                    assert worker is not None
                    os.kill(worker.process.pid, signal.SIGKILL)  # as an OOM killer would
                    worker.process.wait()
            assert scoring.finish() == []
        assert "exit status -9" in caplog.text and "rescored by the leaderboard" in caplog.text
    finally:
        scoring.close()
