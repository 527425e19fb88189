"""What integrity costs: one heads-up duplicate match of two Python SDK bots (calling station against the random
bot) played three ways in the same run:

1. ``one process per bot``: the old way, one process per bot playing both rotations of every deal at one table
   (a bot could remember the mirror hand), no sandbox;
2. ``a process per rotation``: each rotation at a table of its own with its own processes (what arena does), no
   sandbox;
3. ``... sandboxed``: the same, each process in its bubblewrap sandbox (arena's default).

Figures: wall seconds from start to the end of the match (start-up included), seconds until the first hand
finished (start-up: processes, sandboxes, connections), and hands/s from the first finished hand to the last.
Printed, never asserted.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

from arena.referee import ClockPolicy, HandRecord, MatchSpec
from arena.runner.bots import BotSpec
from arena.runner.remote_match import launch, play_watched, prepare_match
from arena.runner.sandbox import SandboxPolicy, check_sandbox
from arena.transport.server import RefereeServer, ServerLimits

REPO = Path(__file__).resolve().parents[2]
HANDS = 1000
LIMITS = ServerLimits(messages_per_second=20000.0, burst=40000)
POLICY = ClockPolicy(per_action_ms=5000, time_bank_ms=60000, connect_timeout_ms=30000)


def bots() -> list[BotSpec]:
    python = sys.executable
    return [BotSpec("caller", f"{python} {REPO}/sample_bots/python/calling_station.py"),
            BotSpec("random", f"{python} {REPO}/sample_bots/python/random_bot.py --seed 3")]


async def one_run(lanes: int, sandbox: SandboxPolicy, log_dir: Path) -> tuple[float, float, float, str]:
    """(wall s, start-up s, hands/s after the first hand, status) of one match."""
    server = RefereeServer(limits=LIMITS, tcp=False, local=True)
    await server.start()
    times: list[float] = []

    def on_hand(record: HandRecord) -> None:
        times.append(time.perf_counter())

    started = time.perf_counter()
    spec = MatchSpec(f"integrity-{lanes}-{int(sandbox.enabled)}", "bench-seed", HANDS, policy=POLICY)
    setup = await prepare_match(spec, [b.name for b in bots()], server=server, on_hand=on_hand, lanes=lanes)
    try:
        await launch(setup, bots(), log_dir, REPO, sandbox)
        result = await play_watched(setup)
    finally:
        await asyncio.gather(*(p.stop() for p in setup.processes))
        await server.stop()
    wall = time.perf_counter() - started
    startup = times[0] - started if times else wall
    rate = (len(times) - 1) / (times[-1] - times[0]) if len(times) > 1 and times[-1] > times[0] else 0.0
    failures = result.failures()
    return wall, startup, rate, result.reason.value + (f" ({failures[0]})" if failures else "")


def main() -> None:
    sandboxed = True
    try:
        check_sandbox()
    except Exception as exc:  # a machine without bubblewrap still gets the other two figures
        print(f"(no sandbox here: {exc})")
        sandboxed = False
    rows = [("one process per bot (old)", 1, SandboxPolicy(enabled=False)),
            ("a process per rotation", 2, SandboxPolicy(enabled=False))]
    if sandboxed:
        rows.append(("a process per rotation, sandboxed", 2, SandboxPolicy()))
    print(f"One heads-up duplicate match, {HANDS} hands, calling station vs random bot (Python SDK):")
    print(f"{'':<36} {'wall s':>7} {'start-up s':>11} {'hands/s':>8}  status")
    with tempfile.TemporaryDirectory() as logs:
        for label, lanes, policy in rows:
            wall, startup, rate, status = asyncio.run(one_run(lanes, policy, Path(logs)))
            print(f"{label:<36} {wall:>7.2f} {startup:>11.2f} {rate:>8.0f}  {status}")


if __name__ == "__main__":
    main()
