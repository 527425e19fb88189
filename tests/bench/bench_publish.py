"""The published site's size and publishing time as a match grows: the bytes a hand (the whole site over its hands),
the files a match, the time to publish and to publish again (a league's periodic publish: a finished match's files
are kept, so nothing of it is written again).

Two matches: 3,000 hands, the size of ``make demo``'s site, played by two seeded random bots (raises, calls, folds
and showdowns, as the demo's bots play); and 100,000 hands played by two bots that fold to any bet, the fastest hands
there are (the random bots take about four times as long to play). A hand's own bytes (its row in the match's table
and its line of data) are printed for both: the random bots' is what a realistic hand costs however long the match.

``python -m tests.bench.bench_publish [HANDS] [random]`` (default 100,000 hands of folds; ``random``: played by the
random bots). Prints; never asserts.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from arena.engine import Action
from arena.publish import publish
from arena.records.db import Database
from arena.referee import Decision
from tests.publish.helpers import folder, gambler, play

Strategy = Callable[[Decision], Action]


def published(scratch: Path, hands: int, bots: tuple[Strategy, Strategy], label: str) -> None:
    """Play and publish one match of ``hands`` hands; print what it took and what it made."""
    db = Database(scratch / f"long-{hands}-{label.split()[0]}.db")
    started = time.perf_counter()
    play(db, "long", [("bot-a", "", bots[0]), ("bot-b", "", bots[1])], hands=hands)
    played_s = time.perf_counter() - started
    out = scratch / f"site-{hands}-{label.split()[0]}"
    started = time.perf_counter()
    first = publish(db, out)
    publish_s = time.perf_counter() - started
    started = time.perf_counter()
    again = publish(db, out)
    again_s = time.perf_counter() - started
    sizes = {p.relative_to(out).as_posix(): p.stat().st_size for p in out.rglob("*") if p.is_file()}
    own = [name for name in sizes if name == "matches/long.html" or name.startswith("matches/long/")]
    data = [name for name in own if name.endswith(".js")]
    tables = [name for name in own if name.endswith(".html")]
    total = sum(sizes.values())
    print(f"{hands:>7,} hands ({label}): played in {played_s:6.1f} s; published in {publish_s:6.1f} s "
          f"({1000 * publish_s / hands:.2f} ms a hand), again in {again_s:5.1f} s "
          f"({len(again.reused)} finished match kept, {len(first.files)} files); site {total / 1e6:6.2f} MB in "
          f"{len(sizes)} files: {total / hands:6.0f} bytes a hand, {len(own) + 1} files the match "
          f"({len(tables)} pages of its hand table, {len(data)} data files, its chip graph); a hand's own bytes: "
          f"{sum(sizes[t] for t in tables) / hands:.0f} in the table, {sum(sizes[d] for d in data) / hands:.0f} "
          f"of data; largest file {max(sizes.values()) / 1000:.0f} KB")


def main() -> None:
    hands = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 100_000
    random = "random" in sys.argv[1:]
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as scratch:
        published(Path(scratch), 3_000, (gambler(1), gambler(2)), "random bots, as the demo's")
        published(Path(scratch), 3_000, (folder, folder), "bots that fold to any bet")
        if random:
            published(Path(scratch), hands, (gambler(1), gambler(2)), "random bots, as the demo's")
        else:
            published(Path(scratch), hands, (folder, folder), "bots that fold to any bet")


if __name__ == "__main__":
    main()
