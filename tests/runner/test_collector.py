"""The referee's garbage collector (arena.runner.collector): young passes every ``YOUNG`` objects, and what exists
when the first match begins frozen out of every pass, once per process (a long-lived server never freezes a
finished match's objects). Run in a child process: the setting is the whole process's."""

from __future__ import annotations

import subprocess
import sys

CHILD = """
import gc
from arena.runner.collector import YOUNG, collect_in_batches
before = gc.get_freeze_count()
collect_in_batches()
first = gc.get_freeze_count()
assert gc.get_threshold()[0] == YOUNG, gc.get_threshold()
assert first > before, (before, first)
later = [[i] for i in range(1000)]  # made after the first match began
collect_in_batches()
assert gc.get_freeze_count() == first, (first, gc.get_freeze_count())
gc.set_threshold(100_000)
collect_in_batches()
assert gc.get_threshold()[0] == 100_000  # never lowered
print("ok")
"""


def test_the_first_match_freezes_what_exists_and_later_ones_freeze_nothing() -> None:
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
