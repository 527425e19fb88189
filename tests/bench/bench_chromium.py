"""The browser tests' cost in Chromium: ``PAGES`` pages dumped by a launch a page (``chromium --dump-dom``, a fresh
profile each, as the tests did) beside the same pages in one browser over the DevTools pipe, a fresh context a page
(tests/publish/chromium.py, its start and quit included), with and without a virtual time budget.

``python -m tests.bench.bench_chromium``. CPU seconds of this process and its waited children (the browsers and
their helpers), and wall seconds; the two ways alternate, ``ROUNDS`` rounds; printed, never asserted.
"""

from __future__ import annotations

import resource
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tests.publish.chromium import CHROMIUM, FLAGS, Chromium

PAGES = 8
ROUNDS = 2
VIRTUAL_MS = 20_000
PAGE = ("<!doctype html><html><head><title>bench</title></head><body><table>"
        + "".join(f"<tr><td>{i}</td><td>bot {i}</td><td>{i * 1.5:.1f}</td></tr>" for i in range(200))
        + "</table><script>setTimeout(() => document.body.append('later'), 1000);</script></body></html>")


def _cpu() -> float:
    """CPU seconds of this process and of its children that have been waited for."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def launches(url: str, folder: Path, virtual_ms: int | None) -> None:
    """``PAGES`` launches of ``chromium --dump-dom``, a fresh profile each."""
    budget = [f"--virtual-time-budget={virtual_ms}"] if virtual_ms else []
    for i in range(PAGES):
        subprocess.run([str(CHROMIUM), *FLAGS, f"--user-data-dir={folder / f'p{i}'}", *budget, "--dump-dom", url],
                       capture_output=True, check=True, stdin=subprocess.DEVNULL, timeout=60)


def one_browser(url: str, folder: Path, virtual_ms: int | None) -> None:
    """``PAGES`` pages in one browser, started and quit here."""
    browser = Chromium()
    try:
        for _ in range(PAGES):
            browser.dump_dom(url, virtual_ms=virtual_ms)
    finally:
        browser.close()


def measure(way: Callable[[str, Path, int | None], None], url: str, virtual_ms: int | None) -> tuple[float, float]:
    """(CPU, wall) seconds of one way over the pages."""
    with tempfile.TemporaryDirectory() as folder:
        cpu, wall = _cpu(), time.perf_counter()
        way(url, Path(folder), virtual_ms)
        return _cpu() - cpu, time.perf_counter() - wall


def main() -> None:
    """Print each way's CPU and wall seconds for the pages, round by round."""
    if not CHROMIUM.exists():
        print(f"skipped: {CHROMIUM} is missing")
        return
    with tempfile.TemporaryDirectory() as folder:
        page = Path(folder) / "page.html"
        page.write_text(PAGE, encoding="utf-8")
        print(f"{PAGES} pages dumped, CPU and wall seconds (this process and the browsers), {ROUNDS} rounds")
        for virtual_ms in (None, VIRTUAL_MS):
            for round_ in range(ROUNDS):
                line = []
                for name, way in (("a launch a page", launches), ("one browser, a context a page", one_browser)):
                    cpu, wall = measure(way, page.as_uri(), virtual_ms)
                    line.append(f"{name}: {cpu:5.2f} s CPU {wall:5.2f} s wall")
                budget = f"virtual {virtual_ms} ms" if virtual_ms else "to load"
                print(f"  {budget:<18} round {round_ + 1}  " + "   ".join(line), flush=True)


if __name__ == "__main__":
    main()
