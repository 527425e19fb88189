#!/usr/bin/env python3
"""Cheat bot ``spinner``: burns CPU in several processes at once, to crowd out the referee and the other bots.

``python spinner.py --processes N --seconds S``: at its first request it starts N child processes that spin for S
seconds of wall time, waits for them, and prints ``SPIN {json}``: the CPU seconds they used together (their rusage).
Then it plays on (check, else call). Give it a slow clock.
"""

from __future__ import annotations

import argparse
import json
import os
import time

from arena_sdk import Action, Bot, Request, call, check, run


def spin(processes: int, seconds: float) -> dict[str, float]:
    started = time.monotonic()
    children = []
    for _ in range(processes):
        pid = os.fork()
        if pid == 0:
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                pass
            os._exit(0)
        children.append(pid)
    cpu = 0.0
    for pid in children:
        _, _, usage = os.wait4(pid, 0)
        cpu += usage.ru_utime + usage.ru_stime
    return {"cpu_s": round(cpu, 3), "wall_s": round(time.monotonic() - started, 3)}


class Spinner(Bot):
    def __init__(self, processes: int, seconds: float) -> None:
        self.processes, self.seconds = processes, seconds
        self.done = False

    def act(self, request: Request) -> Action:
        if not self.done:
            self.done = True
            print("SPIN " + json.dumps(spin(self.processes, self.seconds)), flush=True)
        return check() if request.legal.can_check else call()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--processes", type=int, required=True)
    parser.add_argument("--seconds", type=float, required=True)
    arguments, rest = parser.parse_known_args()
    raise SystemExit(run(Spinner(arguments.processes, arguments.seconds), name="spinner", version="1",
                         argv=rest).exit_code)
