#!/usr/bin/env python3
"""Cheat bot ``escape``: tries to get out of its sandbox before it plays (check, else call).

``python escape.py --port PORT [--host-ip IP] [--abstract NAME] --processes N --memory-mb M``:

* the network: TCP to 127.0.0.1:PORT and [::1]:PORT (where the test listens on the host), to IP:PORT, UDP to a
  public DNS server, a DNS lookup, the host's abstract Unix socket NAME;
* processes: forks until a fork fails (the sandbox allows N processes and threads), then ends its children;
* memory: allocates M + 64 MiB (the sandbox allows M of address space);
* identity: its uid (never 0), whether its own folder is writable.

It prints one line ``ESCAPE {json}`` with every outcome, then joins the match.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import time
from pathlib import Path
from typing import Any

from arena_sdk import Action, Bot, Request, call, check, run


def outcome(action: Any) -> str:
    try:
        result = action()
    except OSError as exc:
        return f"failed: {type(exc).__name__}: {exc.strerror or exc}"
    except MemoryError:
        return "failed: MemoryError"
    return f"ok: {result}"


def tcp(host: str, port: int) -> str:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.settimeout(2)
        s.connect((host, port))
        s.sendall(b"escaped\n")
        return "connected"


def udp_dns() -> str:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(2)
        s.sendto(b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07example\x03com\x00\x00\x01\x00\x01",
                 ("8.8.8.8", 53))
        return repr(s.recv(512)[:12])


def abstract(name: str) -> str:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(2)
        s.connect("\0" + name)
        s.sendall(b"escaped\n")
        return "connected"


def fork_bomb(limit: int) -> dict[str, Any]:
    """Fork sleeping children until the kernel refuses (at most 2 x ``limit``); then end them."""
    children: list[int] = []
    error = ""
    for _ in range(2 * limit):
        try:
            pid = os.fork()
        except OSError as exc:
            error = f"{type(exc).__name__}: {exc.strerror}"
            break
        if pid == 0:
            time.sleep(60)
            os._exit(0)
        children.append(pid)
    for pid in children:
        os.kill(pid, signal.SIGKILL)
    for pid in children:
        os.waitpid(pid, 0)
    return {"forks": len(children), "error": error}


def allocate(mb: int) -> str:
    block = bytearray(mb * 1024 * 1024)
    block[:: 1 << 20] = b"x" * len(block[:: 1 << 20])
    return f"{len(block) >> 20} MiB"


def write_own_folder() -> str:
    path = Path(__file__).resolve().parent / "escaped.txt"
    path.write_text("escaped\n")
    path.unlink()
    return str(path)


def probe(args: argparse.Namespace) -> dict[str, Any]:
    report: dict[str, Any] = {"uid": os.getuid(), "euid": os.geteuid(), "gid": os.getgid()}
    report["tcp_loopback"] = outcome(lambda: tcp("127.0.0.1", args.port))
    report["tcp_loopback6"] = outcome(lambda: tcp("::1", args.port))
    if args.host_ip:
        report["tcp_host_ip"] = outcome(lambda: tcp(args.host_ip, args.port))
    report["udp_dns"] = outcome(udp_dns)
    report["dns"] = outcome(lambda: socket.getaddrinfo("example.com", 80)[0][4])
    if args.abstract:
        report["abstract_socket"] = outcome(lambda: abstract(args.abstract))
    report["fork"] = fork_bomb(args.processes)
    report["memory"] = outcome(lambda: allocate(args.memory_mb + 64))
    report["write_own_folder"] = outcome(write_own_folder)
    report["setuid_root"] = outcome(lambda: os.setuid(0))
    return report


class Escapee(Bot):
    def act(self, request: Request) -> Action:
        return check() if request.legal.can_check else call()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host-ip", default="")
    parser.add_argument("--abstract", default="")
    parser.add_argument("--processes", type=int, required=True)
    parser.add_argument("--memory-mb", type=int, required=True)
    arguments, rest = parser.parse_known_args()
    print("ESCAPE " + json.dumps(probe(arguments)), flush=True)
    raise SystemExit(run(Escapee(), name="escape", version="1", argv=rest).exit_code)
