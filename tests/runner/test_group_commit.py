"""The match writer stores the hands that its tables finish in one turn of the loop in one transaction
(``MatchWriter``, ``LedgerEntry.hands_finished``): the same records as one transaction a hand, and every hand
committed before any later sink or any bot hears of it."""

from __future__ import annotations

import asyncio
import contextlib
import random
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import pytest

from arena.engine import Action, ActionKind
from arena.records import RecordsDamaged, queries
from arena.records.db import Database
from arena.records.ledger import Ledger, LedgerEntry
from arena.records.verify import verify_match
from arena.referee import Decision, FunctionSeat, HandRecord, Match, MatchResult, MatchSpec
from arena.runner.bots import BotSpec
from arena.runner.executor import MatchControl, MatchJob, MatchWriter
from arena.runner.play import MatchRun

TABLES = 8
HANDS = 96


def caller(decision: Decision) -> Action:
    legal = decision.view.legal
    assert legal is not None
    return Action(ActionKind.CALL) if legal.call_amount else Action(ActionKind.CHECK)


def committed_hands(path: Path, match_id: str) -> set[int]:
    """The hands another connection sees: only what is committed."""
    with contextlib.closing(sqlite3.connect(path)) as other:  # sqlite3's own context manager does not close it
        return {n for (n,) in other.execute("SELECT hand_number FROM hands WHERE match_id = ?", (match_id,))}


class Witness(FunctionSeat):
    """A seat that notes, as it hears each hand's end, whether that hand was committed by then."""

    def __init__(self, name: str, path: Path, match_id: str, heard: list[tuple[int, bool]]) -> None:
        super().__init__(name, caller)
        self.path, self.match_id, self.heard = path, match_id, heard

    async def hand_finished(self, record: HandRecord, seat: int) -> None:
        self.heard.append((record.hand_number, record.hand_number in committed_hands(self.path, self.match_id)))


class LaterSink:
    """A sink after the writer (a spectator feed): it notes whether each hand was committed when it heard of it."""

    def __init__(self, path: Path, match_id: str) -> None:
        self.path, self.match_id = path, match_id
        self.heard: list[tuple[int, bool]] = []

    def hand_finished(self, record: HandRecord) -> None:
        self.heard.append((record.hand_number, record.hand_number in committed_hands(self.path, self.match_id)))


def play(tmp_path: Path, name: str) -> tuple[Database, LedgerEntry, list[int], LaterSink, list[tuple[int, bool]]]:
    """A match of ``HANDS`` hands on ``TABLES`` tables, written by a MatchWriter: its database, ledger entry, the
    hands in each of its transactions, and what the sink after the writer and the bots heard."""
    path = tmp_path / f"{name}.db"
    db = Database(path)
    spec = MatchSpec(name, "group-commit-seed", HANDS, tables=TABLES)
    entry = Ledger(db).open(spec, [BotSpec("a", "", "1"), BotSpec("b", "", "1")])
    sizes: list[int] = []
    together = entry.hands_finished

    def counted(records: Sequence[HandRecord]) -> None:
        sizes.append(len(records))
        together(records)

    entry.hands_finished = counted  # type: ignore[method-assign]
    later = LaterSink(path, name)
    heard: list[tuple[int, bool]] = []
    seats = [(n, Witness(n, path, name, heard)) for n in ("a", "b")]
    writer = MatchWriter([entry], together=True)
    asyncio.run(Match(spec, seats, [writer, later]).run())  # type: ignore[arg-type]
    return db, entry, sizes, later, heard


def test_hands_finished_together_are_stored_in_one_transaction(tmp_path: Path) -> None:
    """Eight tables finish their hands in the same turns: fewer transactions than hands, several hands in some,
    every hand stored once, and the record as one transaction a hand makes it (the chain verifies; each hand read
    back is the hand played)."""
    db, entry, sizes, _, _ = play(tmp_path, "together")
    assert sum(sizes) == HANDS == queries.hands_recorded(db, "together")
    assert len(sizes) < HANDS and max(sizes) > 1
    assert entry.written == HANDS
    assert verify_match(db, "together").ok
    alone = Database(tmp_path / "alone.db")
    spec = MatchSpec("together", "group-commit-seed", HANDS, tables=TABLES)
    one_by_one = Ledger(alone).open(spec, [BotSpec("a", "", "1"), BotSpec("b", "", "1")])
    records = list(queries.hand_records(db, "together"))
    for record in sorted(records, key=lambda r: r.hand_number):
        one_by_one.hand_finished(record)
    assert list(queries.hand_records(alone, "together")) == sorted(records, key=lambda r: r.hand_number)


def test_no_later_sink_and_no_bot_hears_of_a_hand_before_it_is_committed(tmp_path: Path) -> None:
    """What another connection to the database sees when the sink after the writer, and each bot, hears of a hand:
    the hand, committed (a crash then loses no hand that anything outside the referee has seen the end of)."""
    _, _, sizes, later, heard = play(tmp_path, "durable")
    assert max(sizes) > 1  # batched: the check is about hands that waited for others
    assert len(later.heard) == HANDS and all(committed for _, committed in later.heard)
    assert len(heard) == 2 * HANDS and all(committed for _, committed in heard)


def test_a_write_that_fails_fails_the_match_and_stores_none_of_its_hands(tmp_path: Path) -> None:
    """A transaction refused (a damaged file) ends the match with the error, as a hand written alone did, for every
    table waiting on it; none of its hands is stored, and no bot heard of them."""
    path = tmp_path / "failing.db"
    db = Database(path)
    spec = MatchSpec("failing", "group-commit-seed", HANDS, tables=TABLES)
    entry = Ledger(db).open(spec, [BotSpec("a", "", "1"), BotSpec("b", "", "1")])
    together = entry.hands_finished
    calls = [0]

    def fails_the_third(records: Sequence[HandRecord]) -> None:
        calls[0] += 1
        if calls[0] == 3:
            raise RecordsDamaged("cannot be written (disk I/O error)")
        together(records)

    entry.hands_finished = fails_the_third  # type: ignore[method-assign]
    heard: list[tuple[int, bool]] = []
    seats = [(n, Witness(n, path, "failing", heard)) for n in ("a", "b")]
    with pytest.raises(RecordsDamaged, match="disk I/O error"):
        asyncio.run(Match(spec, seats, [MatchWriter([entry], together=True)]).run())  # type: ignore[arg-type]
    assert all(committed for _, committed in heard)
    assert queries.hands_recorded(db, "failing") == len(committed_hands(path, "failing")) < HANDS


def test_outside_a_loop_or_at_one_table_a_hand_is_stored_at_once(tmp_path: Path) -> None:
    """Called from a thread with no loop, or not told its match plays several tables at once (``together``: no
    other table's hand can join it), the writer stores each hand before it returns."""
    db = Database(tmp_path / "sync.db")
    records: list[HandRecord] = []
    for name in ("sync", "one-table"):
        spec = MatchSpec(name, "group-commit-seed", 4)
        asyncio.run(Match(spec, [(n, FunctionSeat(n, caller)) for n in ("a", "b")], on_hand=records.append).run())
    sync, one_table = records[:4], records[4:]
    writer = MatchWriter([Ledger(db).open(MatchSpec("sync", "group-commit-seed", 4),
                                          [BotSpec("a", "", "1"), BotSpec("b", "", "1")])], together=True)
    for record in sync:
        assert writer.hand_finished(record) is None
        assert record.hand_number in committed_hands(tmp_path / "sync.db", "sync")
    alone = MatchWriter([Ledger(db).open(MatchSpec("one-table", "group-commit-seed", 4),
                                         [BotSpec("a", "", "1"), BotSpec("b", "", "1")])])

    async def in_a_loop() -> None:
        for record in one_table:
            assert alone.hand_finished(record) is None
            assert record.hand_number in committed_hands(tmp_path / "sync.db", "one-table")

    asyncio.run(in_a_loop())


class _Caught(Exception):
    """Raised by ``Catcher`` once it has the writer."""


class Catcher:
    """An executor that only keeps the writer a match run gives it."""

    writer: MatchWriter | None = None

    async def play(self, job: MatchJob, writer: MatchWriter, control: MatchControl | None = None) -> MatchResult:
        self.writer = writer
        raise _Caught


@pytest.mark.parametrize(("recorded", "tables", "together"), [(True, 8, True), (False, 8, False), (True, 1, False)])
def test_a_match_run_writes_together_only_what_a_database_commits(tmp_path: Path, recorded: bool, tables: int,
                                                                   together: bool) -> None:
    """Several tables' hands wait for one transaction only when the match is recorded in a database: recorded
    nowhere, nothing is gained by waiting (each hand cost its table a suspension and the loop a turn: 8% of a
    64-table match's wall time), and on one table no other hand can join it."""
    ledger = Ledger(Database(tmp_path / "r.db") if recorded else None)
    job = MatchJob(MatchSpec("run", "group-commit-seed", 16, tables=tables), (BotSpec("a", "", "1"),
                                                                             BotSpec("b", "", "1")))
    catcher = Catcher()
    with pytest.raises(_Caught):
        asyncio.run(MatchRun(ledger, job).play(catcher))
    assert catcher.writer is not None and catcher.writer.together is together


def test_the_match_s_live_figures_count_a_hand_only_once_it_is_stored() -> None:
    """The spectator service shows each bot's net chips as the match goes (``Participant.net``): when a hand comes
    to the writer, and while it is being stored (its table waiting), they hold the hands stored before it and not
    this one; once it is stored they count it."""
    spec = MatchSpec("live", "group-commit-seed", 24)
    rng = random.Random(3)

    def sometimes_folds(decision: Decision) -> Action:
        legal = decision.view.legal
        assert legal is not None
        return Action(ActionKind.FOLD) if legal.call_amount and rng.random() < 0.3 else caller(decision)

    class Storing:
        """A writer that takes a turn of the loop to store each hand, noting the live figures as it goes."""

        def __init__(self) -> None:
            self.stored = [0, 0]  # what the hands stored so far add up to, per participant
            self.seen: list[tuple[list[int], list[int], list[int]]] = []  # live when a hand came, while stored; stored

        def hand_finished(self, record: HandRecord) -> asyncio.Future[None]:
            came = [p.net for p in match.participants]
            done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

            def store() -> None:
                self.seen.append((came, [p.net for p in match.participants], list(self.stored)))
                for seat, participant in enumerate(record.seating):
                    self.stored[participant] += record.payoffs[seat]
                done.set_result(None)

            asyncio.get_running_loop().call_soon(store)
            return done

    writer = Storing()
    seats = [("a", FunctionSeat("a", caller)), ("b", FunctionSeat("b", sometimes_folds))]
    match = Match(spec, seats, [writer])
    asyncio.run(match.run())
    assert len(writer.seen) == 24
    for came, storing, stored in writer.seen:
        assert came == storing == stored
    assert [p.net for p in match.participants] == writer.stored != [0, 0]


class FailsOn:
    """A sink after the ledger (a hand-history writer) that fails on one hand."""

    def __init__(self, number: int) -> None:
        self.number = number
        self.got: list[int] = []

    def hand_finished(self, record: HandRecord) -> None:
        if record.hand_number == self.number:
            raise OSError("no space left on device")
        self.got.append(record.hand_number)


def test_a_later_sink_that_fails_on_one_hand_fails_that_table_and_those_after_it_only(tmp_path: Path) -> None:
    """Three tables' hands stored together, and a sink after the ledger that fails on the second: the first hand
    goes on to the callback and its table on; the second's and the third's tables fail with the error, their hands
    committed (the ledger came first) and counted as written."""
    spec = MatchSpec("later", "group-commit-seed", 3)
    records: list[HandRecord] = []
    asyncio.run(Match(spec, [(n, FunctionSeat(n, caller)) for n in ("a", "b")], on_hand=records.append).run())
    records = records[:3]
    db = Database(tmp_path / "later.db")
    entry = Ledger(db).open(spec, [BotSpec("a", "", "1"), BotSpec("b", "", "1")])
    failing = FailsOn(records[1].hand_number)
    heard: list[int] = []
    writer = MatchWriter([entry, failing], on_hand=lambda r: heard.append(r.hand_number), together=True)

    async def three_tables() -> list[BaseException | None]:
        waits = [writer.hand_finished(record) for record in records]
        outcomes = await asyncio.gather(*(w for w in waits if w is not None), return_exceptions=True)
        return [o if isinstance(o, BaseException) else None for o in outcomes]

    first, second, third = asyncio.run(three_tables())
    assert first is None and isinstance(second, OSError) and second is third
    assert failing.got == heard == [records[0].hand_number]
    assert writer.written == 3 and queries.hands_recorded(db, "later") == 3


def test_a_failure_whose_tables_are_all_gone_still_reaches_the_loop(tmp_path: Path) -> None:
    """A transaction that fails after every table waiting on it was stopped: the error goes to the loop's
    exception handler (logged), not nowhere."""
    spec = MatchSpec("gone", "group-commit-seed", 1)
    records: list[HandRecord] = []
    asyncio.run(Match(spec, [(n, FunctionSeat(n, caller)) for n in ("a", "b")], on_hand=records.append).run())

    class Refuses:
        def hands_finished(self, batch: Sequence[HandRecord]) -> None:
            raise RecordsDamaged("cannot be written (disk I/O error)")

        def hand_finished(self, record: HandRecord) -> None:
            self.hands_finished([record])

    writer = MatchWriter([Refuses()], together=True)
    reported: list[BaseException] = []

    async def stopped_table() -> None:
        asyncio.get_running_loop().set_exception_handler(lambda _, context: reported.append(context["exception"]))
        waiting = writer.hand_finished(records[0])
        assert waiting is not None
        waiting.cancel()  # its table was stopped before the turn ended
        await asyncio.sleep(0)

    asyncio.run(stopped_table())
    assert len(reported) == 1 and "disk I/O error" in str(reported[0])
