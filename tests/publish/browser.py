"""What the browser tests share: a folder served over HTTP on 127.0.0.1 as a static host serves it, a probe page
that opens pages in frames of the same origin and hands back what a script reads in them (waiting, in Chromium's
virtual time, for what loads later), and a small reader of the DOM Chromium dumps.
"""

from __future__ import annotations

import contextlib
import functools
import html
import json
import threading
from collections.abc import Callable, Iterator
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.publish.chromium import Chromium

VIRTUAL_MS = 20_000  # virtual time Chromium gives a page's scripts before it dumps it: idle time passes at once


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def serve(folder: Path) -> Iterator[str]:
    """``folder`` served over HTTP on 127.0.0.1 while the block runs: its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


HELPERS = """
const sleep = ms => new Promise(r => setTimeout(r, ms));
const until = async (what, test) => {
  for (let i = 0; i < 400; i++) { const v = test(); if (v) { return v; } await sleep(25); }
  throw new Error("timed out waiting for " + what);
};
const state = frame => { const d = frame.contentDocument, v = d && d.getElementById("hand-viewer");
  return v ? v.getAttribute("data-state") : null; };
const shown = (frame, title) => until(title, () => state(frame) === "ready"
  && frame.contentDocument.getElementById("hand-title").textContent === title && frame.contentDocument);
const failed = frame => until("a message", () => state(frame) === "error"
  && frame.contentDocument.getElementById("message").textContent);
const key = (frame, k, shift) => frame.contentDocument.dispatchEvent(
  new frame.contentWindow.KeyboardEvent("keydown", {key: k, shiftKey: !!shift, bubbles: true}));
"""
"""Functions the probe scripts may use: ``until``, ``shown`` (the viewer in a frame shows the hand of that title),
``failed`` (it shows a message: its text), ``key`` (a key pressed in a frame)."""


def probe(chromium: Chromium, base: str, folder: Path, name: str, frames: str, script: str) -> Any:
    """Write a probe page ``name`` into ``folder`` (served at ``base``) with ``frames``; once they have loaded,
    ``script`` (the body of an async JavaScript function, the frames in ``f``, ``HELPERS`` at hand) returns a
    value, which comes back here from JSON."""
    (folder / name).write_text(
        f'<!doctype html><html><body><pre id="out">pending</pre>{frames}<script>{HELPERS}'
        'window.addEventListener("load", async () => { const f = [...document.querySelectorAll("iframe")]; let v;'
        f' try {{ v = await (async () => {{ {script} }})(); }} catch (e) {{ v = {{error: String(e)}}; }}'
        ' document.getElementById("out").textContent = JSON.stringify(v); });'
        "</script></body></html>", encoding="utf-8")
    dom = chromium.dump_dom(base + name, virtual_ms=VIRTUAL_MS)
    start = dom.index('<pre id="out">') + len('<pre id="out">')
    value = json.loads(html.unescape(dom[start:dom.index("</pre>", start)]))
    assert not (isinstance(value, dict) and "error" in value), value
    return value


class Element:
    """An element of a dumped DOM: its tag, attributes and children (elements and text)."""

    def __init__(self, tag: str, attrs: dict[str, str | None]) -> None:
        self.tag = tag
        self.attrs = attrs
        self.children: list[Element | str] = []

    @property
    def text(self) -> str:
        """Its text, as ``textContent`` reads it."""
        return "".join(c if isinstance(c, str) else c.text for c in self.children)

    @property
    def classes(self) -> list[str]:
        return (self.attrs.get("class") or "").split()

    def all(self, test: Callable[[Element], bool]) -> list[Element]:
        """Every element below it that passes ``test``, in document order."""
        out: list[Element] = []
        for child in self.children:
            if isinstance(child, Element):
                if test(child):
                    out.append(child)
                out += child.all(test)
        return out

    def by_id(self, name: str) -> Element:
        [found] = self.all(lambda e: e.attrs.get("id") == name)
        return found

    def tags(self, tag: str, cls: str | None = None) -> list[Element]:
        return self.all(lambda e: e.tag == tag and (cls is None or cls in e.classes))


_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, dict(attrs))
        self.stack[-1].children.append(element)
        if tag not in _VOID:
            self.stack.append(element)

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse_dom(html: str) -> Element:
    """The DOM Chromium dumped, as elements."""
    builder = _Builder()
    builder.feed(html)
    builder.close()
    return builder.root
