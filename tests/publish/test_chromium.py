"""The browser tests' Chromium (tests/publish/chromium.py): a page's DOM is what ``--dump-dom`` prints of it, with
and without ``--virtual-time-budget``; pages share nothing (a page of a shared context sees what the one before it
stored); a page that never loads fails with a timeout that names it; no tab is left open between pages; a crashed
browser is replaced on next use, and none of its processes is left once it is gone.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.publish import browser
from tests.publish.chromium import FLAGS, TIMEOUT, Chromium, ChromiumError, PageTimeout

PAGE = ('<!doctype html><html><head><title>t &amp; t</title></head><body><p id="p">parsed</p><script>'
        'window.addEventListener("load", () => document.getElementById("p").append(" loaded"));'
        'setTimeout(() => document.body.append("after 5 s"), 5000);</script></body></html>')
"""A page whose DOM changes at its load event and again five seconds later (at once in virtual time)."""

REMEMBER = ('<!doctype html><html><body><pre id="out"></pre><script>'
            'document.getElementById("out").textContent = JSON.stringify([localStorage.getItem("seen"),'
            ' document.cookie]); localStorage.setItem("seen", "yes"); document.cookie = "seen=yes";'
            '</script></body></html>')
"""A page that shows what an earlier page of its origin stored, then stores some of its own."""


@pytest.mark.parametrize("virtual_ms", [None, 10_000])
def test_the_dom_is_what_dump_dom_prints(chromium: Chromium, tmp_path: Path, virtual_ms: int | None) -> None:
    page = tmp_path / "page.html"
    page.write_text(PAGE, encoding="utf-8")
    budget = [f"--virtual-time-budget={virtual_ms}"] if virtual_ms else []
    command = [str(chromium.binary), *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *budget, "--dump-dom",
               page.as_uri()]
    printed = subprocess.run(command, capture_output=True, text=True, timeout=60, check=True,
                             stdin=subprocess.DEVNULL).stdout
    assert chromium.dump_dom(page.as_uri(), virtual_ms=virtual_ms) == printed
    assert printed.startswith("<!DOCTYPE html>\n<html>") and "parsed loaded" in printed
    assert ("</script>after 5 s" in printed) == bool(virtual_ms)


def _shown(chromium: Chromium, url: str, context: str | None, deadline: float) -> str:
    with chromium.page(deadline, context=context) as page:
        page.open(url, None, deadline)
        return str(page.evaluate('document.getElementById("out").textContent', deadline))


def test_pages_share_nothing(chromium: Chromium, tmp_path: Path) -> None:
    (tmp_path / "remember.html").write_text(REMEMBER, encoding="utf-8")
    deadline = time.monotonic() + TIMEOUT
    with browser.serve(tmp_path) as base:
        url = base + "remember.html"
        fresh = [_shown(chromium, url, None, deadline) for _ in range(2)]
        with chromium.context(deadline) as shared:  # the control: one context, as one profile for every page was
            kept = [_shown(chromium, url, shared, deadline) for _ in range(2)]
    assert fresh == ['[null,""]', '[null,""]']
    assert kept == ['[null,""]', '["yes","seen=yes"]']


@contextlib.contextmanager
def _silent_server() -> Iterator[str]:
    """A server on 127.0.0.1 that takes connections and never answers: its base URL."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield f"http://127.0.0.1:{server.getsockname()[1]}/"


@pytest.mark.parametrize("virtual_ms", [None, 10_000])
def test_a_page_that_never_loads_times_out(chromium: Chromium, tmp_path: Path, virtual_ms: int | None) -> None:
    (tmp_path / "page.html").write_text(PAGE, encoding="utf-8")
    with _silent_server() as silent, pytest.raises(PageTimeout, match=rf"{silent}page\.html was not ready in 1 s"):
        chromium.dump_dom(silent + "page.html", virtual_ms=virtual_ms, timeout=1)
    with browser.serve(tmp_path) as base:  # the control: the same page, answered, loads in the same browser
        pid = chromium.pid
        assert "parsed loaded" in chromium.dump_dom(base + "page.html", virtual_ms=virtual_ms, timeout=10)
        assert chromium.pid == pid
    with pytest.raises(ChromiumError, match=r"could not open file:///no/such/page\.html: net::ERR_FILE_NOT_FOUND"):
        chromium.dump_dom("file:///no/such/page.html")


def _group(leader: int) -> list[int]:
    """The live (not zombie) processes of a process group."""
    found = []
    for entry in os.listdir("/proc"):
        with contextlib.suppress(OSError):
            stat = Path(f"/proc/{entry}/stat").read_text()
            state, _, group = stat[stat.rindex(")") + 2:].split()[:3]
            if int(group) == leader and state != "Z":
                found.append(int(entry))
    return found


def _gone(leader: int) -> bool:
    """Whether no process of the group is left (those killed a moment ago may take that moment to die)."""
    for _ in range(50):
        if not _group(leader):
            return True
        time.sleep(0.1)
    return False


def test_a_crashed_browser_is_replaced_and_none_is_left(chromium: Chromium, tmp_path: Path) -> None:
    # a browser of its own, to crash; the worker's (``chromium``, started on its first page) is asked for only so
    # that a machine without Chromium skips this test as it skips the others (CI fails instead)
    page = tmp_path / "page.html"
    page.write_text(PAGE, encoding="utf-8")
    own = Chromium()
    try:
        own.dump_dom(page.as_uri())
        first = own.pid
        assert first is not None and own.browser is not None
        assert len(_group(first)) > 2  # the browser and its helpers: what must not be left
        targets = own.browser.call("Target.getTargets")["targetInfos"]
        assert [t for t in targets if t["type"] == "page"] == []  # its first tab and the page closed: none idles
        os.kill(first, signal.SIGKILL)
        own.browser.process.wait()
        assert "parsed loaded" in own.dump_dom(page.as_uri())  # the next page starts a new browser
        second = own.pid
        assert own.launches == 2 and second != first and _gone(first)
        with pytest.raises(ChromiumError, match="closed its end of the DevTools pipe"):
            own.browser.call("Browser.crash")  # it dies in the middle of a call
        assert "parsed loaded" in own.dump_dom(page.as_uri()) and own.launches == 3
        third = own.pid
        assert third is not None and _gone(second) and _group(third)
    finally:
        own.close()
    assert _gone(third)
