#!/usr/bin/env python3
"""Cheat bot ``seed hunter``: searches everything it can reach for the match's seed, the database and the
configuration, reports what it found, then plays honestly (check, else call).

Where it looks: its environment; every process it can see in /proc (command line, environment, mounts, open files
and what those files hold); the whole file system from / (names everywhere; the contents of every readable file of
up to 1 MiB outside /usr, /proc, /sys, /dev and its own Python installation, public software all); its working
directory; the referee's spectator service on its own socket. It looks for the seed by its shape (the tests'
seeds start with the prefix in ``MARKER``: the attacker is granted that it would know a seed when it saw one), for
SQLite databases by their header, and for files named like the referee's (``*.db``, ``*.seeds``, ``*.seed``,
``*.toml``, ``-wal``, ``-shm``). While the match runs it keeps re-reading every such file it found, in case one
becomes readable later (a file replaced on the host).

The first request waits for the search (out of the time bank); at the match's end it prints one line
``HUNT {json}``.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import time
from pathlib import Path
from typing import Any

import grpc

from arena_sdk import Action, Bot, Request, call, check, run
from arena_sdk.pb import arena_pb2, bot_pb2

MARKER = b"SEED" + b"HUNT-"  # spelled in two parts so that this file does not contain it
SQLITE = b"SQLite format 3\x00"
NAMES = re.compile(r"(\.db|\.sqlite3?|\.seeds?|seeds?\.txt|\.toml|\.db-wal|\.db-shm|\.db-journal)$", re.IGNORECASE)
MAX_READ = 1 << 20
SKIP_CONTENT = ("/usr/", "/proc/", "/sys/", "/dev/", *{p.rstrip("/") + "/" for p in (sys.prefix, sys.base_prefix)})
BUDGET_S = float(os.environ.get("HUNT_BUDGET_S", "20"))


class Findings:
    """Everything the hunt turned up, as JSON-ready data."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.seed_hits: list[dict[str, str]] = []
        self.sqlite: list[str] = []
        self.named: dict[str, dict[str, Any]] = {}  # path: what reading it gave
        self.processes: dict[str, dict[str, Any]] = {}
        self.env_keys: list[str] = sorted(os.environ)
        self.files_walked = 0
        self.files_read = 0
        self.bytes_read = 0
        self.truncated = False
        self.seconds = 0.0
        self.rechecks = 0
        self.spectator_service = ""

    def content(self, where: str, data: bytes) -> None:
        """Look through what was read at ``where``."""
        with self.lock:
            self.bytes_read += len(data)
            at = data.find(MARKER)
            if at >= 0:
                self.seed_hits.append({"where": where, "text": data[at:at + 80].decode("utf-8", "replace")})
            if data.startswith(SQLITE) and where not in self.sqlite:
                self.sqlite.append(where)

    def as_json(self) -> dict[str, Any]:
        with self.lock:
            return {
                "uid": os.getuid(), "cwd": os.getcwd(), "env_keys": self.env_keys, "seed_hits": self.seed_hits,
                "sqlite": self.sqlite, "named": self.named, "processes": self.processes,
                "files_walked": self.files_walked, "files_read": self.files_read, "bytes_read": self.bytes_read,
                "truncated": self.truncated, "seconds": round(self.seconds, 2), "rechecks": self.rechecks,
                "spectator_service": self.spectator_service,
            }


def read(path: str, limit: int = MAX_READ) -> bytes | str:
    """The first ``limit`` bytes of a file, or why it could not be read."""
    try:
        with open(path, "rb") as f:
            return f.read(limit)
    except OSError as exc:
        return f"{type(exc).__name__}: {exc.strerror}"


class Hunter:
    """The search, run once in full and then kept up on the files that look like the referee's."""

    def __init__(self) -> None:
        self.found = Findings()
        self.done = threading.Event()
        self.stop = threading.Event()
        self.deadline = time.monotonic() + BUDGET_S

    def note_named(self, path: str) -> None:
        got = read(path)
        entry: dict[str, Any] = ({"readable": True, "bytes": len(got)} if isinstance(got, bytes)
                                 else {"readable": False, "error": got})
        with self.found.lock:
            old = self.found.named.get(path)
            if old is None or (entry.get("bytes", 0) > old.get("bytes", 0)) or (entry["readable"] and not
                                                                               old["readable"]):
                self.found.named[path] = entry
        if isinstance(got, bytes):
            self.found.content(path, got)

    def environment(self) -> None:
        for key, value in os.environ.items():
            self.found.content(f"env:{key}", value.encode())

    def processes(self) -> None:
        for pid in sorted((p for p in os.listdir("/proc") if p.isdigit()), key=int):
            info: dict[str, Any] = {}
            for part in ("cmdline", "environ", "mountinfo"):
                got = read(f"/proc/{pid}/{part}")
                if isinstance(got, bytes):
                    self.found.content(f"/proc/{pid}/{part}", got)
                    info[part] = got.replace(b"\0", b" ").decode("utf-8", "replace")[:300] if part == "cmdline" \
                        else len(got)
                else:
                    info[part] = got
            fds: dict[str, str] = {}
            try:
                names = os.listdir(f"/proc/{pid}/fd")
            except OSError as exc:
                names = []
                info["fd"] = f"{type(exc).__name__}: {exc.strerror}"
            for fd in names:
                try:
                    target = os.readlink(f"/proc/{pid}/fd/{fd}")
                except OSError:
                    continue
                fds[fd] = target
                if target.startswith("/") and not target.startswith(("/dev/", "/proc/")):
                    got = read(f"/proc/{pid}/fd/{fd}")
                    if isinstance(got, bytes):
                        self.found.content(f"/proc/{pid}/fd/{fd} -> {target}", got)
                    if NAMES.search(target):
                        self.note_named(target)
            info["fds"] = fds
            with self.found.lock:
                self.found.processes[pid] = info

    def walk(self, top: str = "/") -> None:
        """Every file under ``top``: its name checked, its contents searched (outside public software)."""
        stack = [top]
        while stack:
            if time.monotonic() > self.deadline:
                self.found.truncated = True
                return
            folder = stack.pop()
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError:
                continue
            for entry in entries:
                path = entry.path
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if path not in ("/proc", "/sys"):
                            stack.append(path)
                        continue
                    if not entry.is_file(follow_symlinks=False):
                        continue
                except OSError:
                    continue
                self.found.files_walked += 1
                public = path.startswith(SKIP_CONTENT)
                if NAMES.search(entry.name):
                    if not public:
                        self.note_named(path)
                    continue
                if public:
                    continue
                try:
                    if entry.stat(follow_symlinks=False).st_size > MAX_READ:
                        continue
                except OSError:
                    continue
                got = read(path)
                if isinstance(got, bytes):
                    self.found.files_read += 1
                    self.found.content(path, got)

    def spectators(self) -> None:
        """Ask the bots' socket for the list of matches (the spectator service must not be served there)."""
        address = os.environ.get("ARENA_ADDRESS", "")
        try:
            with grpc.insecure_channel(address) as channel:
                rpc = channel.unary_unary("/arena.v1.ArenaService/ListMatches",
                                          request_serializer=arena_pb2.ListMatchesRequest.SerializeToString,
                                          response_deserializer=arena_pb2.ListMatchesResponse.FromString)
                answer = rpc(arena_pb2.ListMatchesRequest(), timeout=3)
                self.found.spectator_service = f"answered: {answer}"
                self.found.content("ArenaService.ListMatches", answer.SerializeToString())
        except grpc.RpcError as exc:
            self.found.spectator_service = str(exc.code())

    def hunt(self) -> None:
        started = time.monotonic()
        try:
            self.environment()
            self.processes()
            self.spectators()
            for entry in os.scandir(os.getcwd()):
                if entry.is_file():
                    self.note_named(entry.path)
            self.walk()
        finally:
            self.found.seconds = time.monotonic() - started
            self.done.set()
        while not self.stop.wait(0.2):  # keep trying the files that look like the referee's
            for path in list(self.found.named):
                self.note_named(path)
            self.found.rechecks += 1


class SeedHunter(Bot):
    """Hunts first (in a thread, waited for at the first request), then checks or calls."""

    def __init__(self) -> None:
        self.hunter = Hunter()
        self.thread = threading.Thread(target=self.hunter.hunt, daemon=True)
        self.thread.start()
        self.waited = False

    def act(self, request: Request) -> Action:
        if not self.waited:
            self.waited = True
            self.hunter.done.wait(BUDGET_S + 5)
        return check() if request.legal.can_check else call()

    def on_match_end(self, msg: bot_pb2.MatchEnd) -> None:
        self.hunter.done.wait(BUDGET_S + 5)
        self.hunter.stop.set()
        print("HUNT " + json.dumps(self.hunter.found.as_json()), flush=True)


if __name__ == "__main__":
    print(f"seed hunter in {Path.cwd()} as uid {os.getuid()}", file=sys.stderr)
    raise SystemExit(run(SeedHunter(), name="seed-hunter", version="1").exit_code)
