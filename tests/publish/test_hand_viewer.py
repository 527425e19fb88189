"""The one hand viewer in headless Chromium, over HTTP and from disk (file://): a hand reached by its link on its
match's page shows what the database recorded (each seat's hole cards, the board, every action, the payoffs and
the AIVAT figures); the keys move to the next and previous hand (loading the next data file when the hand is in
it) and between the seats of a duplicate deal, whose hands stand side by side even across two data files; and a
missing, damaged or foreign data file, or an address that names no hand, is said so in the page.

The sample site's data files hold ten hands each (tests/publish/conftest.py), so its matches span several.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urljoin

import pytest

from arena.cards import format_cards
from arena.publish import formatting
from arena.publish.hands import hand_steps
from arena.ratings.estimators import Estimator, adjusted_payoffs
from arena.ratings.sessions import bot_key
from arena.records import queries
from arena.records.db import Database
from tests.publish import browser
from tests.publish.browser import Element, parse_dom
from tests.publish.chromium import Chromium
from tests.publish.conftest import Site


def broken_copy(site: Path, into: Path) -> Path:
    """A copy of the site with its data damaged in every way the viewer must name."""
    shutil.copytree(site, into)
    matches = into / "matches"
    (matches / "evil-vs-caller" / "data-1.js").unlink()  # missing
    cut = matches / "heads-up-1" / "data-1.js"
    cut.write_text(cut.read_text(encoding="utf-8")[:300], encoding="utf-8")  # cut short: a syntax error
    shutil.copyfile(matches / "three-way" / "data-0.js", matches / "heads-up-1" / "data-2.js")  # another's
    old = matches / "evil-vs-caller" / "data-0.js"
    old.write_text(old.read_text(encoding="utf-8").replace('"format":2,', '"format":99,'), encoding="utf-8")
    damaged = matches / "three-way" / "data-1.js"
    text = damaged.read_text(encoding="utf-8")
    start = text.index('"12|')
    line = text[start:text.index('"', start + 1)]
    twice = re.sub(r" p(\w)(\d+)", lambda m: f" p{m[1]}{2 * int(m[2])}", line, count=1)  # a pot won twice over
    damaged.write_text(text.replace(line, twice), encoding="utf-8")
    return into


@pytest.fixture(scope="module")
def served(site: Site, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The site and a damaged copy of it (``site/``, ``broken/``) served on 127.0.0.1: (base URL, folder)."""
    folder = tmp_path_factory.mktemp("viewer")
    shutil.copytree(site.out, folder / "site")
    broken_copy(site.out, folder / "broken")
    with browser.serve(folder) as base:
        yield base, folder


def recorded(db: Database, match_id: str, number: int) -> dict[str, list[str] | str]:
    """What the viewer should show of a hand, from the database: the reference's action texts (held to the engine
    by tests/publish/test_viewer_replay.py and test_viewer.py), the cards as the site writes them."""
    record = next(queries.hand_records(db, match_id, [number]))
    bots = [bot_key(c.name, c.version) for c in queries.participants(db, match_id)]
    names = [bots[p] for p in record.seating]
    aivat = adjusted_payoffs(db, match_id, Estimator.AIVAT)[number]

    def cards(values: tuple[int, ...]) -> str:
        return "".join(str(c) for c in formatting.cards(format_cards(values)))

    return {"title": f"Hand {number}", "names": names, "holes": [cards(h) for h in record.hole],
            "board": cards(record.board), "actions": [step.text for step in hand_steps(record, names)],
            "payoffs": [formatting.chips(p) for p in record.payoffs],
            "aivat": [formatting.signed(x, 1) for x in aivat]}


def on_screen(page: Element) -> dict[str, list[str] | str]:
    """What the viewer shows of its hand, read from its DOM."""
    rows = page.by_id("results").tags("tr")[1:]
    streets = page.by_id("streets").tags("div", "street")
    return {"title": page.by_id("hand-title").text, "names": [r.tags("td", "name")[0].text for r in rows],
            "holes": [r.tags("td", "hole")[0].text for r in rows],
            "board": streets[-1].tags("span", "board")[0].text if streets[-1].tags("span", "board") else "",
            "actions": [item.text for item in page.by_id("streets").tags("li")],
            "payoffs": [r.tags("td", "payoff")[0].text for r in rows],
            "aivat": [r.tags("td", "aivat")[0].text for r in rows]}


HAND = 11  # three-way's deal 3 is hands 9 to 11: this one is in the second data file, its deal in both


def test_a_hand_linked_from_its_match_page_over_http(site: Site, chromium: Chromium,
                                                      served: tuple[str, Path]) -> None:
    base, folder = served
    got = browser.probe(chromium, base, folder, "probe-link.html",
                        '<iframe src="site/matches/three-way.html" width="1200" height="900"></iframe>',
                        'const link = [...f[0].contentDocument.querySelectorAll("table.hands a")]'
                        f'.find(a => a.textContent === "{HAND}"); const href = link.getAttribute("href"); link.click();'
                        f' const d = await shown(f[0], "Hand {HAND}");'
                        ' await until("its deal", () => d.querySelectorAll("#mirror-list article").length === 3);'
                        ' const deal = [...d.querySelectorAll("#mirror-list article h3")].map(h => h.textContent);'
                        ' return {href, url: f[0].contentWindow.location.href, deal,'
                        ' html: d.documentElement.outerHTML};')
    assert got["href"] == f"../hand.html#three-way/{HAND}" and got["url"] == f"{base}site/hand.html#three-way/{HAND}"
    assert on_screen(parse_dom(got["html"])) == recorded(site.db, "three-way", HAND)
    assert got["deal"] == ["Hand 9, rotation 0", "Hand 10, rotation 1", f"Hand {HAND} (this one), rotation 2"]


def test_a_hand_linked_from_its_match_page_from_disk(site: Site, chromium: Chromium,
                                                      served: tuple[str, Path]) -> None:
    match = site.out / "matches" / "three-way.html"
    href = f"../hand.html#three-way/{HAND}"
    assert f'href="{href}"' in match.read_text(encoding="utf-8")
    url = urljoin(match.resolve().as_uri(), href)
    page = parse_dom(chromium.dump_dom(url, virtual_ms=browser.VIRTUAL_MS))
    assert page.by_id("hand-viewer").attrs["data-state"] == "ready"
    assert on_screen(page) == recorded(site.db, "three-way", HAND)
    assert len(page.by_id("mirror-list").tags("article")) == 3  # its deal, from two data files
    missing = (served[1] / "broken" / "hand.html").resolve().as_uri() + "#evil-vs-caller/15"
    page = parse_dom(chromium.dump_dom(missing, virtual_ms=browser.VIRTUAL_MS))
    assert page.by_id("hand-viewer").attrs["data-state"] == "error"
    assert "matches/evil-vs-caller/data-1.js could not be loaded" in page.by_id("message").text


NAVIGATE = """
const v = f[0], h = f[1], seen = [];
const look = d => seen.push([d.getElementById("hand-title").textContent, d.getElementById("step-street").textContent]);
let d = await shown(v, "Hand 9");
await until("the deal beside it", () => d.querySelectorAll("#mirror-list article").length === 3);
key(v, "n"); d = await shown(v, "Hand 10"); look(d);  // the next data file
key(v, "p"); d = await shown(v, "Hand 9"); look(d);
key(v, "End"); look(d);
key(v, "d"); d = await shown(v, "Hand 10"); look(d);  // the same deal, another seat: at the same street
key(v, "d"); d = await shown(v, "Hand 11"); look(d);
key(v, "d"); d = await shown(v, "Hand 9"); look(d);  // round the deal
key(v, "D", true); d = await shown(v, "Hand 11"); look(d);
key(v, "PageDown"); d = await shown(v, "Hand 12"); look(d);
d.getElementById("previous-hand").click(); d = await shown(v, "Hand 11"); look(d);
v.contentWindow.location.hash = "#three-way/17"; d = await shown(v, "Hand 17");
const last = !d.getElementById("next-hand"); key(v, "n"); await sleep(500); look(v.contentDocument);
let e = await shown(h, "Hand 4"); key(h, "d"); e = await shown(h, "Hand 5"); look(e);  // heads-up: two halves
key(h, "d"); e = await shown(h, "Hand 4"); look(e);
return {seen, last, hash: v.contentWindow.location.hash};
"""


def test_keys_move_between_hands_and_the_seats_of_a_deal(chromium: Chromium,
                                                         served: tuple[str, Path]) -> None:
    base, folder = served
    got = browser.probe(chromium, base, folder, "probe-keys.html",
                        '<iframe src="site/hand.html#three-way/9" width="1000" height="800"></iframe>'
                        '<iframe src="site/hand.html#heads-up-1/4" width="1000" height="800"></iframe>', NAVIGATE)
    assert got["seen"] == [
        ["Hand 10", "pre-flop"], ["Hand 9", "pre-flop"], ["Hand 9", "showdown"], ["Hand 10", "showdown"],
        ["Hand 11", "showdown"], ["Hand 9", "showdown"], ["Hand 11", "showdown"], ["Hand 12", "pre-flop"],
        ["Hand 11", "pre-flop"], ["Hand 17", "pre-flop"], ["Hand 5", "pre-flop"], ["Hand 4", "pre-flop"],
    ]
    assert got["last"] and got["hash"] == "#three-way/17"  # the last hand: no next one


MESSAGES = {  # address in the damaged copy -> what the page says
    "broken/hand.html#evil-vs-caller/15": "The hand data file matches/evil-vs-caller/data-1.js could not be loaded: "
                                          "it is missing from the site",
    "broken/hand.html#heads-up-1/12": "The hand data file matches/heads-up-1/data-1.js is damaged: it did not hand "
                                      "over any hands",
    "broken/hand.html#heads-up-1/22": 'it holds block 0 of match "three-way", not block 2 of heads-up-1',
    "broken/hand.html#evil-vs-caller/3": "it is in format 99 and this viewer reads format 2 (publish the site again)",
    "broken/hand.html#three-way/12": "Hand 12 of match three-way is damaged in its data file: its events end with",
    "broken/hand.html#three-way/99": "Match three-way has no hand 99 to show: its hands shown run from 0 to 17.",
    "broken/hand.html#still-running/4": "(the match is still running: a deal's hands are shown once it has been "
                                        "played in every seat)",
    "broken/hand.html": "No hand is named in this page's address",
    "broken/hand.html#../../etc/passwd": "The address names no hand",
}


def test_missing_or_damaged_data_is_said_in_the_page(chromium: Chromium,
                                                     served: tuple[str, Path]) -> None:
    base, folder = served
    frames = "".join(f'<iframe src="{url}"></iframe>' for url in MESSAGES)
    got = browser.probe(chromium, base, folder, "probe-broken.html",
                        frames + '<iframe src="broken/hand.html#three-way/13"></iframe>',
                        "const out = []; for (const frame of f.slice(0, -1)) { out.push(await failed(frame)); }"
                        ' await shown(f[f.length - 1], "Hand 13"); return out;')  # the same file's other hands show
    for (url, expected), message in zip(MESSAGES.items(), got, strict=True):
        assert expected in message, (url, message)
