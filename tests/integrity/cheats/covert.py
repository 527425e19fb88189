#!/usr/bin/env python3
"""Cheat bot ``covert``: two processes talk through the host's memory figures, as the two halves of a duplicate deal
did (issue 24: +10,783 mbb/hand), then play (check, else call).

``python covert.py --send BITS`` is the sender; ``python covert.py --receive N`` the receiver. Time is cut into slots
of ``SLOT_S`` seconds of the wall clock, which both processes share without a word: in slot k the sender holds
``SIGNAL_MB`` MiB of shared memory (a file in its tmpfs /tmp, which the kernel counts as Shmem host-wide) when bit
``k mod len(BITS)`` is 1, none when it is 0. The receiver reads ``Shmem`` in /proc/meminfo (and ``sharedram`` of
sysinfo(2), when it may) late in each slot for two rounds of N slots, and reads a 1 where both rounds stand
``SIGNAL_MB / 2`` above the least it saw. Frames of N slots start at multiples of N slots: the two agree on them
without a word. It prints ``COVERT {json}``: the bits it read, the spread of what it saw.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import time

from arena_sdk import Action, Bot, Request, call, check, run

SLOT_S = 0.25
SIGNAL_MB = 128
ROUNDS = 2


def shmem_kb() -> int:
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("Shmem:"):
                return int(line.split()[1])
    return -1


class SysInfo(ctypes.Structure):
    _fields_ = [("uptime", ctypes.c_long), ("loads", ctypes.c_ulong * 3), ("totalram", ctypes.c_ulong),
                ("freeram", ctypes.c_ulong), ("sharedram", ctypes.c_ulong), ("bufferram", ctypes.c_ulong),
                ("totalswap", ctypes.c_ulong), ("freeswap", ctypes.c_ulong), ("procs", ctypes.c_ushort),
                ("pad", ctypes.c_ushort), ("totalhigh", ctypes.c_ulong), ("freehigh", ctypes.c_ulong),
                ("mem_unit", ctypes.c_uint), ("rest", ctypes.c_char * 8)]


def sharedram_kb() -> int:
    """sysinfo(2)'s sharedram in KiB; -1 when the call is refused."""
    info = SysInfo()
    if ctypes.CDLL(None).sysinfo(ctypes.byref(info)) != 0:
        return -1
    return int(info.sharedram) * (info.mem_unit or 1) // 1024


def wait_for(moment: float) -> None:
    time.sleep(max(0.0, moment - time.time()))


def next_frame(length: int) -> int:
    """The first slot of the next frame of ``length`` slots (frames start at multiples of the length: both
    processes agree on them without a word)."""
    return (int(time.time() // SLOT_S) // length + 1) * length


def send(bits: str, rounds: int) -> dict[str, object]:
    """Hold the signal in the slots of 1s, for ``rounds`` + 2 frames: the receiver's frames, started up to a frame
    before or after these, lie inside."""
    first = next_frame(len(bits))
    block = b"x" * (1 << 20)
    path = "/tmp/covert-signal"
    for k in range(first, first + (rounds + 2) * len(bits)):
        wait_for(k * SLOT_S)
        if bits[k % len(bits)] == "1":
            with open(path, "wb") as f:
                for _ in range(SIGNAL_MB):
                    f.write(block)
        elif os.path.exists(path):
            os.unlink(path)
    if os.path.exists(path):
        os.unlink(path)
    return {"role": "sender", "bits": bits}


def receive(length: int, rounds: int) -> dict[str, object]:
    """Read ``rounds`` frames, from the frame after next (inside the sender's, whichever started first)."""
    first = next_frame(length) + length
    shmem: dict[int, list[int]] = {}
    shared: dict[int, list[int]] = {}
    for k in range(first, first + rounds * length):
        wait_for((k + 0.6) * SLOT_S)  # after the sender's write (up to a few tenths of a slot)
        shmem.setdefault(k % length, []).append(shmem_kb())
        shared.setdefault(k % length, []).append(sharedram_kb())
    values = [v for seen in shmem.values() for v in seen]
    low = min(values)
    threshold = SIGNAL_MB * 1024 // 2
    read = "".join("1" if min(shmem[i]) - low > threshold else "0" for i in range(length))
    both = [v for seen in shared.values() for v in seen]
    return {"role": "receiver", "read": read, "shmem_spread_kb": max(values) - low,
            "sharedram_spread_kb": max(both) - min(both) if min(both) >= 0 else None}


class Caller(Bot):
    def act(self, request: Request) -> Action:
        return check() if request.legal.can_check else call()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--send", default="")
    parser.add_argument("--receive", type=int, default=0)
    arguments, rest = parser.parse_known_args()
    report = send(arguments.send, ROUNDS) if arguments.send else receive(arguments.receive, ROUNDS)
    print("COVERT " + json.dumps(report), flush=True)
    raise SystemExit(run(Caller(), name="covert", version="1", argv=rest).exit_code)
