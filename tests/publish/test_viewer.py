"""The hand viewer and the page layouts in headless Chromium, the site served over HTTP as a static host would
serve it (a probe page beside it opens pages in frames of the same origin and reads what they show).

A hand is stepped through with the keyboard and the buttons, and the pot and stacks shown at every step are checked
against the referee's record replayed by the engine; pages are measured at 1400 and 400 px wide (no horizontal
overflow) and screenshot at both widths (not blank). What the viewer shows of a hand, how it moves between hands,
and what it says when data is missing: tests/publish/test_hand_viewer.py.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from matplotlib.image import imread

from arena.engine import EventKind, Hand
from arena.records import queries
from arena.referee import HandRecord
from tests.publish import browser
from tests.publish.chromium import Chromium
from tests.publish.conftest import Compared, Site


@pytest.fixture(scope="module")
def served(site: Site, compared: Compared, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """Copies of the two sites (``site/`` and ``compared/``; probe pages go beside them) served on 127.0.0.1:
    (base URL, folder)."""
    folder = tmp_path_factory.mktemp("served")
    shutil.copytree(site.out, folder / "site")
    shutil.copytree(compared.out, folder / "compared")
    with browser.serve(folder) as base:
        yield base, folder


def probe(chromium: Chromium, served: tuple[str, Path], name: str, frames: str, script: str) -> Any:
    """browser.probe on the served sites."""
    return browser.probe(chromium, served[0], served[1], name, frames, script)


def engine_states(record: HandRecord) -> tuple[dict[int, tuple[int, list[int]]], dict[int, str], int]:
    """For the viewer's step before each decision, the (pot, stacks) the engine has then; the name of the bot
    making each decision, by its step; and how many steps the viewer should have (one per event, the hole cards
    dealt as one, plus the start)."""
    step_of: dict[int, int] = {}
    step = 0
    for index, event in enumerate(record.events):
        following = record.events[index + 1] if index + 1 < len(record.events) else None
        if event.kind is EventKind.DEAL_HOLE and following is not None and following.kind is EventKind.DEAL_HOLE:
            continue
        step += 1
        step_of[index] = step
    hand = Hand(record.config, list(record.starting_stacks), list(record.deck), button=record.button)
    before: dict[int, tuple[int, list[int]]] = {}
    actors: dict[int, str] = {}
    for decision in record.decisions:
        before[step_of[decision.event_index] - 1] = (hand.pot_total, list(hand.stacks))
        actors[step_of[decision.event_index]] = record.names[decision.seat]
        hand.act(decision.seat, decision.action)
    assert list(hand.stacks) == list(record.final_stacks)
    return before, actors, step + 1


READ = ('const read = d => ({pot: d.getElementById("pot").textContent, count: d.getElementById("step-count")'
        '.textContent, text: d.getElementById("step-text").textContent, stacks: [...d.querySelectorAll('
        '"#seats tbody tr")].map(r => r.querySelector(".stack").textContent)});')


def number(text: str) -> int:
    return int(text.replace(",", ""))


def test_step_through_a_hand_with_the_keyboard(site: Site, chromium: Chromium,
                                               served: tuple[str, Path]) -> None:
    record = max(queries.hand_records(site.db, "three-way"), key=lambda r: len(r.decisions))
    before, actors, steps = engine_states(record)
    assert len(before) >= 8  # a hand with plenty of betting
    page = f"site/hand.html#three-way/{record.hand_number}"
    script = READ + (
        f'const d = await shown(f[0], "Hand {record.hand_number}"), press = k => key(f[0], k);'
        ' const states = [read(d)];'
        f' for (let i = 1; i < {steps + 2}; i++) {{ press("ArrowRight"); states.push(read(d)); }}'
        ' press("ArrowLeft"); const back = read(d); press("Home"); const home = read(d); press("End");'
        ' const end = read(d); d.getElementById("first").click(); d.getElementById("next").click();'
        ' const button = read(d); return {states, back, home, end, button};')
    got = probe(chromium, served, "probe-hand.html", f'<iframe src="{page}" width="1000" height="800">'
                '</iframe>', script)
    states = got["states"]
    assert [s["count"] for s in states] == [f"{min(i, steps - 1) + 1} / {steps}" for i in range(steps + 2)]
    assert number(states[0]["pot"]) == 0
    assert [number(x) for x in states[0]["stacks"]] == list(record.starting_stacks)
    for step, (pot, stacks) in before.items():  # the state shown before every decision is the engine's
        assert number(states[step]["pot"]) == pot, (step, states[step])
        assert [number(x) for x in states[step]["stacks"]] == stacks, (step, states[step])
        assert states[step + 1]["text"].startswith(actors[step + 1]), states[step + 1]  # and who acted next
    last = states[steps - 1]
    assert [number(x) for x in last["stacks"]] == list(record.final_stacks) and number(last["pot"]) == 0
    assert "wins" in last["text"]
    assert got["back"]["count"] == f"{steps - 1} / {steps}" and got["home"] == states[0]
    assert got["end"] == last and got["button"] == states[1]


PAGES = {  # one of each kind of page, the hand viewer with its deal's hands beside it
    "index": "site/index.html",
    "bot": "site/bots/script-alert-1-script.html",
    "match": "site/matches/three-way.html",
    "hand": "site/hand.html#three-way/4",
    "comparison": "compared/comparisons/cmp-1.html",
}
WIDTHS = (1400, 400)

MEASURE = """
const out = {};
for (const frame of f) {
  if (frame.dataset.key.startsWith("hand")) { await shown(frame, "Hand 4"); }
  const d = frame.contentDocument, root = d.documentElement;
  const wide = [];
  for (const el of d.body.querySelectorAll("*")) {
    if (el.closest(".scroll") || el.closest("svg")) { continue; }  // tables scroll inside their own box
    if (el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0 && getComputedStyle(el).overflowX !== "auto") {
      wide.push(el.tagName + "." + el.className + ": " + el.scrollWidth + " > " + el.clientWidth);
    }
  }
  const squeezed = [...d.querySelectorAll("td.name, h1")].filter(el => el.textContent.trim().length > 3
    && el.getBoundingClientRect().width < 48).map(el => el.textContent.trim().slice(0, 30));
  out[frame.dataset.key] = {scroll: root.scrollWidth, client: root.clientWidth, wide, squeezed,
    text: d.body.innerText.length};
}
return out;
"""


def test_pages_fit_1400_and_400_pixels(chromium: Chromium, served: tuple[str, Path]) -> None:
    frames = "".join(f'<iframe data-key="{key}@{width}" src="{page}" width="{width}" height="900"></iframe>'
                     for key, page in PAGES.items() for width in WIDTHS)
    got = probe(chromium, served, "probe-layout.html", frames, MEASURE)
    assert len(got) == len(PAGES) * len(WIDTHS)
    for key, m in got.items():
        assert m["text"] > 200, key  # the page rendered
        assert m["scroll"] <= m["client"], f"{key}: the page is {m['scroll']} px wide in {m['client']} px"
        assert not m["wide"], f"{key}: text overflows its box: {m['wide'][:5]}"
        assert not m["squeezed"], f"{key}: names squeezed to a letter a line: {m['squeezed'][:5]}"


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("key", list(PAGES))
def test_screenshots_are_not_blank(key: str, width: int, chromium: Chromium, tmp_path: Path,
                                   served: tuple[str, Path]) -> None:
    shot = tmp_path / f"{key}-{width}.png"
    chromium.screenshot(served[0] + PAGES[key], shot, (width, 1000), virtual_ms=browser.VIRTUAL_MS)
    pixels = np.asarray(imread(shot))[..., :3]
    assert pixels.shape[1] == width
    assert float(pixels.std()) > 0.05  # not one flat colour
    ink = (pixels.min(axis=2) < 0.9).mean()
    assert 0.02 < ink < 0.9, f"{ink:.1%} of the page is not background"
    assert float(pixels[:20].mean()) < 0.3  # the dark header: the stylesheet was loaded
