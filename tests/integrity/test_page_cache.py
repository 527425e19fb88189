"""The page cache between a bot's duplicate halves (README, "What a bot can reach"): it outlives a process, so a bot's
first half can leave a message in it for its second, though the two never run at once; ``--drop-caches`` empties it
between the rotations.

The ``page_cache`` cheat's first half loads chosen pages of a file both halves may read; its second half reads back
which pages are cached. It probes with the calls the seccomp filter denies (so the filter is off here: what is tested
is ``--drop-caches`` alone, which also defeats a second half that times plain reads, since no page is left to find).
Without ``--drop-caches`` the second half hears the whole message (the control); with it, it finds nothing and takes
itself for a first half.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from arena.runner.sandbox import DROP_CACHES
from tests.integrity.harness import CALLER, SLOW_JOIN, arena, cheat, match_json, reports

pytestmark = pytest.mark.timeout(120)

MESSAGE = "1011001110001111"  # the cheat's


def blob(folder: Path) -> Path:
    """A file out of the page cache (written, synced, dropped), or a skip where this file system keeps its pages."""
    folder.mkdir()
    path = folder / "blob.bin"
    path.write_bytes(os.urandom(2 << 20))
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        try:
            os.preadv(fd, [bytearray(16)], 64 * 1024, os.RWF_NOWAIT)
        except BlockingIOError:
            return path
    finally:
        os.close(fd)
    pytest.skip(f"{folder}'s file system keeps its pages in memory (tmpfs?): no page cache to pass a message through")


def play(tmp_path: Path, *flags: str) -> list[dict[str, str]]:
    shared = blob(tmp_path / "shared")
    logs = tmp_path / "logs"
    result = match_json(arena("match", *SLOW_JOIN, "--hands", "4", "--json", "--log-dir", str(logs),
                              "--no-bot-seccomp", "--sandbox-bind", str(shared.parent), *flags,
                              "--bot", f"caller={CALLER}", "--bot", f"cheat={cheat('page_cache', str(shared))}",
                              cwd=tmp_path))
    assert result["status"] == "completed", result
    found = reports(logs, "PAGECACHE", "cheat")
    assert len(found) == 2, found  # one a rotation
    return found


def test_without_drop_caches_the_second_half_reads_the_first_halfs_message(tmp_path: Path) -> None:
    assert play(tmp_path) == [{"sent": MESSAGE}, {"heard": MESSAGE}]


@pytest.mark.skipif(not os.access(DROP_CACHES, os.W_OK), reason="--drop-caches needs root")
def test_with_drop_caches_the_second_half_finds_nothing(tmp_path: Path) -> None:
    assert play(tmp_path, "--drop-caches") == [{"sent": MESSAGE}, {"sent": MESSAGE}]


def test_drop_caches_is_refused_where_it_cannot_be_done(tmp_path: Path) -> None:
    if os.access(DROP_CACHES, os.W_OK):
        pytest.skip("root can drop the caches: the refusal is for other users")
    done = arena("match", "--hands", "2", "--drop-caches", "--bot", f"a={CALLER}", "--bot", f"b={CALLER}",
                 cwd=tmp_path)
    assert done.returncode == 1 and "only root may write" in done.stderr, done.stderr
