"""The live line of a long command on stderr: redrawn in place on a terminal, else one line every few seconds."""

from __future__ import annotations

import time

import click
from rich.console import Console
from rich.live import Live
from rich.text import Text

PLAIN_EVERY_S = 5.0


class LiveLine:
    """The live line on stderr: redrawn in place on a terminal, else one line every few seconds (CI logs keep
    every line; carriage returns would pile up into one)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.console = Console(stderr=True)
        self.tty = self.console.is_terminal
        self._live: Live | None = None
        self._last = 0.0
        self._line = ""

    def __enter__(self) -> LiveLine:
        if self.enabled and self.tty:
            self._live = Live(Text(""), console=self.console, refresh_per_second=8, transient=False)
            self._live.__enter__()
        return self

    def update(self, line: str) -> None:
        """Show the current state."""
        self._line = line
        if not self.enabled:
            return
        if self._live is not None:
            self._live.update(Text(line))
        elif time.monotonic() - self._last >= PLAIN_EVERY_S:
            self._last = time.monotonic()
            click.echo(line, err=True)

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.__exit__(None, None, None)
        elif self.enabled and self._line:
            click.echo(self._line, err=True)
