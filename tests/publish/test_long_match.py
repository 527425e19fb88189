"""A long match, played in-process by two fast bots, publishes in files that do not grow with it: its hand table in
pages of ``HANDS_PER_PAGE`` rows (every hand on exactly one, linked to the viewer), its hands in data files of a
block of hand numbers each (every hand in exactly one), and a chip graph drawn at a bounded number of points.

The bounds are made small here (a page of 50 rows, a data file of 100 hands, a graph of 100 points) so that 600
hands need all three; at their real sizes (500 rows, 1,000 hands, 1,500 points) ``make bench`` publishes 3,000 and
100,000 hands (tests/bench/bench_publish.py) and prints the bytes a hand and the files a match.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from arena.publish import plots, publish, site
from arena.publish.match_data import CALLBACK
from arena.records import queries
from arena.records.db import Database
from tests.publish.helpers import folder, play
from tests.publish.test_viewer_replay import read_block

HANDS = 600
ROWS = 50
BLOCK = 100
POINTS = 100


def test_a_long_match_publishes_in_files_that_do_not_grow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(site, "HANDS_PER_PAGE", ROWS)
    monkeypatch.setattr(plots, "MAX_POINTS", POINTS)
    db = Database(tmp_path / "long.db")
    play(db, "long", [("folds-a", "", folder), ("folds-b", "", folder)], hands=HANDS)  # the fastest hands there are
    assert queries.hands_recorded(db, "long") == HANDS
    out = tmp_path / "site"
    result = publish(db, out, block_hands=BLOCK)
    tables = [out / "matches" / "long.html", *sorted((out / "matches" / "long").glob("hands-*.html"))]
    assert len(tables) == HANDS // ROWS
    sizes = [len(page.read_bytes()) for page in tables]
    assert max(sizes) - min(sizes) < 10_000  # the first holds the match's facts, the others only their rows
    linked: list[int] = []
    for page in tables:
        text = page.read_text(encoding="utf-8")
        linked += [int(n) for n in re.findall(r'<a href="(?:\.\./)+hand\.html#long/(\d+)">', text)]
        assert text.count('class="pager"') == 2  # above and below the table
    assert sorted(linked) == list(range(HANDS))  # every hand on exactly one page, linked to the viewer
    first = (out / "matches" / "long.html").read_text(encoding="utf-8")
    assert f'href="long/hands-{HANDS // ROWS}.html#hands"' in first  # the last page
    data = sorted((out / "matches" / "long").glob("data-*.js"))
    assert len(data) == HANDS // BLOCK
    carried = [int(line.split("|", 1)[0]) for path in data for line in read_block(path)["hands"]]
    assert sorted(carried) == list(range(HANDS))  # every hand in exactly one data file
    assert all(path.read_text(encoding="utf-8").startswith(f"{CALLBACK}(") for path in data)
    data_bytes = sum(path.stat().st_size for path in data) / HANDS
    table_bytes = sum(page.stat().st_size for page in tables) / HANDS
    assert data_bytes < 100 and table_bytes < 300, (data_bytes, table_bytes)  # a folded hand's: its page was 12 KB
    assert sum(1 for f in result.files if "long" in f) == len(tables) + len(data) + 1  # and the chip graph
    assert 'src="../plots/matches/long.svg"' in first
    svg = (out / "plots" / "matches" / "long.svg").read_text(encoding="utf-8")
    lines = re.findall(r'<polyline points="([^"]*)"', svg)
    assert lines and all(len(points.split()) == POINTS for points in lines), [len(p.split()) for p in lines]
