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

Files are given out longest first (the longest-processing-time rule: the run ends with short files, not one
worker on a 70-s file while the others idle), by each file's seconds in the last run (pytest's cache; a run that
deselected some of a file's tests does not count for it), else in ``file_seconds.json`` (a run's figures, committed
for a fresh checkout: ``python -m tests.parallel`` writes the cache's into it), else 0.3 s a test. The files with an
``alone`` test go near the end, before short files that add up to three times their own seconds: such a test waits
for every other worker's test in progress to end, and there those are short (given out anywhere, it once waited 10 s
at a time for the long ones, the machine a third idle), while the files after them keep the other workers busy (put
last, they were the run's last 40 s on one worker).
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
from collections import defaultdict
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
        """The run's foreground cgroup (made by the first worker that asks, inside this process's own cpu cgroup),
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


CACHE_KEY = "arena/file-seconds"
COMMITTED = Path(__file__).with_name("file_seconds.json")
UNKNOWN_S = 0.3  # a test of a file no run has timed yet
TAIL_FACTOR = 3.0  # the short files after the alone ones: three times their seconds, for the three other workers


def file_of(nodeid: str) -> str:
    """The test file of a node id."""
    return nodeid.split("::")[0]


def known_seconds(config: pytest.Config) -> dict[str, float]:
    """Each file's seconds: the last run's where the cache has them, else the committed figures."""
    seconds: dict[str, float] = json.loads(COMMITTED.read_text()) if COMMITTED.exists() else {}
    cache = getattr(config, "cache", None)
    if cache is not None:
        seconds.update(cache.get(CACHE_KEY, {}))
    return seconds


def order(items: list[pytest.Item], seconds: dict[str, float]) -> None:
    """Files longest first, those with an ``alone`` test near the end (see the module); a file's tests keep their
    order (pytest-xdist gives files out in this order with ``--no-loadscope-reorder``)."""
    files: dict[str, list[pytest.Item]] = defaultdict(list)
    for item in items:
        files[file_of(item.nodeid)].append(item)

    def cost(name: str) -> float:
        return seconds.get(name, UNKNOWN_S * len(files[name]))

    alone = [name for name, tests in files.items() if any(t.get_closest_marker("alone") for t in tests)]
    ranked = sorted((name for name in files if name not in alone), key=cost, reverse=True)
    tail, after = TAIL_FACTOR * sum(cost(name) for name in alone), 0.0
    cut = len(ranked)
    while cut > 0 and after + cost(ranked[cut - 1]) <= tail:
        cut -= 1
        after += cost(ranked[cut])
    items[:] = [item for name in [*ranked[:cut], *alone, *ranked[cut:]] for item in files[name]]


class Stopwatch:
    """Each file's seconds in this run, kept in pytest's cache for the next run's order (in the process that sees
    every report: the xdist controller, or the only process)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.partial: set[str] = set()  # files some of whose tests were deselected

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self.partial.update(file_of(item.nodeid) for item in items)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.seconds[file_of(report.nodeid)] += report.duration

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        cache = getattr(session.config, "cache", None)
        if cache is None or not self.seconds:
            return
        known = dict(cache.get(CACHE_KEY, {}))
        known.update({name: round(s, 1) for name, s in self.seconds.items() if name not in self.partial})
        cache.set(CACHE_KEY, known)


def save_committed(root: Path) -> None:
    """``file_seconds.json`` from the cache of the last runs (``python -m tests.parallel``)."""
    cached = root / ".pytest_cache" / "v" / CACHE_KEY
    seconds = json.loads(cached.read_text())
    COMMITTED.write_text(json.dumps(dict(sorted(seconds.items())), indent=0) + "\n")
    print(f"{COMMITTED}: {len(seconds)} files, {sum(seconds.values()):.0f} s")


if __name__ == "__main__":
    save_committed(Path(__file__).resolve().parents[1])
