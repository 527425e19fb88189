"""The hand viewer and the page layouts in headless Chromium, the site served over HTTP as a static host would
serve it (a probe page beside it opens pages in frames of the same origin and reads what they show).

A hand is stepped through with the keyboard and the buttons, and the pot and stacks shown at every step are checked
against the referee's record replayed by the engine; pages are measured at 1400 and 400 px wide (no horizontal
overflow) and screenshot at both widths (not blank).
"""

from __future__ import annotations

import functools
import json
import shutil
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from arena.engine import EventKind, Hand
from arena.referee import HandRecord
from tests.publish.conftest import Site
from tests.publish.test_browser import chromium, run

__all__ = ["chromium"]


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def served(site: Site, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A copy of the site (probe pages go in it) served on 127.0.0.1: (base URL, folder)."""
    folder = tmp_path_factory.mktemp("served") / "site"
    shutil.copytree(site.out, folder)
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", folder
    finally:
        server.shutdown()
        server.server_close()


def probe(chromium: Path, tmp: Path, served: tuple[str, Path], name: str, frames: str, script: str) -> Any:
    """Write a probe page with ``frames``; when everything has loaded, ``script`` (JavaScript with the frames in
    ``f``) returns a value, which comes back here as JSON."""
    base, folder = served
    (folder / name).write_text(
        f'<!doctype html><html><body><pre id="out">pending</pre>{frames}<script>'
        'window.addEventListener("load", () => { const f = [...document.querySelectorAll("iframe")]; let v;'
        f' try {{ v = (() => {{ {script} }})(); }} catch (e) {{ v = {{error: String(e)}}; }}'
        ' document.getElementById("out").textContent = JSON.stringify(v); });'
        "</script></body></html>", encoding="utf-8")
    dom = run(chromium, tmp, "--dump-dom", base + name)
    start = dom.index('<pre id="out">') + len('<pre id="out">')
    value = json.loads(dom[start:dom.index("</pre>", start)].replace("&amp;", "&").replace("&lt;", "<")
                       .replace("&gt;", ">"))
    assert not (isinstance(value, dict) and "error" in value), value
    return value


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


def test_step_through_a_hand_with_the_keyboard(site: Site, chromium: Path, tmp_path: Path,
                                               served: tuple[str, Path]) -> None:
    record = max(site.db.hand_records("three-way"), key=lambda r: len(r.decisions))
    before, actors, steps = engine_states(record)
    assert len(before) >= 8  # a hand with plenty of betting
    page = f"matches/three-way/hand-{record.hand_number}.html"
    script = READ + (
        'const d = f[0].contentDocument, w = f[0].contentWindow; const key = k => d.dispatchEvent(new '
        'w.KeyboardEvent("keydown", {key: k, bubbles: true})); const states = [read(d)];'
        f' for (let i = 1; i < {steps + 2}; i++) {{ key("ArrowRight"); states.push(read(d)); }}'
        ' key("ArrowLeft"); const back = read(d); key("Home"); const home = read(d); key("End"); const end = read(d);'
        ' d.getElementById("first").click(); d.getElementById("next").click(); const button = read(d);'
        ' return {states, back, home, end, button};')
    got = probe(chromium, tmp_path, served, "probe-hand.html", f'<iframe src="{page}" width="1000" height="800">'
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
