"""A long match, played in-process by two fast bots, publishes as a paginated site: no file over 1 MB (the issue's
complaint was a 6.7 MB match page for 20,000 hands), no page of the hand table larger for a longer match, every
hand on exactly one page of its match's table and with its own viewer page and PHH file, and a chip graph drawn at
a bounded number of points.

3,000 hands are enough to show all of it: six pages of the table (one page for all would be about 650 KB, over
the bound every page must keep), and twice the chip graph's points. The 20,000-hand match itself is published by
``make bench`` (tests/bench/bench_publish.py), which prints its largest file.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from arena.publish import publish
from arena.publish.plots import MAX_POINTS
from arena.publish.site import HANDS_PER_PAGE
from arena.records import queries
from arena.records.db import Database
from tests.publish.helpers import folder, play

HANDS = 3_000
LIMIT = 1_000_000
PAGE_LIMIT = 250_000  # a page of 500 rows: about 110 KB for these hands, 190 KB for busier ones, whatever the length


@pytest.mark.slow
def test_a_long_match_publishes_in_small_pages(tmp_path: Path) -> None:
    assert HANDS >= 6 * HANDS_PER_PAGE and HANDS >= 2 * MAX_POINTS  # long enough to need both bounds
    db = Database(tmp_path / "long.db")
    play(db, "long", [("folds-a", "", folder), ("folds-b", "", folder)], hands=HANDS)  # the fastest hands there are
    assert queries.hands_recorded(db, "long") == HANDS
    out = tmp_path / "site"
    result = publish(db, out)
    sizes = {p.relative_to(out).as_posix(): p.stat().st_size for p in out.rglob("*") if p.is_file()}
    too_big = {name: size for name, size in sizes.items() if size > LIMIT}
    assert not too_big, too_big
    assert sum(1 for f in result.files if f.startswith("matches/long/hand-") and f.endswith(".html")) == HANDS
    assert sum(1 for f in result.files if f.startswith("matches/long/hand-") and f.endswith(".phh")) == HANDS
    tables = [out / "matches" / "long.html", *sorted((out / "matches" / "long").glob("hands-*.html"))]
    assert len(tables) == HANDS // HANDS_PER_PAGE
    linked: list[int] = []
    for page in tables:
        text = page.read_text(encoding="utf-8")
        assert len(text.encode()) < PAGE_LIMIT, page
        linked += [int(n) for n in re.findall(r'<a href="(?:long/)?hand-(\d+)\.html">', text)]
        assert text.count('class="pager"') == 2  # above and below the table
    assert sorted(linked) == list(range(HANDS))  # every hand on exactly one page
    first = (out / "matches" / "long.html").read_text(encoding="utf-8")
    assert f'href="long/hands-{HANDS // HANDS_PER_PAGE}.html#hands"' in first  # the last page
    assert 'src="../plots/matches/long.svg"' in first
    svg = (out / "plots" / "matches" / "long.svg").read_text(encoding="utf-8")
    lines = re.findall(r'<polyline points="([^"]*)"', svg)
    assert lines and all(len(points.split()) == MAX_POINTS for points in lines), [len(p.split()) for p in lines]
