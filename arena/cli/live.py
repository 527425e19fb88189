"""The live line of a long command on stderr: redrawn in place on a terminal, else one line every few seconds."""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.console import Console
from rich.live import Live
from rich.text import Text

from arena.cli.output import cell, echo

PLAIN_EVERY_S = 5.0
TTY_EVERY_S = 0.125  # the terminal's redraws (rich's refresh_per_second = 8)
Line = str | Callable[[], str]  # a line, or how to make it: made only when it is shown


class LiveLine:
    """The live line on stderr: redrawn in place on a terminal, else one line every few seconds (CI logs keep
    every line; carriage returns would pile up into one)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.console = Console(stderr=True)
        self.tty = self.console.is_terminal
        self._live: Live | None = None
        self._last = 0.0
        self._line: Line = ""

    def __enter__(self) -> LiveLine:
        if self.enabled and self.tty:
            self._live = Live(Text(""), console=self.console, refresh_per_second=8, transient=False)
            self._live.__enter__()
        return self

    def update(self, line: Line) -> None:
        """Show the current state. A callable is called only when its line will be shown (at most 8 times a second
        on a terminal, once every few seconds in a log, and at the end): a caller may update after every hand
        of a long match and never pay for lines nobody sees."""
        self._line = line
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last < (TTY_EVERY_S if self._live is not None else PLAIN_EVERY_S):
            return
        self._last = now
        if self._live is not None:
            self._live.update(cell(self._text()))
        else:
            echo(self._text(), err=True)

    def _text(self) -> str:
        return self._line() if callable(self._line) else self._line

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            if self._line:
                self._live.update(cell(self._text()))
            self._live.__exit__(None, None, None)
        elif self.enabled and self._line:
            echo(self._text(), err=True)
