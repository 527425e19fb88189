"""The uid of each sandboxed bot process when arena runs as root: unique on the host, whatever number of arena
processes run at once.

A uid is taken by holding an exclusive ``flock`` on its own file in ``/run/arena/uids`` (``61000.lock``...) for the
sandbox's whole life: the lock goes when the sandbox is cleaned up, or when the arena process dies however it dies
(the kernel drops a dead process's locks), so nothing is ever left taken. A uid that some process still runs as (a
bot of a killed arena process not yet reaped) is passed over. Every bot therefore has a uid of its own on the host,
and the process limit (RLIMIT_NPROC, counted per uid) is that bot's own: a fork bomb in one match cannot stop
another match's bot from starting a thread.

``per_process_uids`` is the old numbering (each arena process counts from 61000 alone), kept to show the collision.
"""

from __future__ import annotations

import fcntl
import itertools
import os
import threading
from pathlib import Path

UID_BASE = 61000  # uids 61000..61999 for sandboxed bots when arena runs as root (free on Debian: users stop below)
UID_SPAN = 1000
LOCK_DIR = Path("/run/arena/uids")


class UidError(RuntimeError):
    """No uid of the range is free (every one is held by a running sandbox), or the lock folder cannot be made."""


class UidLease:
    """A uid held for one sandbox: ``release`` gives it back (the arena process's death does too)."""

    def __init__(self, uid: int, fd: int | None) -> None:
        self.uid = uid
        self._fd = fd

    def release(self) -> None:
        """Give the uid back."""
        if self._fd is not None:
            os.close(self._fd)  # closing the file drops its lock
            self._fd = None


def uids_in_use() -> set[int]:
    """The uids that processes run as (the owner of ``/proc/PID`` is the process's effective uid)."""
    used: set[int] = set()
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                used.add(entry.stat().st_uid)
            except OSError:
                continue  # it ended meanwhile
    return used


_start = itertools.count()
_start_lock = threading.Lock()


def take_uid(lock_dir: Path = LOCK_DIR, base: int = UID_BASE, span: int = UID_SPAN) -> UidLease:
    """A uid of ``base .. base + span - 1`` that no other sandbox on this host holds and no process runs as."""
    try:
        lock_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise UidError(f"cannot make {lock_dir}, where the sandboxes' uids are locked: {exc}") from None
    used = uids_in_use()
    with _start_lock:  # start where the last search of this process ended: fewer locks tried
        first = next(_start) % span
    for step in range(span):
        uid = base + (first + step) % span
        if uid in used:
            continue
        fd = os.open(lock_dir / f"{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return UidLease(uid, fd)
    raise UidError(f"all {span} sandbox uids ({base}..{base + span - 1}) are in use on this host: too many bots run "
                   "at once")


_numbering = itertools.count()


def per_process_uid(base: int = UID_BASE, span: int = UID_SPAN) -> UidLease:
    """The old numbering: the next uid of this process's own count from ``base`` (two arena processes repeat each
    other's uids; kept only as the control that shows it)."""
    return UidLease(base + next(_numbering) % span, None)
