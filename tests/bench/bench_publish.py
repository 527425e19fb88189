"""A 20,000-hand match published (the size the issue about a 6.7 MB match page was about): the time to publish it,
its pages of the hand table and its largest file, beside a 3,000-hand match (the size tests/publish/test_long_match.py
publishes). The hands are played in-process by two bots that fold to any bet, the fastest hands there are.

``python -m tests.bench.bench_publish [HANDS]`` (default 20,000). Prints; never asserts.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from arena.publish import publish
from arena.records.db import Database
from tests.publish.helpers import folder, play


def published(scratch: Path, hands: int) -> None:
    """Play and publish one match of ``hands`` hands; print what it took and what it made."""
    db = Database(scratch / f"long-{hands}.db")
    started = time.perf_counter()
    play(db, "long", [("folds-a", "", folder), ("folds-b", "", folder)], hands=hands)
    played_s = time.perf_counter() - started
    out = scratch / f"site-{hands}"
    started = time.perf_counter()
    publish(db, out)
    publish_s = time.perf_counter() - started
    sizes = {p.relative_to(out).as_posix(): p.stat().st_size for p in out.rglob("*") if p.is_file()}
    tables = [name for name in sizes if name == "matches/long.html" or name.startswith("matches/long/hands-")]
    biggest = max(sizes, key=sizes.__getitem__)
    print(f"{hands:>6} hands: played in {played_s:5.1f} s, published in {publish_s:5.1f} s; {len(sizes)} files, "
          f"{len(tables)} pages of the hand table (largest {max(sizes[t] for t in tables) / 1000:.0f} KB), "
          f"largest file {biggest} {sizes[biggest] / 1000:.0f} KB, chip graph "
          f"{sizes['plots/matches/long.svg'] / 1000:.0f} KB")


def main() -> None:
    hands = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 20_000
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as scratch:
        published(Path(scratch), 3_000)
        published(Path(scratch), hands)


if __name__ == "__main__":
    main()
