#!/usr/bin/env python3
"""Cheat bot ``uid holder``: forks until its process limit refuses, and keeps every child, so that its uid has no
process left to start (issue 24: a bot doing this made another arena process's bot, given the same uid, unable to
start: that match was recorded no_show).

``python uid_holder.py --hold``: it forks sleeping children until the kernel refuses one, prints ``UID {json}`` (its
uid, how many children it holds, what refused the next), and holds them, never joining: the referee waits for it
meanwhile. ``python uid_holder.py`` prints its uid and plays (check, else call): an honest bot that says who it runs
as.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from arena_sdk import Action, Bot, Request, call, check, run


def hold(limit: int = 4096) -> dict[str, Any]:
    """Fork sleeping children until the kernel refuses one; keep them all."""
    children = 0
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
        children += 1
    return {"held": children, "refused": error}


class Caller(Bot):
    def act(self, request: Request) -> Action:
        return check() if request.legal.can_check else call()


if __name__ == "__main__":
    if "--hold" in sys.argv[1:]:
        print("UID " + json.dumps({"uid": os.getuid(), **hold()}), flush=True)
        time.sleep(3600)
        raise SystemExit(0)
    print("UID " + json.dumps({"uid": os.getuid()}), flush=True)
    raise SystemExit(run(Caller(), name="uid-holder", version="1").exit_code)
