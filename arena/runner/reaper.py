"""``python -m arena.runner.reaper COMMAND``: run an unsandboxed bot command and end its whole process group when
the referee dies, however it dies (a parent-death signal; the sandbox has ``--die-with-parent`` for this).

The runner starts this in a new session, so the group is the bot's alone.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
from types import FrameType

PR_SET_PDEATHSIG = 1


def _end_group(signum: int = 0, frame: FrameType | None = None) -> None:
    os.killpg(0, signal.SIGKILL)


def main(argv: list[str]) -> int:
    """Run ``argv[0]`` through ``/bin/sh -c``; return its exit status."""
    if len(argv) != 1:
        print("usage: python -m arena.runner.reaper COMMAND", file=sys.stderr)
        return 2
    parent = os.getppid()
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    signal.signal(signal.SIGTERM, _end_group)
    if os.getppid() != parent:  # the referee died before the signal was armed
        _end_group()
    child = subprocess.Popen(["/bin/sh", "-c", argv[0]])
    return child.wait()


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
