"""Headless Chromium for the browser tests, started once per test worker and driven over the DevTools protocol
(JSON messages ended by a NUL byte on the browser's fds 3 and 4, ``--remote-debugging-pipe``). Each page gets a
browser context of its own (cookies, storage and cache, as a fresh ``--user-data-dir`` had), closed after it.

It does what the tests asked of the command line (``--dump-dom``, ``--virtual-time-budget``, ``--screenshot`` with
``--window-size``) with the same results, without a launch a page (about 1.5 s of CPU each). If the browser dies
or its pipe breaks, the call fails and the next one starts a new browser.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TIMEOUT = 60.0  # seconds a page may take, from its context's creation to its DOM or picture
DUMP_DOM = ("(document.doctype ? new XMLSerializer().serializeToString(document.doctype) + '\\n' : '')"
            " + document.documentElement.outerHTML")
"""What ``--dump-dom`` prints (then a newline): the doctype on a line of its own, then the root element."""


class ChromiumError(RuntimeError):
    """The browser failed: it exited, its pipe broke, or a command came back with an error."""


class PageTimeout(ChromiumError):
    """A page did not load (or its virtual time did not run out) before its deadline."""


class _Pipe:
    """The DevTools protocol over two pipes: messages out on one, in on the other, each ended by a NUL byte."""

    def __init__(self, out_fd: int, in_fd: int) -> None:
        self.out_fd = out_fd
        self.in_fd = in_fd
        self._buffer = bytearray()

    def send(self, message: dict[str, Any]) -> None:
        data = json.dumps(message).encode() + b"\0"
        try:
            while data:
                data = data[os.write(self.out_fd, data):]
        except OSError as error:
            raise ChromiumError(f"the pipe to Chromium broke: {error}") from error

    def receive(self, deadline: float) -> dict[str, Any] | None:
        """The next message, or None if none came before ``deadline`` (time.monotonic)."""
        while (end := self._buffer.find(b"\0")) < 0:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.in_fd], [], [], left)[0]:
                return None
            chunk = os.read(self.in_fd, 1 << 20)
            if not chunk:
                raise ChromiumError("Chromium closed its end of the DevTools pipe (it exited or crashed)")
            self._buffer += chunk
        message: dict[str, Any] = json.loads(self._buffer[:end])
        del self._buffer[:end + 1]
        return message

    def close(self) -> None:
        for fd in (self.out_fd, self.in_fd):
            with contextlib.suppress(OSError):
                os.close(fd)


def _high(fds: tuple[int, int]) -> tuple[int, int]:
    """The pipe's two ends moved above fd 9, out of the way of the 3 and 4 the browser's ends become."""
    moved = tuple(fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in fds)
    for fd in fds:
        os.close(fd)
    return moved[0], moved[1]


class Browser:
    """One running Chromium: its process (leader of its own process group), profile folder and DevTools pipe."""

    def __init__(self, binary: Path) -> None:
        self.profile = Path(tempfile.mkdtemp(prefix="arena-chromium-"))
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 (closed by close): its stderr, said when it dies
        browser_reads, we_write = _high(os.pipe())  # commands
        we_read, browser_writes = _high(os.pipe())  # answers and events
        command = [str(binary), *FLAGS, f"--user-data-dir={self.profile}", "--remote-debugging-pipe", "about:blank"]
        # It reads fd 3 and writes fd 4: bash (dash takes no fd above 9) puts its pipe ends there, then becomes it.
        shell = f'exec "$@" 3<&{browser_reads} 4>&{browser_writes} {browser_reads}<&- {browser_writes}>&-'
        try:
            self.process = subprocess.Popen(
                ["/bin/bash", "-c", shell, "bash", *command], pass_fds=(browser_reads, browser_writes),
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.log, start_new_session=True,
                env={**os.environ, "TMPDIR": str(self.profile)})  # its singleton's socket folder: in the profile
        finally:
            os.close(browser_reads)
            os.close(browser_writes)
        self.pipe = _Pipe(we_write, we_read)
        self.events: list[dict[str, Any]] = []
        self._next_id = 0
        self.broken = False

    def call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None,
             deadline: float | None = None) -> dict[str, Any]:
        """Send a command and wait for its answer (events that come meanwhile are kept): its result."""
        self._next_id += 1
        ident = self._next_id
        message: dict[str, Any] = {"id": ident, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        deadline = deadline if deadline is not None else time.monotonic() + TIMEOUT
        try:
            self.pipe.send(message)
            while True:
                got = self.pipe.receive(deadline)
                if got is None:
                    raise PageTimeout(f"Chromium did not answer {method} in time")
                if got.get("id") == ident:
                    break
                if "method" in got:
                    self.events.append(got)
        except PageTimeout:
            raise
        except ChromiumError as error:
            raise self._died(error) from error
        if "error" in got:
            raise ChromiumError(f"{method} failed: {got['error'].get('message')} ({got['error']})")
        result: dict[str, Any] = got.get("result", {})
        return result

    def wait_for(self, method: str, session: str, deadline: float, what: str) -> dict[str, Any]:
        """The first event ``method`` of ``session`` (kept or still to come) before ``deadline``."""
        while True:
            for index, event in enumerate(self.events):
                if event["method"] == method and event.get("sessionId") == session:
                    del self.events[index]
                    return event
            try:
                got = self.pipe.receive(deadline)
            except ChromiumError as error:
                raise self._died(error) from error
            if got is None:
                raise PageTimeout(f"timed out waiting for {what}")
            if "method" in got:
                self.events.append(got)

    def _died(self, error: ChromiumError) -> ChromiumError:
        """The browser is gone (the next page starts another): ``error`` with the end of what it wrote."""
        self.broken = True
        self.log.seek(0, os.SEEK_END)
        self.log.seek(max(0, self.log.tell() - 3000))
        return ChromiumError(f"{error}; its standard error ends:\n{self.log.read().decode(errors='replace')}")

    def forget(self, session: str) -> None:
        """Drop the events kept for a closed page."""
        self.events = [event for event in self.events if event.get("sessionId") != session]

    @property
    def alive(self) -> bool:
        return not self.broken and self.process.poll() is None

    def close(self) -> None:
        """Ask the browser to quit, then kill whatever is left of its process group; remove its profile."""
        if self.alive:
            with contextlib.suppress(ChromiumError):
                self.call("Browser.close", deadline=time.monotonic() + 5)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)  # its children, if any outlived it
        self.process.wait()
        self.pipe.close()
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)


class Page:
    """A page of its own browser context, attached to over the browser's pipe."""

    def __init__(self, browser: Browser, context: str, target: str, session: str) -> None:
        self.browser = browser
        self.context = context
        self.target = target
        self.session = session

    def call(self, method: str, params: dict[str, Any] | None = None, deadline: float | None = None) -> Any:
        return self.browser.call(method, params, self.session, deadline)

    def open(self, url: str, virtual_ms: int | None, deadline: float) -> None:
        """Load ``url``; return once its load event has fired or, given ``virtual_ms``, once that much virtual
        time has passed (timers run at once while no fetch is pending), as ``--virtual-time-budget`` does."""
        self.call("Page.enable", deadline=deadline)
        if virtual_ms is not None:
            self.call("Emulation.setVirtualTimePolicy", {"policy": "pause"}, deadline)
        answer = self.call("Page.navigate", {"url": url}, deadline)
        if answer.get("errorText"):
            raise ChromiumError(f"Chromium could not open {url}: {answer['errorText']}")
        if virtual_ms is None:
            self.browser.wait_for("Page.loadEventFired", self.session, deadline, f"{url} to load")
        else:
            self.call("Emulation.setVirtualTimePolicy",
                      {"policy": "pauseIfNetworkFetchesPending", "budget": virtual_ms}, deadline)
            self.browser.wait_for("Emulation.virtualTimeBudgetExpired", self.session, deadline,
                                  f"{url} to load and {virtual_ms} ms of its virtual time to pass")

    def evaluate(self, expression: str, deadline: float) -> Any:
        """The value of a JavaScript expression in the page."""
        answer = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}, deadline)
        if "exceptionDetails" in answer:
            raise ChromiumError(f"{expression!r} threw: {answer['exceptionDetails']}")
        return answer["result"].get("value")


@contextlib.contextmanager
def _within(url: str, timeout: float) -> Iterator[None]:
    """A page's timeout said with its address and its time."""
    try:
        yield
    except PageTimeout as error:
        raise PageTimeout(f"{url} was not ready in {timeout:g} s: {error}") from error


class Chromium:
    """Headless Chromium for many pages: started on first use (again after a crash), a fresh context a page."""

    def __init__(self, binary: Path = CHROMIUM) -> None:
        self.binary = binary
        self.browser: Browser | None = None
        self.launches = 0

    def _running(self) -> Browser:
        if self.browser is not None and not self.browser.alive:
            self.browser.close()
            self.browser = None
        if self.browser is None:
            self.browser = Browser(self.binary)
            self.launches += 1
            self._close_first_tab(self.browser)
        return self.browser

    @staticmethod
    def _close_first_tab(browser: Browser) -> None:
        """Close the blank tab a browser starts with: left open, it kept drawing frames while the browser waited
        between tests (0.86 s of CPU in 20 s idle, 0.17 s without it)."""
        for target in browser.call("Target.getTargets")["targetInfos"]:
            if target["type"] == "page":
                browser.call("Target.closeTarget", {"targetId": target["targetId"]})

    @contextlib.contextmanager
    def context(self, deadline: float) -> Iterator[str]:
        """A new browser context (nothing shared with any other), disposed of with its pages afterwards."""
        browser = self._running()
        context = browser.call("Target.createBrowserContext", deadline=deadline)["browserContextId"]
        try:
            yield context
        finally:
            if browser.alive:
                with contextlib.suppress(PageTimeout):
                    browser.call("Target.disposeBrowserContext", {"browserContextId": context},
                                 deadline=time.monotonic() + 10)

    @contextlib.contextmanager
    def page(self, deadline: float, context: str | None = None,
             size: tuple[int, int] | None = None) -> Iterator[Page]:
        """A blank page (of its own context unless one is given), ``size`` CSS pixels if given; closed after."""
        with contextlib.ExitStack() as stack:
            if context is None:
                context = stack.enter_context(self.context(deadline))
            browser = self._running()
            target = browser.call("Target.createTarget", {"url": "about:blank", "browserContextId": context},
                                  deadline=deadline)["targetId"]
            stack.callback(self._close_target, browser, target)
            session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True},
                                   deadline=deadline)["sessionId"]
            stack.callback(browser.forget, session)
            page = Page(browser, context, target, session)
            if size is not None:
                page.call("Emulation.setDeviceMetricsOverride",
                          {"width": size[0], "height": size[1], "deviceScaleFactor": 1, "mobile": False}, deadline)
            yield page

    @staticmethod
    def _close_target(browser: Browser, target: str) -> None:
        if browser.alive:
            with contextlib.suppress(PageTimeout):
                browser.call("Target.closeTarget", {"targetId": target}, deadline=time.monotonic() + 10)

    def dump_dom(self, url: str, virtual_ms: int | None = None, timeout: float = TIMEOUT) -> str:
        """The page's serialized DOM once loaded (or after ``virtual_ms`` of virtual time), as ``--dump-dom``
        prints it."""
        deadline = time.monotonic() + timeout
        with _within(url, timeout), self.page(deadline) as page:
            page.open(url, virtual_ms, deadline)
            return str(page.evaluate(DUMP_DOM, deadline)) + "\n"

    def screenshot(self, url: str, path: Path, size: tuple[int, int], virtual_ms: int | None = None,
                   timeout: float = TIMEOUT) -> Path:
        """A PNG of the page's first ``size`` (width, height) CSS pixels, written to ``path``, as ``--screenshot``
        with ``--window-size`` takes it."""
        deadline = time.monotonic() + timeout
        with _within(url, timeout), self.page(deadline, size=size) as page:
            page.open(url, virtual_ms, deadline)
            data = page.call("Page.captureScreenshot", {"format": "png"}, deadline)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    @property
    def pid(self) -> int | None:
        """The running browser's process id (None before the first page)."""
        return self.browser.process.pid if self.browser is not None else None

    def close(self) -> None:
        """Quit the browser; no process of it is left."""
        if self.browser is not None:
            self.browser.close()
            self.browser = None
