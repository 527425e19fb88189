"""The league's live site shows hands with the published site's one viewer, read from the database through its
HTTP API (``/api/hands/<match>/<block>.js``): it writes no data file. A host's site runs in this process over a
database of league matches played in-process by function bots (one still running); Chromium follows a hand's
link from its match's page and the viewer shows what was recorded; the API shows of the running match what its
pages show (no hidden card, no decision comment), and names what it does not have.
"""

from __future__ import annotations

import asyncio
import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from arena.engine import EventKind
from arena.league.host import LeagueHost
from arena.league.settings import LeagueConfig
from arena.league.web import LeagueSite
from arena.publish import match_data
from arena.publish.match_data import CALLBACK
from arena.records import queries
from arena.records.db import Database
from arena.records.phh_sink import decision_comments
from arena.referee import MatchKind
from tests.publish import browser
from tests.publish.browser import parse_dom
from tests.publish.chromium import Chromium
from tests.publish.helpers import caller, commenting, folder, gambler, play, raiser
from tests.publish.test_hand_viewer import on_screen, recorded

LEAGUE = "lg"
SAID = "folding my seven-deuce"  # the folder's comment on every action: not to be seen while lg-2 runs


@dataclass
class Live:
    base: str
    site: LeagueSite
    db: Database


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    """A league database of one finished and one running match, and its host's live site on 127.0.0.1."""
    root = tmp_path_factory.mktemp("live")
    db = Database(root / "league.db")
    play(db, "lg-1", [("caller", "", caller), ("raiser", "", raiser)], hands=12, kind=MatchKind.LEAGUE, event=LEAGUE)
    play(db, "lg-2", [("gambler", "", gambler(3)), ("folder", "", commenting(folder, [SAID]))], hands=10,
         finish=False, stop_after=5,
         kind=MatchKind.LEAGUE, event=LEAGUE)
    config = LeagueConfig.from_dict({"name": LEAGUE, "grpc": "127.0.0.1:0", "http": "off"}, root)
    site = LeagueSite(LeagueHost(config, db))
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    port = asyncio.run_coroutine_threadsafe(site.start("127.0.0.1", 0), loop).result(120)
    try:
        yield Live(f"http://127.0.0.1:{port}/", site, db)
    finally:
        asyncio.run_coroutine_threadsafe(site.stop(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


def get(live: Live, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(live.base + path, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def test_the_live_viewer_reads_hands_from_the_database(live: Live, chromium: Chromium) -> None:
    assert sorted(p.name for p in live.site.folder.rglob("*.js")) == ["hand.js"]  # the viewer, no data file
    got = browser.probe(chromium, live.base, live.site.folder, "probe-live.html",
                        '<iframe src="matches/lg-1.html" width="1200" height="900"></iframe>',
                        'const link = [...f[0].contentDocument.querySelectorAll("table.hands a")]'
                        '.find(a => a.textContent === "5"); link.click(); const d = await shown(f[0], "Hand 5");'
                        ' const html = d.documentElement.outerHTML; key(f[0], "n"); const next = await shown(f[0],'
                        ' "Hand 6"); return {html, source: d.getElementById("hand-viewer").getAttribute("data-source"),'
                        ' next: next.getElementById("hand-title").textContent};')
    assert got["source"] == "api/hands/{slug}/{block}.js" and got["next"] == "Hand 6"
    assert on_screen(parse_dom(got["html"])) == recorded(live.db, "lg-1", 5)


def block(text: str) -> dict[str, Any]:
    assert text.startswith(f"{CALLBACK}(") and text.endswith(");\n")
    data: dict[str, Any] = json.loads(text[len(CALLBACK) + 1:-3])
    return data


def test_the_api_shows_a_running_match_as_its_pages_do(live: Live) -> None:
    status, text = get(live, "api/hands/lg-2/0.js")
    assert status == 200
    data = block(text)
    status, raw = get(live, "api/hands/lg-2/0.json")
    assert status == 200 and json.loads(raw) == data
    records = list(queries.hand_records(live.db, "lg-2"))
    assert len(records) == 5 and not data["finished"]
    assert [int(line.split("|", 1)[0]) for line in data["hands"]] == [0, 1, 2, 3]  # the fifth's deal is in play
    hidden = 0
    for record, line in zip(records, data["hands"], strict=False):
        fields = line.split("|")
        assert len(fields) == 7  # no estimate while it runs
        shown = {e.seat for e in record.events if e.kind is EventKind.SHOW}
        hidden += sum(fields[5][4 * s:4 * s + 4] == "????" for s in range(2) if s not in shown)
    assert hidden > 0  # the folder's cards stay secret while the match runs
    assert all(decision_comments(r) for r in records[:4]) and "seven-deuce" not in text  # and so do its comments
    assert SAID in match_data.pack_hand(records[0], True, 10_000)  # which the hand carries once the match is over
    assert block(get(live, "api/hands/lg-1/0.js")[1])["finished"]  # the finished one: every card
    for path, message in (("api/hands/nope/0.js", "no match 'nope'"), ("api/hands/lg-1/x.js", "no block 'x.js'"),
                          ("api/hands/lg-1/7.js", "no hand shown in block 7")):
        status, text = get(live, path)
        assert status == 404 and message in text, (path, status, text)
