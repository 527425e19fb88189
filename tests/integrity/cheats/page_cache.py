#!/usr/bin/env python3
"""Cheat bot ``page_cache``: passes a message from its first duplicate half to its second through the page cache,
which outlives a process (README, "What a bot can reach"), then plays check, else call.

``python page_cache.py BLOB``: BLOB is a file both halves may read, out of the page cache when the match starts.
A process that finds BLOB's marker page cached is the second half: it reads the message's bits back, one page each
(cached: 1), and prints ``PAGECACHE {"heard": BITS}``. Otherwise it is the first half: it loads the marker page and
the pages of the message's 1 bits, and prints ``PAGECACHE {"sent": BITS}``. The probes are the calls the seccomp
filter denies (``posix_fadvise``, ``RWF_NOWAIT`` reads): the test runs it with the filter off, to show what
``--drop-caches`` alone does (a second half that timed plain reads would find the same pages).
"""

from __future__ import annotations

import json
import os
import sys

from arena_sdk import Action, Bot, Request, call, check, run

MESSAGE = "1011001110001111"
SPACING = 64 * 1024  # bytes between two bits' pages: far beyond the kernel's readahead of a single page's load
PAGE = 4096


def cached(fd: int, bit: int) -> bool:
    """Whether the page of ``bit`` (-1: the marker) is in the page cache (a read that may not wait for the disk)."""
    try:
        os.preadv(fd, [bytearray(16)], (bit + 1) * SPACING, os.RWF_NOWAIT)
    except BlockingIOError:
        return False
    return True


def load(fd: int, bit: int) -> None:
    os.posix_fadvise(fd, (bit + 1) * SPACING, PAGE, os.POSIX_FADV_WILLNEED)
    os.pread(fd, 16, (bit + 1) * SPACING)


def pass_message(blob: str) -> dict[str, str]:
    fd = os.open(blob, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)  # no readahead around the pages it reads
        if cached(fd, -1):
            return {"heard": "".join("1" if cached(fd, bit) else "0" for bit in range(len(MESSAGE)))}
        load(fd, -1)
        for bit, value in enumerate(MESSAGE):
            if value == "1":
                load(fd, bit)
        return {"sent": MESSAGE}
    finally:
        os.close(fd)


class Caller(Bot):
    def act(self, request: Request) -> Action:
        return check() if request.legal.can_check else call()


if __name__ == "__main__":
    print("PAGECACHE " + json.dumps(pass_message(sys.argv[1])), flush=True)
    raise SystemExit(run(Caller(), name="page-cache", version="1", argv=sys.argv[2:]).exit_code)
