"""How the suite shares its workers (pytest-xdist, ``--dist loadfile``): every test file is one unit of work, so
that a module's fixtures (a Ray cluster, a played database) are built once and a file's tests never run beside each
other. Two kinds of test need more than a worker's share of the machine:

* ``foreground``: it measures time or reads figures other processes move (a flood against one referee with its
  bots on a short clock, a covert channel's slots), but leaves cores to spare. It runs in a cpu cgroup of the run's
  with the kernel's highest weight, one such test at a time: its processes, and all they start (the bots' own
  cgroups nest inside it), get the CPU whenever they want it, and the other workers go on with the rest. Where no
  such cgroup can be made it runs ``alone`` instead: not root, or cgroup v2, where a cgroup with processes in it
  (the worker's) cannot give the bots' cgroups controllers, so that the test would play without their caps.
* ``alone``: its processes take every core (CPU contention is what it measures), so it runs while no other test
  does: a readers-writer lock across the workers, every test holding a shared lock on one file for its whole run and
  an ``alone`` test an exclusive one; a second file is the turnstile that keeps later tests from starving the
  exclusive one.

An ``alone`` test waits for every other worker's test in progress to end, with the machine half idle meanwhile:
the files that hold one are given out first and such tests run first in their file (``order``), so that they wait
for the short tests of the run's first seconds, not for a long one in the middle (the machine was a third idle for
about 40 s of a 300-s run when they came anywhere).
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

from arena.runner import sandbox_cgroup

FOREGROUND_SHARES = 262144  # cgroup v1's highest cpu.shares (a task of nice 0 weighs 1024)


class Foreground:
    """A cpu cgroup of the run's with the highest weight: a process moved into it gets the CPU first."""

    def __init__(self, folder: Path, home: Path) -> None:
        self.folder = folder
        self._home = home  # the cgroup this worker came from, to go back to

    @classmethod
    def make(cls, name: str) -> Foreground | None:
        """The run's foreground cgroup (made by the first worker that asks, beside this process's own cpu cgroup),
        or None where this host gives none."""
        found, _ = sandbox_cgroup.layout()
        if found is None or found.version != 1:
            return None
        cpu = [folder for folder, controllers in found.parents if "cpu" in controllers]
        if not cpu:
            return None
        home = cpu[0]  # cgroup v1: this process's own cgroup in the cpu hierarchy
        for stale in home.glob("arena-suite-foreground-*"):  # an earlier run's, if it was killed (empty: removed)
            if stale.name != name:
                with contextlib.suppress(OSError):
                    stale.rmdir()
        made = cls(home / name, home)
        try:
            made._enter()  # a trial: a container may refuse the move
            made._move(home)
        except OSError:
            return None
        return made

    def _move(self, to: Path) -> None:
        (to / "cgroup.procs").write_text(str(os.getpid()))

    def _enter(self) -> None:
        self.folder.mkdir(exist_ok=True)  # again each time: another run's worker may have taken it for stale
        (self.folder / "cpu.shares").write_text(str(FOREGROUND_SHARES))
        self._move(self.folder)

    @contextlib.contextmanager
    def inside(self) -> Iterator[None]:
        """This worker, and every process it starts meanwhile, in the foreground cgroup."""
        self._enter()
        try:
            yield
        finally:
            self._move(self._home)


class Turns:
    """The lock files of one run of the suite, shared by its workers (in the run's temporary folder)."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self._gate: IO[bytes] = (folder / "gate").open("ab")
        self._room: IO[bytes] = (folder / "room").open("ab")
        self._front: IO[bytes] = (folder / "foreground").open("ab")
        self.foreground = Foreground.make(f"arena-suite-foreground-{folder.parent.name}")

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

    @contextlib.contextmanager
    def in_front(self) -> Iterator[None]:
        """A foreground test's turn: the only one in the foreground cgroup, the other workers' tests going on
        beside it; ``alone`` where there is no such cgroup."""
        if self.foreground is None:
            with self.turn(alone=True):
                yield
            return
        with self.turn(alone=False):
            fcntl.flock(self._front, fcntl.LOCK_EX)
            try:
                with self.foreground.inside():
                    yield
            finally:
                fcntl.flock(self._front, fcntl.LOCK_UN)

    def close(self) -> None:
        """Remove the foreground cgroup if it is empty (another worker's test may still be in it)."""
        if self.foreground is not None:
            with contextlib.suppress(OSError):
                self.foreground.folder.rmdir()


@functools.cache
def turns(config: pytest.Config) -> Turns | None:
    """The run's lock files when this process is an xdist worker, else None (a single process needs no lock). A
    worker's temporary folder is ``<the run's>/popen-gwN``; the locks live beside those of the other workers."""
    if not os.environ.get("PYTEST_XDIST_WORKER") or not config.option.basetemp:
        return None
    return Turns(Path(config.option.basetemp).parent / "turns")


@contextlib.contextmanager
def turn_for(item: pytest.Item) -> Iterator[None]:
    """The turn ``item`` runs in: its marker's, or shared."""
    lock = turns(item.config)
    if lock is None:
        yield
    elif item.get_closest_marker("alone") is not None:
        with lock.turn(alone=True):
            yield
    elif item.get_closest_marker("foreground") is not None:
        with lock.in_front():
            yield
    else:
        with lock.turn(alone=False):
            yield


def order(items: list[pytest.Item]) -> None:
    """The files with an ``alone`` test first, and such tests first in their file (see the module); the rest keeps
    its order."""
    def alone(item: pytest.Item) -> bool:
        return item.get_closest_marker("alone") is not None

    files = {item.nodeid.split("::")[0] for item in items if alone(item)}
    items.sort(key=lambda item: (item.nodeid.split("::")[0] not in files, not alone(item)))
