"""What playing a duplicate match's rotations one after the other costs (README, "Duplicate without memory").

One heads-up match of two sandboxed Python SDK bots (the random bot against the calling station), 2,000 hands on 16
tables, played as arena plays it (rotation 0; its processes gone; then rotation 1 by fresh processes) and, as its
peer in the same run, with the two rotations overlapping (``unsafe_overlapping_halves``: how arena played them
before, never a setting), alternately, ``RUNS`` times each. Prints the wall time of each (bot start-up included) and
its hands/s; never asserts. Run it alone with ``python -c "from tests.bench.bench_halves import main; main()"``.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from arena.referee import MatchSpec
from arena.runner.bots import BotSpec
from arena.runner.remote_match import launch, play_watched, prepare_match
from arena.runner.sandbox import SandboxPolicy, check_sandbox

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_bots" / "python"
HANDS = 2_000
TABLES = 16
RUNS = 2


def bots() -> list[BotSpec]:
    return [BotSpec("random", f"'{sys.executable}' '{SAMPLES / 'random_bot.py'}' --seed 1"),
            BotSpec("caller", f"'{sys.executable}' '{SAMPLES / 'calling_station.py'}'")]


async def one_match(overlapping: bool, sandbox: SandboxPolicy, log_dir: Path, run: int) -> tuple[float, int, str]:
    """(wall seconds, hands played, status) of one match."""
    spec = MatchSpec(f"halves-{'overlapping' if overlapping else 'sequential'}-{run}", "bench-halves", HANDS,
                     tables=TABLES)
    started = time.perf_counter()
    setup = await prepare_match(spec, [b.name for b in bots()], local=True, tcp=False, lanes=2,
                                unsafe_overlapping_halves=overlapping)
    try:
        await launch(setup, bots(), log_dir, ROOT, sandbox)
        result = await play_watched(setup)
    finally:
        await asyncio.gather(*(p.stop() for p in setup.processes))
        await setup.server.stop()
    return time.perf_counter() - started, result.hands_played, result.reason.value


def main() -> None:
    try:
        check_sandbox()
        sandbox = SandboxPolicy()
        how = "sandboxed"
    except Exception as exc:  # a machine without bubblewrap still gets the figures, unsandboxed
        sandbox = SandboxPolicy(enabled=False)
        how = f"unsandboxed ({exc})"
    print(f"{HANDS:,} hands, heads-up, {TABLES} tables per rotation, two Python SDK bots, {how}; "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the start")
    walls: dict[bool, list[float]] = {False: [], True: []}
    with tempfile.TemporaryDirectory(prefix="bench-halves-") as logs:
        for run in range(RUNS):
            for overlapping in (False, True):
                wall, hands, status = asyncio.run(one_match(overlapping, sandbox, Path(logs), run))
                walls[overlapping].append(wall)
                label = "rotations overlapping (peer)" if overlapping else "rotations one after the other"
                print(f"  {label:<31} {wall:6.1f} s  {hands / wall:6.0f} hands/s  {status}", flush=True)
    sequential, overlapping_ = statistics.median(walls[False]), statistics.median(walls[True])
    print(f"median: one after the other {sequential:.1f} s, overlapping {overlapping_:.1f} s "
          f"({sequential / overlapping_:.2f}x the time); load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
