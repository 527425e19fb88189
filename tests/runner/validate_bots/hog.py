"""A bot that, at its first request, starts two child processes that each touch ``--mb`` MiB (each under its
per-process address-space limit, together over the bot's memory cap), then waits for them while its clock runs."""

import argparse
import subprocess
import sys
import time

from arena_sdk import Action, Bot, Request, call, check, run

CHILD = """
import sys, time
blocks = []
for _ in range(int(sys.argv[1]) // 16):
    block = bytearray(16 << 20)
    block[::4096] = b"x" * len(range(0, 16 << 20, 4096))  # every page touched: resident, not merely mapped
    blocks.append(block)
time.sleep(600)
"""


class Hog(Bot):
    def __init__(self, mb: int) -> None:
        self.mb = mb
        self.children: list[subprocess.Popen[bytes]] = []

    def act(self, request: Request) -> Action:
        if not self.children:
            self.children = [subprocess.Popen([sys.executable, "-c", CHILD, str(self.mb)]) for _ in range(2)]
            time.sleep(2)
        return check() if request.legal.can_check else call()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, required=True)
    arguments, rest = parser.parse_known_args()
    raise SystemExit(run(Hog(arguments.mb), name="hog", argv=rest).exit_code)
