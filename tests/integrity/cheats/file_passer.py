#!/usr/bin/env python3
"""Cheat bot ``file passer``: leaves every hand it sees in a file in every writable place it can find, and looks
for such files left by an earlier run (or by its other process, playing the other rotation right now).

Writable places: ``$HOME``, ``$TMPDIR``, /tmp, its working directory, its own folder, /dev/shm, /var/tmp, /run,
and every folder it can write to in a walk of the file system (outside /usr, /proc and /sys). Its files are named
``arena-passer-*.json`` and start with ``PASSER``. At start and at every hand it looks for files of that name in
all those places; at the match's end it prints one line ``PASSER {json}``: where it could write, what it found.
It plays check, else call.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from arena_sdk import Action, Bot, Request, call, check, run
from arena_sdk.pb import bot_pb2

PREFIX = "arena-passer-"
SKIP = ("/usr", "/proc", "/sys", *{sys.prefix, sys.base_prefix})


def candidates() -> list[str]:
    """Every folder this process may be able to write to."""
    places = {os.environ.get("HOME", ""), os.environ.get("TMPDIR", ""), "/tmp", os.getcwd(),
              str(Path(__file__).resolve().parent), "/dev/shm", "/var/tmp", "/run", "/run/arena", "/"}
    for root, dirs, _files in os.walk("/"):
        dirs[:] = [d for d in dirs if not os.path.join(root, d).startswith(SKIP)]
        if os.access(root, os.W_OK):
            places.add(root)
    return sorted(p for p in places if p)


class FilePasser(Bot):
    def __init__(self) -> None:
        self.places = candidates()
        self.writable: set[str] = set()
        self.refused: dict[str, str] = {}
        self.own: set[str] = set()
        self.found_at_start = self.look()
        self.found_later: dict[str, str] = {}
        self.hands = 0

    def look(self) -> dict[str, str]:
        """Files another run (or process) left: path -> their first line."""
        found: dict[str, str] = {}
        for place in self.places:
            try:
                names = os.listdir(place)
            except OSError:
                continue
            for name in names:
                path = os.path.join(place, name)
                if name.startswith(PREFIX) and path not in self.own:
                    try:
                        with open(path, encoding="utf-8", errors="replace") as f:
                            found[path] = f.readline().strip()[:200]
                    except OSError as exc:
                        found[path] = f"unreadable: {exc.strerror}"
        return found

    def on_hand_start(self, msg: bot_pb2.HandStart) -> None:
        for path, text in self.look().items():
            self.found_later.setdefault(path, text)

    def on_hand_end(self, msg: bot_pb2.HandEnd) -> None:
        self.hands += 1
        line = f"PASSER {json.dumps({'pid': os.getpid(), 'hand': msg.hand_id, 'board': list(msg.board)})}\n"
        for place in self.places:
            path = os.path.join(place, f"{PREFIX}{os.getpid()}.json")
            try:
                with open(path, "a", encoding="utf-8") as f:
                    f.write(line)
                self.writable.add(place)
                self.own.add(path)
            except OSError as exc:
                self.refused[place] = exc.strerror or str(exc)

    def act(self, request: Request) -> Action:
        return check() if request.legal.can_check else call()

    def on_match_end(self, msg: bot_pb2.MatchEnd) -> None:
        report: dict[str, Any] = {"uid": os.getuid(), "places": len(self.places), "writable": sorted(self.writable),
                                  "found_at_start": self.found_at_start, "found_later": self.found_later,
                                  "hands": self.hands}
        print("PASSER " + json.dumps(report), flush=True)


if __name__ == "__main__":
    raise SystemExit(run(FilePasser(), name="file-passer", version="1").exit_code)
