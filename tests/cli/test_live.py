"""The live line of `arena match` and `arena compare`: a line given as a callable is made only when it is shown, so
updating it after every hand of a long match costs nothing for the lines nobody sees."""

from __future__ import annotations

import time

from arena.cli import live as live_module
from arena.cli.live import LiveLine


def test_in_a_log_a_lazy_line_is_made_once_every_few_seconds_and_at_the_end() -> None:
    made = []

    def line() -> str:
        made.append(1)
        return f"line {len(made)}"

    with LiveLine(True) as live:
        assert not live.tty  # pytest captures stderr: the plain mode of CI logs
        for _ in range(20_000):
            live.update(line)
    assert len(made) == 2  # the first update, then the end (5 s between plain lines)


def test_on_a_terminal_a_lazy_line_is_made_at_most_eight_times_a_second() -> None:
    made = []

    def line() -> str:
        made.append(1)
        return "line"

    live = LiveLine(True)
    live.tty = True  # as on a terminal: rich redraws it in place
    started = time.monotonic()
    with live:
        while time.monotonic() - started < 0.6:
            live.update(line)
    assert 2 <= len(made) <= 0.6 / live_module.TTY_EVERY_S + 2


def test_a_disabled_line_makes_nothing() -> None:
    made = []
    with LiveLine(False) as live:
        for _ in range(100):
            live.update(lambda: made.append(1) or "x")
    assert not made
