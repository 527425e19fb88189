"""Scratch folders in the system's temp folder (a referee's socket, a bot's sandbox files, a league's pages) that
never outlive their process for long: each holds a lock on a file inside for as long as its process lives, and the
first scratch folder a later process makes removes every one whose process died without removing it (SIGKILL, the
out-of-memory killer, a power cut). A league host or a match resumed after a crash cleans up after the crash.

The lock (``flock``) is released by the kernel however its process ends, and is seen across PID namespaces, so a
folder whose process is alive, here or in another container sharing the temp folder, is never taken for a dead one's.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import shutil
import stat
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

log = logging.getLogger(__name__)

PREFIX = "arena-"  # every scratch folder's name starts with it
OWNER = ".arena-owner"  # the file inside whose lock says the folder's process is alive

_held: dict[Path, tuple[int, int]] = {}  # this process's folders: the owner file's descriptor (which holds the
# lock) and the process that made it (a forked child inherits the dict, but never removes its parent's folders)
_lock = threading.Lock()
_swept_in: int | None = None  # the process (pid) that swept already: a forked child sweeps once more


def scratch_folder(prefix: str) -> Path:
    """A new folder in the temp folder, named ``prefix`` (which starts with ``arena-``) and a random suffix, owned
    by this process until ``remove`` or its end. The process's first one sweeps the dead ones first (``sweep``)."""
    if not prefix.startswith(PREFIX):
        raise ValueError(f"a scratch folder's prefix starts with {PREFIX!r}, got {prefix!r}")
    global _swept_in
    with _lock:
        sweep_now = _swept_in != os.getpid()
        _swept_in = os.getpid()
    if sweep_now:
        sweep()
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    # the owner file appears under its name only once locked: a sweep that took the lock of a file not yet locked
    # would remove a live folder (a process sweeping as it starts, beside one making a folder)
    fd = -1
    try:
        fd = os.open(folder / (OWNER + ".new"), os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_CLOEXEC | os.O_NOFOLLOW,
                     0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.rename(folder / (OWNER + ".new"), folder / OWNER)
    except OSError:  # (a full disk): no folder left without an owner file, which no sweep would ever remove
        if fd >= 0:
            os.close(fd)
        shutil.rmtree(folder, ignore_errors=True)
        raise
    with _lock:
        _held[folder] = (fd, os.getpid())
    return folder


def remove(folder: Path) -> None:
    """Remove a scratch folder this process made, and give up its lock (in a forked child, only its copy of the lock:
    the folder is its parent's)."""
    with _lock:
        fd, pid = _held.pop(folder, (None, None))
    if pid == os.getpid():
        shutil.rmtree(folder, ignore_errors=True)
    if fd is not None:
        os.close(fd)


@contextlib.contextmanager
def scratch(prefix: str) -> Iterator[Path]:
    """A scratch folder for a block (``tempfile.TemporaryDirectory``'s use, swept if the process dies in it)."""
    folder = scratch_folder(prefix)
    try:
        yield folder
    finally:
        remove(folder)


def sweep(root: Path | None = None) -> list[Path]:
    """Remove the scratch folders in ``root`` (the temp folder) whose process has died: those with an owner file
    whose lock can be taken, and owned by this user. Folders without an owner file (another program's, one being
    made this instant, or one whose process died in the instant between making it and locking its owner file) are
    left alone. Returns the folders removed."""
    root = Path(root) if root is not None else Path(tempfile.gettempdir())
    removed: list[Path] = []
    try:
        entries = list(os.scandir(root))
    except OSError:
        return removed
    uid = os.getuid()
    for entry in entries:
        try:
            if not entry.name.startswith(PREFIX) or not entry.is_dir(follow_symlinks=False):
                continue
            if entry.stat(follow_symlinks=False).st_uid != uid:
                continue
        except OSError:
            continue
        fd = _unheld_owner(Path(entry.path))
        if fd is None:  # held (its process is alive), or no owner file
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        os.close(fd)
        removed.append(Path(entry.path))
    if removed:
        log.info("removed %d scratch folder(s) left in %s by arena processes that ended without removing them",
                 len(removed), root)
    return removed


def held(folder: Path) -> bool:
    """Whether a live process holds scratch folder ``folder`` (the lock on its owner file is taken: by this process
    or another)."""
    fd = _unheld_owner(folder)
    if fd is None:
        return (folder / OWNER).is_file()
    os.close(fd)  # (the lock just taken goes with it)
    return False


def _unheld_owner(folder: Path) -> int | None:
    """The owner file of ``folder``, opened and locked, if no process held its lock; else None (held, or missing, or
    not a regular file: a FIFO or a device planted there is never waited on)."""
    try:
        fd = os.open(folder / OWNER, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise BlockingIOError
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if os.fstat(fd).st_nlink == 0:  # its owner removed it between the open and the lock: no folder of the dead
            raise BlockingIOError
    except OSError:
        os.close(fd)
        return None
    return fd
