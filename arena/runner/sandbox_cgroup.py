"""A cgroup per sandboxed bot process: one cap on the memory, the processes and the CPU of everything it starts.

Per-process limits (RLIMIT_AS, RLIMIT_CPU) let a bot with N processes take N times its share; a cgroup counts them
together. Each bot process gets its own cgroup, made when it starts and removed when it ends:

* memory: ``sandbox.memory_mb`` of memory (and no swap) for all its processes together; past it the kernel's OOM
  killer ends one of them, and arena ends the rest and records the bot as crashed, saying which cap it broke;
* processes: ``sandbox.processes`` processes and threads together;
* CPU: ``sandbox.cpus`` cores' worth of CPU time per 10 ms, all its processes together (what a period leaves unused
  carries over to the next, up to one period's worth, for short bursts).

Both layouts are read at run time from ``/proc/self/mountinfo`` and ``/proc/self/cgroup``:

* cgroup v2 (one hierarchy): the bots' cgroups are children of arena's own cgroup, which must have the ``memory``
  and ``pids`` controllers (``cpu`` too, for the CPU cap) enabled for its children (``cgroup.subtree_control``), or
  let arena enable them: as root at the root of the hierarchy, or in a cgroup delegated to it where arena is the only
  process (``systemd-run --scope -p Delegate=yes``; arena then moves itself into a leaf, ``arena-referee-PID``, as
  cgroup v2 asks);
* cgroup v1 (a hierarchy per controller, as on hosts with a hybrid layout): children of arena's own cgroup in the
  ``memory`` hierarchy, and in ``pids`` and ``cpu`` where they are mounted and writable.

Where neither is writable (an ordinary user without delegation, most containers), ``layout`` says why and the bots
keep only their per-process limits. Cgroups left by an arena process that was killed are removed by the next one.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import itertools
import os
import re
import signal
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

CPU_PERIOD_US = 10_000  # short: a bot over its share waits at most about this long (the kernel's 100 ms would
# hold a bot with a brief burst of threads for up to 100 ms, a whole decision on a fast clock)
PREFIX = "arena-"
_NAME = re.compile(r"^arena-(\d+)-\d+$")


class CgroupError(RuntimeError):
    """A bot's cgroup could not be made or filled."""


@dataclass(frozen=True, slots=True)
class CgroupLayout:
    """Where the bots' cgroups go: one folder per hierarchy (v2: one folder) and the controllers each holds."""

    version: int
    parents: tuple[tuple[Path, frozenset[str]], ...]  # (folder, its controllers for children)

    @property
    def controllers(self) -> frozenset[str]:
        """Every controller the bots' cgroups have."""
        return frozenset().union(*(c for _, c in self.parents))

    def describe(self) -> str:
        """One line on where the bots' cgroups go."""
        where = ", ".join(f"{p} ({'+'.join(sorted(c))})" for p, c in self.parents)
        return f"cgroup v{self.version}: {where}"


def _mounts(mountinfo: str) -> list[tuple[str, str, str, set[str]]]:
    """(root, mount point, file system type, super options) of every cgroup mount."""
    out = []
    for line in mountinfo.splitlines():
        left, _, right = line.partition(" - ")
        fields, rest = left.split(), right.split()
        if len(fields) < 5 or len(rest) < 3 or rest[0] not in ("cgroup", "cgroup2"):
            continue
        out.append((fields[3], fields[4].replace("\\040", " "), rest[0], set(rest[2].split(","))))
    return out


def _own(cgroup: str) -> dict[str, str]:
    """This process's cgroup per hierarchy: ``{"memory": "/a/b", "": "/x"}`` ("" is cgroup v2's)."""
    out: dict[str, str] = {}
    for line in cgroup.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            for name in parts[1].split(",") if parts[1] else [""]:
                out[name] = parts[2]
    return out


def _under(mount_point: str, mount_root: str, path: str) -> Path:
    """The folder of cgroup ``path`` in a hierarchy mounted at ``mount_point`` from ``mount_root``."""
    if mount_root != "/" and (path == mount_root or path.startswith(mount_root.rstrip("/") + "/")):
        path = path[len(mount_root):] or "/"
    return Path(mount_point) / path.lstrip("/")


def _writable(folder: Path) -> bool:
    return folder.is_dir() and os.access(folder, os.W_OK | os.X_OK)


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _v2_parent(folder: Path) -> tuple[Path | None, str]:
    """The folder where bots' v2 cgroups can be made with memory and pids (and cpu) for them, or why not."""
    available = set(_read(folder / "cgroup.controllers").split())
    wanted = {"memory", "pids"} | ({"cpu"} & available)
    if not {"memory", "pids"} <= available:
        return None, f"cgroup v2 at {folder} offers {' '.join(sorted(available)) or 'no controllers'} to arena's " \
                     "cgroup, not memory and pids"
    if not _writable(folder):
        return None, f"cgroup v2: arena's cgroup {folder} is not writable (run as root, or in a delegated cgroup: " \
                     "systemd-run --user --scope -p Delegate=yes arena ...)"
    enabled = set(_read(folder / "cgroup.subtree_control").split())
    if wanted <= enabled:
        return folder, ""
    try:
        (folder / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in sorted(wanted - enabled)))
        return folder, ""
    except OSError as exc:
        if exc.errno != errno.EBUSY:
            return None, f"cgroup v2: cannot enable {' '.join(sorted(wanted))} in {folder}: {exc.strerror}"
    # cgroup v2 lets a cgroup with processes have no controllers for its children: move arena into a leaf, if it is
    # the only process there (a delegated scope of its own)
    procs = set(_read(folder / "cgroup.procs").split())
    if procs != {str(os.getpid())}:
        return None, f"cgroup v2: arena's cgroup {folder} holds other processes, so cgroup v2 cannot give its " \
                     "children controllers (run arena in a cgroup of its own: systemd-run --scope -p Delegate=yes)"
    leaf = folder / f"{PREFIX}referee-{os.getpid()}"
    try:
        leaf.mkdir(exist_ok=True)
        (leaf / "cgroup.procs").write_text(str(os.getpid()))
        (folder / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in sorted(wanted - enabled)))
    except OSError as exc:
        return None, f"cgroup v2: cannot move arena into {leaf} to give the bots controllers: {exc.strerror}"
    return folder, ""


def find_layout(mountinfo: str, cgroup: str) -> tuple[CgroupLayout | None, str]:
    """The layout the bots' cgroups can use, read from ``/proc/self/mountinfo`` and ``/proc/self/cgroup``; else
    None and the reason."""
    mounts = _mounts(mountinfo)
    own = _own(cgroup)
    reasons: list[str] = []
    for root, point, kind, _ in mounts:
        if kind == "cgroup2" and "" in own:
            parent, why = _v2_parent(_under(point, root, own[""]))
            if parent is not None:
                controllers = set(_read(parent / "cgroup.subtree_control").split()) & {"memory", "pids", "cpu"}
                return CgroupLayout(2, ((parent, frozenset(controllers)),)), ""
            reasons.append(why)
    parents: list[tuple[Path, frozenset[str]]] = []
    for wanted in ("memory", "pids", "cpu"):
        for root, point, kind, options in mounts:
            if kind == "cgroup" and wanted in options and wanted in own:
                folder = _under(point, root, own[wanted])
                if _writable(folder):
                    controller = frozenset({wanted})
                    if any(folder == p for p, _ in parents):
                        parents = [(p, c | controller if p == folder else c) for p, c in parents]
                    else:
                        parents.append((folder, controller))
                elif wanted == "memory":
                    reasons.append(f"cgroup v1: the memory hierarchy's {folder} is not writable (run as root)")
                break
    if any("memory" in c for _, c in parents):
        return CgroupLayout(1, tuple(parents)), ""
    if not reasons:
        reasons.append("no cgroup v2 with memory and pids, no cgroup v1 memory hierarchy is mounted")
    return None, "; ".join(reasons)


@functools.cache
def layout() -> tuple[CgroupLayout | None, str]:
    """This host's layout for the bots' cgroups (read once), or None and why there is none."""
    try:
        mountinfo = Path("/proc/self/mountinfo").read_text()
        cgroup = Path("/proc/self/cgroup").read_text()
    except OSError as exc:
        return None, f"cannot read /proc/self: {exc}"
    found, why = find_layout(mountinfo, cgroup)
    if found is not None:
        clean_leftovers(found)
    return found, why


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _kill_all(folders: Iterable[Path]) -> None:
    """SIGKILL every process in the cgroups ``folders`` (``cgroup.kill`` where the kernel has it)."""
    for folder in folders:
        kill = folder / "cgroup.kill"
        if kill.exists():
            with contextlib.suppress(OSError):
                kill.write_text("1")
            continue
        for pid in _read(folder / "cgroup.procs").split():
            with contextlib.suppress(ProcessLookupError, PermissionError, ValueError):
                os.kill(int(pid), signal.SIGKILL)


def _remove(folders: list[Path], wait_s: float = 5.0) -> bool:
    """Kill what is left in ``folders`` and remove them (a cgroup goes once its last process is reaped)."""
    deadline = time.monotonic() + wait_s
    left = [f for f in folders if f.exists()]
    while left:
        _kill_all(left)
        for folder in list(left):
            try:
                folder.rmdir()
                left.remove(folder)
            except FileNotFoundError:
                left.remove(folder)
            except OSError:
                pass
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.01)
    return not left


def clean_leftovers(found: CgroupLayout) -> list[Path]:
    """Remove the bots' cgroups that an arena process which has died left behind (``arena-PID-N`` whose PID is
    gone); the removed folders."""
    removed: list[Path] = []
    for parent, _ in found.parents:
        with contextlib.suppress(OSError):
            for entry in parent.iterdir():
                match = _NAME.match(entry.name)
                if match and entry.is_dir() and not _alive(int(match.group(1))) and _remove([entry], 1.0):
                    removed.append(entry)
    return removed


_serial = itertools.count()


class BotCgroup:
    """One bot process's cgroup (a folder per hierarchy): made with its limits, entered by the bot's first process,
    watched for OOM kills, removed with whatever is left in it."""

    def __init__(self, found: CgroupLayout, memory_mb: int, processes: int, cpus: float) -> None:
        self.layout = found
        self.memory_mb = memory_mb
        self.name = f"{PREFIX}{os.getpid()}-{next(_serial)}"
        self.folders = [parent / self.name for parent, _ in found.parents]
        try:
            for folder in self.folders:
                folder.mkdir()
            self._limit(memory_mb, processes, cpus)
        except OSError as exc:
            _remove(self.folders, 1.0)
            raise CgroupError(f"cannot make the bot's cgroup {self.name}: {exc}") from None

    def _folder(self, controller: str) -> Path | None:
        for (_, controllers), folder in zip(self.layout.parents, self.folders, strict=True):
            if controller in controllers:
                return folder
        return None

    def _limit(self, memory_mb: int, processes: int, cpus: float) -> None:
        memory, pids, cpu = self._folder("memory"), self._folder("pids"), self._folder("cpu")
        v2 = self.layout.version == 2
        if memory is not None and memory_mb:
            size = str(memory_mb * 1024 * 1024)
            if v2:
                (memory / "memory.max").write_text(size)
                for name, value in (("memory.swap.max", "0"), ("memory.oom.group", "1")):
                    if (memory / name).exists():
                        (memory / name).write_text(value)
            else:
                (memory / "memory.limit_in_bytes").write_text(size)
                if (memory / "memory.memsw.limit_in_bytes").exists():  # memory and swap together: no swap
                    (memory / "memory.memsw.limit_in_bytes").write_text(size)
        if pids is not None and processes:
            (pids / "pids.max").write_text(str(processes))
        if cpu is not None and cpus:
            quota = max(1000, int(cpus * CPU_PERIOD_US))
            if v2:
                (cpu / "cpu.max").write_text(f"{quota} {CPU_PERIOD_US}")
            else:
                (cpu / "cpu.cfs_period_us").write_text(str(CPU_PERIOD_US))
                (cpu / "cpu.cfs_quota_us").write_text(str(quota))
            burst = cpu / ("cpu.max.burst" if v2 else "cpu.cfs_burst_us")
            if burst.exists():  # what a period left unused carries over, up to one more period's quota: short bursts
                burst.write_text(str(quota))

    @property
    def procs_files(self) -> list[Path]:
        """The files the bot's first process writes its pid to, to enter this cgroup (every hierarchy's)."""
        return [folder / "cgroup.procs" for folder in self.folders]

    def oom_kills(self) -> int:
        """How many of the bot's processes the kernel killed for going over the memory cap."""
        memory = self._folder("memory")
        if memory is None:
            return 0
        text = _read(memory / ("memory.events" if self.layout.version == 2 else "memory.oom_control"))
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill" and value.strip().isdigit():
                return int(value)
        return 0

    def peak_bytes(self) -> int:
        """The most memory the bot's processes held at once (0 where the kernel does not say)."""
        memory = self._folder("memory")
        if memory is None:
            return 0
        text = _read(memory / ("memory.peak" if self.layout.version == 2 else "memory.max_usage_in_bytes")).strip()
        return int(text) if text.isdigit() else 0

    def kill(self) -> None:
        """SIGKILL every process of the bot."""
        _kill_all(self.folders)

    def remove(self) -> bool:
        """End whatever is left in the cgroup and remove it; False if the kernel would not let it go."""
        return _remove(self.folders)


ENTER_SCRIPT = 'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done; exec "$@"'


def enter_argv(procs_files: list[Path], argv: list[str]) -> list[str]:
    """``argv`` run from a shell that first moves itself into the cgroups (so that everything the bot starts is
    born inside them), then becomes ``argv``."""
    return ["/bin/sh", "-c", ENTER_SCRIPT, "arena-cgroup", str(len(procs_files)), *map(str, procs_files), *argv]
