#!/usr/bin/env python3
"""Cheat bot ``uid holder``: forks until its process limit refuses, and keeps every child, so that its uid has no
process left to start (issue 24: a bot doing this made another arena process's bot, given the same uid, unable to
fork: that match was recorded no_show).

``python uid_holder.py [--hold] [--think-ms MS]``: it prints ``UID {json}`` (its uid, and with ``--hold`` how many
children it holds and what refused the next) before it joins, then plays (check, else call), ``--think-ms`` per
action. Without ``--hold`` it only reports its uid: an honest bot that says who it runs as.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from typing import Any

from arena.sdk import Action, Bot, Request, call, check, run

RESERVE = 24  # threads kept back for the SDK itself (gRPC's), which must still start after the children


def hold(limit: int = 4096) -> dict[str, Any]:
    """Fork sleeping children until the kernel refuses one; then end ``RESERVE`` of them (room for the SDK's
    threads) and keep the rest for the bot's whole life."""
    children: list[int] = []
    error = ""
    for _ in range(limit):
        try:
            pid = os.fork()
        except OSError as exc:
            error = f"{type(exc).__name__}: {exc.strerror}"
            break
        if pid == 0:
            time.sleep(3600)
            os._exit(0)
        children.append(pid)
    for pid in children[:RESERVE]:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    return {"held": len(children) - RESERVE, "refused": error}


class Caller(Bot):
    def __init__(self, think_ms: int) -> None:
        self.think_s = think_ms / 1000

    def act(self, request: Request) -> Action:
        time.sleep(self.think_s)
        return check() if request.legal.can_check else call()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--hold", action="store_true")
    parser.add_argument("--think-ms", type=int, default=0)
    arguments, rest = parser.parse_known_args()
    report: dict[str, Any] = {"uid": os.getuid()}
    if arguments.hold:
        report.update(hold())
    print("UID " + json.dumps(report), flush=True)
    raise SystemExit(run(Caller(arguments.think_ms), name="uid-holder", version="1", argv=rest).exit_code)
