"""What the record's evidence costs (arena.records.evidence): writing a hand with its part digests and its chain link,
beside the same hands written unchained (a match recorded under the old seed-only commitment, the peer); and
checking the chain (arena verify's walk, without the re-deal) beside reading the hands back.

``python -m tests.bench.bench_ledger [HANDS]`` (default 4,000 heads-up hands of a caller against a raiser, played
in-process first). Prints; never asserts.
"""

from __future__ import annotations

import asyncio
import dataclasses
import sys
import tempfile
import time
from pathlib import Path

from arena.records import queries
from arena.records.audit import chain_entries, walk_chain
from arena.records.db import Database
from arena.records.evidence import SEED_ONLY
from arena.records.ledger import Ledger, LedgerEntry
from arena.referee import FunctionSeat, HandRecord, Match, MatchSpec
from arena.runner.bots import BotSpec
from tests.publish.helpers import caller, raiser

BOTS = [BotSpec("caller", ""), BotSpec("raiser", "")]


def played(hands: int) -> list[HandRecord]:
    """A match's finished hands, kept in memory."""
    kept: list[HandRecord] = []

    class Keep:
        def hand_finished(self, record: HandRecord) -> None:
            kept.append(record)

    spec = MatchSpec("bench", "bench-seed", hands)
    asyncio.run(Match(spec, [("caller", FunctionSeat("caller", caller)), ("raiser", FunctionSeat("raiser", raiser))],
                      [Keep()]).run())
    return kept


def write(db: Database, match_id: str, records: list[HandRecord], chained: bool) -> float:
    """Seconds to write every hand through a ledger entry (chained, or as an old seed-only match)."""
    spec = MatchSpec(match_id, "bench-seed", len(records))
    entry = Ledger(db).open(spec, BOTS)
    if not chained:
        entry = LedgerEntry(db, spec, entry.contestants, entry.commitment, SEED_ONLY)
    mine = [dataclasses.replace(r, match_id=match_id) for r in records]
    started = time.perf_counter()
    for record in mine:
        entry.hand_finished(record)
    return time.perf_counter() - started


def main() -> None:
    hands = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 4000
    records = played(hands)
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as scratch:
        times: dict[bool, list[float]] = {False: [], True: []}
        for run in range(4):  # alternately, each into a fresh database: the same disk, the same WAL checkpoints
            for chained_run in (run % 2 == 0, run % 2 == 1):
                fresh = Database(Path(scratch) / f"run{run}-{chained_run}.db")
                times[chained_run].append(write(fresh, "m", records, chained=chained_run))
                fresh.close()
        plain, chained = min(times[False]), min(times[True])
        db = Database(Path(scratch) / "bench.db")
        write(db, "chained", records, chained=True)
        n = len(records)
        print(f"write {n:,} hands, one transaction each (best of two runs each): unchained {1e6 * plain / n:.0f} "
              f"us/hand, chained (8 part digests and a link) {1e6 * chained / n:.0f} us/hand "
              f"(+{100 * (chained - plain) / plain:.0f}%)")
        started = time.perf_counter()
        rows = sum(1 for _ in queries.hand_records(db, "chained"))
        read = time.perf_counter() - started
        started = time.perf_counter()
        entries, _ = chain_entries(db, "chained")
        audit = walk_chain(queries.require(db, "chained").commitment, entries)
        walk = time.perf_counter() - started
        assert not audit.problems and rows == n
        print(f"read the {n:,} hands back as records: {1e6 * read / n:.0f} us/hand; walk the chain (every hand's "
              f"rows digested again, every link): {1e6 * walk / n:.0f} us/hand")
        size = db.path.stat().st_size
        db.close()
        print(f"database: {size / 1e6:.1f} MB ({size / n:.0f} bytes a hand, digests and links included)")


if __name__ == "__main__":
    main()
