"""The match writer stores the hands that its tables finish in one turn of the loop in one transaction
(``MatchWriter``, ``LedgerEntry.hands_finished``): the same records as one transaction a hand, and every hand
committed before any later sink or any bot hears of it."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import pytest

from arena.engine import Action, ActionKind
from arena.records import RecordsDamaged, queries
from arena.records.db import Database
from arena.records.ledger import Ledger, LedgerEntry
from arena.records.verify import verify_match
from arena.referee import Decision, FunctionSeat, HandRecord, Match, MatchSpec
from arena.runner.bots import BotSpec
from arena.runner.executor import MatchWriter

TABLES = 8
HANDS = 96


def caller(decision: Decision) -> Action:
    legal = decision.view.legal
    assert legal is not None
    return Action(ActionKind.CALL) if legal.call_amount else Action(ActionKind.CHECK)


def committed_hands(path: Path, match_id: str) -> set[int]:
    """The hands another connection sees: only what is committed."""
    with sqlite3.connect(path) as other:
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
    writer = MatchWriter([entry])
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
        asyncio.run(Match(spec, seats, [MatchWriter([entry])]).run())  # type: ignore[arg-type]
    assert all(committed for _, committed in heard)
    assert queries.hands_recorded(db, "failing") == len(committed_hands(path, "failing")) < HANDS


def test_outside_a_loop_or_at_one_table_a_hand_is_stored_at_once(tmp_path: Path) -> None:
    """Called from a thread with no loop, or told its match plays one table at a time (``together=False``: no other
    table's hand can join it), the writer stores each hand before it returns."""
    db = Database(tmp_path / "sync.db")
    records: list[HandRecord] = []
    for name in ("sync", "one-table"):
        spec = MatchSpec(name, "group-commit-seed", 4)
        asyncio.run(Match(spec, [(n, FunctionSeat(n, caller)) for n in ("a", "b")], on_hand=records.append).run())
    sync, one_table = records[:4], records[4:]
    writer = MatchWriter([Ledger(db).open(MatchSpec("sync", "group-commit-seed", 4),
                                          [BotSpec("a", "", "1"), BotSpec("b", "", "1")])])
    for record in sync:
        assert writer.hand_finished(record) is None
        assert record.hand_number in committed_hands(tmp_path / "sync.db", "sync")
    alone = MatchWriter([Ledger(db).open(MatchSpec("one-table", "group-commit-seed", 4),
                                         [BotSpec("a", "", "1"), BotSpec("b", "", "1")])], together=False)

    async def in_a_loop() -> None:
        for record in one_table:
            assert alone.hand_finished(record) is None
            assert record.hand_number in committed_hands(tmp_path / "sync.db", "one-table")

    asyncio.run(in_a_loop())
