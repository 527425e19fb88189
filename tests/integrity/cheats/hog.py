#!/usr/bin/env python3
"""Cheat bot ``hog``: takes memory in several processes at once, each under the per-process limit, together far over
the bot's cap (issue 24: 4 children x 2.6 GB in each of two processes took 21.5 GB of a 24 GB host).

``python hog.py --children N --mb M``: at its first request it starts N child processes (fresh interpreters, so no
thread of the SDK is forked), each of which touches M MiB of memory in 64 MiB steps, printing ``HOG-CHILD i MB`` after
each step, then ``HOG-HELD i MB``, and holds it until the bot ends. Once every child holds its memory (or died) it
prints ``HOG {json}`` (the MiB each child held), answers that first request and plays on (check, else call), its
children holding on. Give it a slow clock (the children take a second or two).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading

from arena_sdk import Action, Bot, Request, call, check, run

CHILD = """
import sys, time
index, mb = int(sys.argv[1]), int(sys.argv[2])
blocks = []
for done in range(64, mb + 64, 64):
    step = min(64, mb - (done - 64))
    block = bytearray(step << 20)
    block[::4096] = b"x" * len(range(0, step << 20, 4096))  # touch every page: resident, not merely mapped
    blocks.append(block)
    print(f"HOG-CHILD {index} {min(done, mb)}", flush=True)
print(f"HOG-HELD {index} {mb}", flush=True)
time.sleep(600)
"""


class Hog(Bot):
    def __init__(self, children: int, mb: int) -> None:
        self.children, self.mb = children, mb
        self.started = False

    def act(self, request: Request) -> Action:
        if not self.started:
            self.started = True
            self.hog()
        return check() if request.legal.can_check else call()

    def hog(self) -> None:
        held = [0] * self.children
        printing = threading.Lock()  # print writes a line and its newline apart: two threads' lines could interleave

        def follow(index: int, proc: subprocess.Popen[str]) -> None:
            assert proc.stdout is not None
            for line in proc.stdout:  # until it holds all its memory (or dies)
                with printing:
                    print(line.rstrip(), flush=True)
                words = line.split()
                if words[0] == "HOG-CHILD":
                    held[index] = int(words[2])
                elif words[0] == "HOG-HELD":
                    return

        procs = [subprocess.Popen([sys.executable, "-c", CHILD, str(i), str(self.mb)], stdout=subprocess.PIPE,
                                  text=True) for i in range(self.children)]
        threads = [threading.Thread(target=follow, args=(i, p), daemon=True) for i, p in enumerate(procs)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.procs = procs  # held on to: the children live as long as the bot
        print("HOG " + json.dumps({"children": self.children, "mb": self.mb, "held": held}), flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--children", type=int, required=True)
    parser.add_argument("--mb", type=int, required=True)
    arguments, rest = parser.parse_known_args()
    raise SystemExit(run(Hog(arguments.children, arguments.mb), name="hog", version="1", argv=rest).exit_code)
