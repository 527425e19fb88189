#!/usr/bin/env python3
"""A bot that forks, as one that simulates in several processes does: at its first ``POOLS`` requests it maps work
over a ``multiprocessing`` pool of the fork context, at its next ones up to ``FORKS`` it forks three children that
work for half a second (long enough for any timer of gRPC's they inherited to come due) and exit; it waits for them
and calls (as it does at every request after). The children inherit the connection's socket and must never touch
it. Prints ``FORKED {n}`` at the end: the requests it forked at."""

from __future__ import annotations

import multiprocessing
import os
import sys
import time

from arena_sdk import Action, Bot, Request, call, check, run


def work(seconds: float) -> int:
    """Squares summed for ``seconds`` (long enough for any timer the child inherited to come due)."""
    total = i = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        total += i * i
        i += 1
    return total


POOLS, FORKS = 3, 5


class ForkingBot(Bot):
    forked = 0

    def act(self, request: Request) -> Action:
        if self.forked < FORKS:
            self.fork()
        return check() if request.legal.can_check else call()

    def fork(self) -> None:
        self.forked += 1
        if self.forked <= POOLS:
            with multiprocessing.get_context("fork").Pool(3) as pool:
                pool.map(work, [0.05] * 6)
            return
        children = []
        for _ in range(3):
            pid = os.fork()
            if pid == 0:
                work(0.5)
                os._exit(0)
            children.append(pid)
        for pid in children:
            os.waitpid(pid, 0)


if __name__ == "__main__":
    bot = ForkingBot()
    code = run(bot, name="forker", version="1", argv=sys.argv[1:]).exit_code
    print(f"FORKED {bot.forked}", flush=True)
    raise SystemExit(code)
