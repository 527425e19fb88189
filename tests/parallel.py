"""How the suite shares its workers (pytest-xdist, ``--dist loadfile``): every test file is one unit of work, so
that a module's fixtures (a Ray cluster, a played database) are built once and a file's tests never run beside each
other; and a test marked ``alone`` (it measures time or CPU, or holds a host-wide resource such as uid 61000) runs
while no other test does.

``alone`` is a readers-writer lock across the workers: every test holds a shared lock on one file for its whole
run, an ``alone`` test an exclusive one; a second file is the turnstile that keeps later tests from starving the
exclusive one.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest


class Turns:
    """The lock files of one run of the suite, shared by its workers (in the run's temporary folder)."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self._gate: IO[bytes] = (folder / "gate").open("ab")
        self._room: IO[bytes] = (folder / "room").open("ab")

    @contextlib.contextmanager
    def turn(self, alone: bool) -> Iterator[None]:
        """Hold the room, shared or (``alone``) exclusive, for as long as the test runs."""
        fcntl.flock(self._gate, fcntl.LOCK_EX)
        try:
            fcntl.flock(self._room, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        finally:
            fcntl.flock(self._gate, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(self._room, fcntl.LOCK_UN)


@functools.cache
def turns(config: pytest.Config) -> Turns | None:
    """The run's lock files when this process is an xdist worker, else None (a single process needs no lock). A
    worker's temporary folder is ``<the run's>/popen-gwN``; the locks live beside those of the other workers."""
    if not os.environ.get("PYTEST_XDIST_WORKER") or not config.option.basetemp:
        return None
    return Turns(Path(config.option.basetemp).parent / "turns")
