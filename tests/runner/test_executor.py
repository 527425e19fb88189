"""The executor seam without a cluster: the codec gives back exactly what it was given, the writer stores no hand
twice, and the ``executor`` setting is checked."""

from __future__ import annotations

import asyncio
import dataclasses
import io
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from arena.engine import AnteMode, Structure, TableConfig
from arena.records import RecordsDamaged, queries
from arena.records.db import Database
from arena.records.ledger import Ledger
from arena.records.verify import verify_match
from arena.referee import ClockPolicy, FunctionSeat, GameRules, HandRecord, HandSink, Match, MatchResult, MatchSpec
from arena.referee.game import GameKind, Level
from arena.runner.bots import BotSpec
from arena.runner.codec import (
    CodecError,
    MatchFailure,
    decode,
    decode_value,
    encode,
    encode_value,
    read_frames,
    write_frame,
)
from arena.runner.executor import (
    DuplicateHand,
    ExecutorKind,
    HandNumbers,
    MatchControl,
    MatchJob,
    MatchWriter,
    WorkerLost,
)
from arena.runner.inprocess import InProcessSeat
from arena.runner.sandbox import SandboxLimits, SandboxPolicy
from arena.runner.tournament import TournamentConfig, TournamentError, matches_of, run_tournament
from tests.referee.test_table import caller

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "sample_bots" / "python"))

from equity_bot import EquityBot  # noqa: E402
from random_bot import RandomBot  # noqa: E402


def _played(hands: int = 12) -> tuple[list[HandRecord], MatchResult]:
    config = TableConfig(ante=10, ante_mode=AnteMode.EACH)
    spec = MatchSpec("codec", "codec-seed", hands, config=config, policy=ClockPolicy(per_action_ms=60000))
    records: list[HandRecord] = []
    seats = [("equity", InProcessSeat("equity", EquityBot())), ("random", InProcessSeat("random", RandomBot(seed=2)))]
    match = Match(spec, seats, versions=["1", "2"], on_hand=records.append)  # type: ignore[arg-type]
    return records, asyncio.run(match.run())


def test_every_hand_and_the_result_come_back_from_the_codec_as_they_were() -> None:
    records, result = _played()
    assert records and any(r.decisions for r in records)
    for record in records:
        assert decode(encode(record)) == record
    assert decode(encode(result)) == result
    failure = MatchFailure("m", "no bubblewrap on node-2")
    assert decode(encode(failure)) == failure
    # what only the referee's process uses goes nowhere: a record handed to a sink while its seats' HandEnd bytes
    # are still on it (HandRecord.end_wire) travels without them
    carrying = dataclasses.replace(records[0], end_wire=(b"\x32\x00", b""))
    assert decode(encode(carrying)) == records[0] and decode(encode(carrying)).end_wire == ()


def test_a_freezeout_its_games_and_a_resumed_game_s_stacks_come_back_as_they_were() -> None:
    rules = GameRules(GameKind.FREEZEOUT, games=2, levels=(Level(5, 10), Level(10, 20, 2)), level_hands=3)
    spec = MatchSpec("fz", "fz-seed", 10, TableConfig(5, 10), 150, game=rules)
    records: list[HandRecord] = []
    seats = [(n, InProcessSeat(n, RandomBot(seed=k))) for k, n in enumerate(("a", "b", "c"))]
    result = asyncio.run(Match(spec, seats, on_hand=records.append).run())  # type: ignore[arg-type]
    assert result.games and all(decode(encode(r)) == r for r in records)
    assert decode(encode(result)) == result
    history = {r.hand_number: r.final_stacks for r in records[:3]}
    job = MatchJob(spec, (BotSpec("a", "x"), BotSpec("b", "y"), BotSpec("c", "z")), frozenset(history),
                   history=history)
    assert decode_value(MatchJob, encode_value(job)) == job


def test_a_job_travels_whole_seed_sandbox_and_recorded_hands_included(tmp_path: Path) -> None:
    spec = MatchSpec("cup/000-a-b", "secret", 40, config=TableConfig(structure=Structure.FIXED_LIMIT), tables=2,
                     all_orders=True)
    job = MatchJob(spec, (BotSpec("a", "python a.py", "1.0"), BotSpec("b", "./b")), frozenset({0, 3, 7}), tmp_path,
                   SandboxPolicy(limits=SandboxLimits(cpu_seconds=5), binds=(tmp_path,), hidden=(tmp_path / "x.db",)),
                   tmp_path / "logs")
    assert decode_value(MatchJob, encode_value(job)) == job


def test_frames_survive_a_stream_and_a_torn_stream_is_an_error() -> None:
    stream = io.BytesIO()
    write_frame(stream, b"one")
    write_frame(stream, b"")
    write_frame(stream, b"three")
    data = stream.getvalue()
    assert list(read_frames(io.BytesIO(data))) == [b"one", b"", b"three"]
    with pytest.raises(CodecError, match="ended inside a frame"):
        list(read_frames(io.BytesIO(data[:-2])))
    with pytest.raises(CodecError):
        decode(b'{"kind": "spell", "data": {}}')


def test_the_writer_stores_each_hand_once(tmp_path: Path) -> None:
    records, _ = _played(4)
    db = Database(tmp_path / "a.db")
    spec = MatchSpec("codec", "codec-seed", 4)
    entry = Ledger(db).open(spec, [BotSpec("equity", "", "1"), BotSpec("random", "", "2")])
    seen: list[int] = []
    writer = MatchWriter([entry], recorded={records[0].hand_number}, on_hand=lambda r: seen.append(r.hand_number))
    with pytest.raises(DuplicateHand):
        writer.hand_finished(records[0])  # recorded before this run
    for record in records[1:]:
        writer.hand_finished(record)
    with pytest.raises(DuplicateHand):
        writer.hand_finished(records[2])  # sent twice
    assert seen == [r.hand_number for r in records[1:]] and queries.hands_recorded(db, "codec") == 3


def test_the_writer_remembers_hand_numbers_as_bits() -> None:
    """MatchWriter's record of the hands it stored: a set's answers at an eighth of a byte a hand."""
    import random
    import sys

    rng = random.Random(5)
    numbers = {rng.randrange(100_000) for _ in range(30_000)} | {0, 99_999, -3, HandNumbers.BITS + 7}
    kept = HandNumbers(numbers)
    for n in [*numbers, *range(-5, 100_005), HandNumbers.BITS + 8, 2**70, "7"]:
        assert (n in kept) == (n in numbers), n
    assert sys.getsizeof(kept._bits) < 3 * 100_000 // 8 < sys.getsizeof(numbers) // 20


def test_the_executor_key_is_checked(tmp_path: Path) -> None:
    base = {"name": "cup", "bots": [{"name": "a", "command": "x"}, {"name": "b", "command": "y"}]}
    assert TournamentConfig.from_dict(base, tmp_path).executor is ExecutorKind.LOCAL
    assert TournamentConfig.from_dict({**base, "executor": "ray"}, tmp_path).executor is ExecutorKind.RAY
    with pytest.raises(TournamentError, match=r"executor = 'spark': expected one of 'local', 'ray'"):
        TournamentConfig.from_dict({**base, "executor": "spark"}, tmp_path)
    with pytest.raises(TournamentError, match="workers = 0"):
        TournamentConfig.from_dict({**base, "workers": 0}, tmp_path)


class Flaky:
    """An executor whose worker dies after five hands of a match's first run (``WorkerLost``), in-process; between
    the runs ``between`` may change the database behind the runner's back."""

    kind = ExecutorKind.LOCAL

    def __init__(self, between: Callable[[], None] = lambda: None) -> None:
        self.runs = 0
        self.between = between

    def matches_at_once(self, asked: int | None) -> int:
        return 1

    async def play(self, job: MatchJob, sink: HandSink, control: MatchControl | None = None) -> MatchResult:
        self.runs += 1
        seats = [(b.name, FunctionSeat(b.name, caller)) for b in job.bots]
        match = Match(job.spec, seats, [sink], recorded=job.recorded, history=job.history)
        if self.runs == 1:
            match.on_hand = lambda _: match.stop() if match.hands_played >= 5 else None
            await match.run()
            self.between()
            raise WorkerLost(f"the worker playing {job.spec.match_id} died")
        return await match.run()

    def close(self) -> None:
        """Nothing to let go of."""


def _cup(tmp_path: Path) -> tuple[TournamentConfig, Database]:
    config = TournamentConfig("cup", (BotSpec("a", "x"), BotSpec("b", "y")), seed="cup-seed", hands=12)
    return config, Database(tmp_path / "cup.db")


def test_a_match_whose_worker_died_is_played_on_from_its_verified_record(tmp_path: Path) -> None:
    config, db = _cup(tmp_path)
    executor = Flaky()
    [result] = asyncio.run(run_tournament(config, Ledger(db), executor=executor))
    assert executor.runs == 2 and result.reason == "completed"
    [match_id] = matches_of(config)
    assert queries.recorded_hands(db, match_id) == set(range(12)) and verify_match(db, match_id).ok


def test_a_match_whose_record_was_edited_while_its_worker_was_lost_is_not_played_on(tmp_path: Path) -> None:
    config, db = _cup(tmp_path)
    [match_id] = matches_of(config)

    def delete_a_hand() -> None:  # the second hand written is gone when the runner comes back to the match
        conn = sqlite3.connect(db.path)
        number = conn.execute("SELECT hand_number FROM hands WHERE chain_index = 2").fetchone()[0]
        for table in ("actions", "hand_seats", "violations", "hands"):
            conn.execute(f"DELETE FROM {table} WHERE hand_number = ?", (number,))
        conn.commit()
        conn.close()

    executor = Flaky(delete_a_hand)
    with pytest.raises(RecordsDamaged, match="the hand written 2nd is not there"):
        asyncio.run(run_tournament(config, Ledger(db), executor=executor))
    assert executor.runs == 1 and queries.hands_recorded(db, match_id) == 4  # nothing played again
