#!/usr/bin/env python3
"""Not a bot: ``python peeker.py SECONDS PATH...`` reads every PATH ten times a second for SECONDS, as a bot whose
own folder holds the referee's files would, and prints one line ``PEEK {json}`` per path and outcome seen (what a
read gave: its length and whether it held a seed, or the error). The first line ``PEEK-READY`` says it is looking.
"""

from __future__ import annotations

import json
import sys
import time

MARKER = b"SEED" + b"HUNT-"


def peek(path: str) -> str:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        return f"error {type(exc).__name__}"
    return f"{len(data)} bytes" + (", a seed" if MARKER in data else "")


def main(argv: list[str]) -> None:
    seconds, paths = float(argv[0]), argv[1:]
    seen: dict[str, set[str]] = {path: set() for path in paths}
    deadline = time.monotonic() + seconds
    first = True
    while time.monotonic() < deadline:
        for path in paths:
            outcome = peek(path)
            if outcome not in seen[path]:
                seen[path].add(outcome)
                print("PEEK " + json.dumps({"path": path, "read": outcome}), flush=True)
        if first:
            print("PEEK-READY", flush=True)
            first = False
        time.sleep(0.1)


if __name__ == "__main__":
    main(sys.argv[1:])
