"""The published site in a real browser: Debian's headless Chromium opens it from file:// and we check what a
person would see (title, bots in rank order, formatted numbers, plots that decode) and that a screenshot of the
page is not blank. The browser: tests/publish/chromium.py, through the ``chromium`` fixture (tests/conftest.py),
skipped only on a developer machine without /usr/bin/chromium; in CI (``CI`` set) a missing browser is a failure.
"""

from __future__ import annotations

import json
import shutil
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
from matplotlib.image import imread

from arena.publish import formatting
from arena.ratings.leaderboard import Row
from arena.ratings.trueskill_ratings import TrueSkill
from tests.publish.chromium import Chromium
from tests.publish.conftest import TITLE, Site
from tests.publish.helpers import EVIL


class Visible(HTMLParser):
    """From a serialized DOM: the title, the first h1, the leaderboard table's body cells, the images, and
    whether any script element exists.
    """

    def __init__(self, table_id: str = "leaderboard-table") -> None:
        super().__init__()
        self.table_id = table_id
        self.title = ""
        self.h1 = ""
        self.rows: list[list[str]] = []
        self.images: list[dict[str, str | None]] = []
        self.scripts = 0
        self._where: str | None = None
        self._in_table = False
        self._in_body = False
        self._cell: list[str] | None = None
        self._h1_done = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag == "script":
            self.scripts += 1
        elif tag == "title":
            self._where = "title"
        elif tag == "h1" and not self._h1_done:
            self._where = "h1"
        elif tag == "img":
            self.images.append(attributes)
        elif tag == "table" and attributes.get("id") == self.table_id:
            self._in_table = True
        elif self._in_table and tag == "tbody":
            self._in_body = True
        elif self._in_body and tag == "tr":
            self.rows.append([])
        elif self._in_body and tag == "td":
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("title", "h1") and self._where == tag:
            self._where = None
            self._h1_done = self._h1_done or tag == "h1"
        elif tag == "td" and self._cell is not None:
            self.rows[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "table" and self._in_table:
            self._in_table = self._in_body = False

    def handle_data(self, data: str) -> None:
        if self._where == "title":
            self.title += data
        elif self._where == "h1":
            self.h1 += data
        if self._cell is not None:
            self._cell.append(data)


def visible(dom: str) -> Visible:
    parser = Visible()
    parser.feed(dom)
    return parser


def expected_row(row: Row) -> list[str]:
    stats = row.stats
    assert stats is not None
    return [
        str(row.rank), row.bot, *(formatting.fixed(row.rating[c.key], c.digits) for c in TrueSkill.columns),
        formatting.count(row.rating_games) + (" prov." if row.provisional else ""),
        formatting.signed(row.win_rate.mean), formatting.ci(row.win_rate),
        *((formatting.signed(row.allin.mean), formatting.ci(row.allin)) if row.allin else (formatting.DASH,) * 2),
        *((formatting.signed(row.aivat.mean), formatting.ci(row.aivat)) if row.aivat else (formatting.DASH,) * 2),
        formatting.count(row.win_rate.hands), formatting.count(row.win_rate.sessions), formatting.percent(stats.vpip),
        formatting.percent(stats.pfr), formatting.fixed(stats.aggression), formatting.count(stats.violations),
        row.flag_text or formatting.DASH,
    ]


def test_index_as_a_person_sees_it(site: Site, chromium: Chromium) -> None:
    dom = chromium.dump_dom((site.out / "index.html").resolve().as_uri())
    page = visible(dom)
    assert page.title == TITLE and page.h1 == TITLE
    assert page.scripts == 0
    board = site.result.board
    names = [cells[1] for cells in page.rows]
    assert names == [row.bot for row in board.rows] and EVIL in names  # rank order; the evil name as plain text
    assert page.rows == [expected_row(row) for row in board.rows]
    for cells in page.rows:  # numbers as a person reads them: minus signs, fixed decimals, intervals
        assert all(cell and "nan" not in cell.lower() and "inf" not in cell.lower() for cell in cells)
        assert cells[6][0] in "+−" and (cells[7] == formatting.DASH or cells[7].startswith("["))
    sources = {str(image.get("src")) for image in page.images}
    assert {"plots/rating.svg", "plots/winrate.svg", "plots/crosstable.svg"} <= sources
    assert all(image.get("alt") for image in page.images)


def test_bot_page_shows_the_name_as_text(site: Site, chromium: Chromium) -> None:
    dom = chromium.dump_dom((site.out / "bots" / "script-alert-1-script.html").resolve().as_uri())
    page = Visible("bot-row")
    page.feed(dom)
    assert page.h1 == EVIL and page.scripts == 0
    assert page.title == f"{EVIL} · {TITLE}"
    assert [cells[1] for cells in page.rows] == [EVIL]
    assert any(str(image.get("src")).endswith("plots/bots/script-alert-1-script.svg") for image in page.images)


def test_plots_decode_in_the_browser(site: Site, chromium: Chromium, tmp_path: Path) -> None:
    copy = tmp_path / "site"
    shutil.copytree(site.out, copy)
    svgs = sorted(p.relative_to(copy).as_posix() for p in copy.rglob("*.svg"))
    assert len(svgs) == 10  # three site plots, three bots, four matches
    images = "".join(f'<img src="{svg}">' for svg in svgs)
    (copy / "probe.html").write_text(
        f'<!doctype html><html><body><pre id="out">pending</pre>{images}<script>'
        'window.addEventListener("load", () => { document.getElementById("out").textContent = JSON.stringify('
        '[...document.images].map(i => [i.getAttribute("src"), i.naturalWidth, i.naturalHeight])); });'
        "</script></body></html>",
        encoding="utf-8",
    )
    dom = chromium.dump_dom((copy / "probe.html").as_uri())
    start, end = dom.index('<pre id="out">') + len('<pre id="out">'), dom.index("</pre>")
    sizes = json.loads(dom[start:end])
    assert [s[0] for s in sizes] == svgs
    for src, width, height in sizes:
        assert width > 200 and height > 100, f"{src} did not render ({width}x{height})"


def test_screenshot_is_not_blank(site: Site, chromium: Chromium, tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    chromium.screenshot((site.out / "index.html").resolve().as_uri(), shot, (1280, 2000))
    assert shot.is_file() and shot.stat().st_size > 20_000
    pixels = np.asarray(imread(shot))[..., :3]
    assert pixels.shape[:2] == (2000, 1280)
    assert float(pixels.std()) > 0.05  # not one flat colour
    ink = (pixels.min(axis=2) < 0.9).mean()
    assert 0.03 < ink < 0.9, f"{ink:.1%} of the page is not background"
    assert float(pixels[:30].mean()) < 0.3  # the dark header: the stylesheet was loaded
    colours = np.unique((pixels[::4, ::4] * 15).round().reshape(-1, 3), axis=0)
    assert len(colours) > 40  # text, links, plots: many colours
