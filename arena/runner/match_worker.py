"""``python -m arena.runner.match_worker --parent PID``: play one match on this node and stream it back.

A remote executor's task starts this in a session (and process group) of its own: it reads the ``MatchJob`` from its
standard input (the seed with it: never an argument, an environment variable or a file, where a bot or another user
of the node could read it), plays the match as the local executor does (a referee on a private Unix-domain socket,
sandboxed bots), and writes each finished hand, then the result (or the failure), to its standard output as codec
frames. It dies with the task that started it (a parent-death signal), and its bots die with it (bubblewrap's
``--die-with-parent``, or the reaper's, unsandboxed), so a killed worker or node leaves no process behind.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import logging
import os
import signal
import sys
from typing import IO

from arena.referee import HandRecord
from arena.runner.codec import MatchFailure, decode_value, encode, read_frames, write_frame
from arena.runner.executor import LocalExecutor, MatchJob

PR_SET_PDEATHSIG = 1


class FrameSink:
    """Each finished hand as a frame on the stream to the task."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream

    def hand_finished(self, record: HandRecord) -> None:
        """Send one hand (the HandSink interface): it is durable once the driver has written it."""
        write_frame(self.stream, encode(record))


def _die_with(parent: int) -> None:
    """End this process when ``parent`` (the task's worker process) ends, however it ends."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # it died before the signal was armed
        os._exit(1)


def main(argv: list[str]) -> int:
    """Read the job, play it, stream it; 0 when the match was played (whatever its bots did), 1 when it failed."""
    parser = argparse.ArgumentParser(prog="python -m arena.runner.match_worker")
    parser.add_argument("--parent", type=int, required=True, help="the pid to die with")
    args = parser.parse_args(argv)
    _die_with(args.parent)
    logging.basicConfig(level=logging.ERROR, stream=sys.stderr)
    frames = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # a stray print cannot tear the frames
    bodies = list(read_frames(sys.stdin.buffer))
    if len(bodies) != 1:
        write_frame(frames, encode(MatchFailure("", f"expected one job on standard input, got {len(bodies)}")))
        return 1
    job: MatchJob = decode_value(MatchJob, bodies[0])
    try:
        result = asyncio.run(LocalExecutor().play(job, FrameSink(frames)))
    except Exception as exc:
        where = f"on {os.uname().nodename}: {type(exc).__name__}: {exc}"
        write_frame(frames, encode(MatchFailure(job.spec.match_id, where)))
        return 1
    write_frame(frames, encode(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
