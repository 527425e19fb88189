"""The stall attacks against any checkout of arena, to compare versions (not a test; the tests are test_stall.py).

``PYTHONPATH=CHECKOUT python tests/integrity/stall_bench.py MODE PAIRS [WATCHERS]``, MODE ``watch`` (WATCHERS
WatchMatch calls, 2,000 by default) or ``joins`` (8 clients x 16 streams of bad Joins): alternating runs of 300
hands between two calling stations that connect over TCP, as remote bots do, without and with the attack (from
this checkout's stall_client, niced); prints each pair, then the medians. It uses only what every version has
(``prepare_match``, ``play``), so it measures the commit before the integrity fixes (5c7306f) as well as this one.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import statistics
import sys
import time
from pathlib import Path

import arena
from arena.referee import ClockPolicy, MatchSpec
from arena.runner.remote_match import play, prepare_match

HERE = Path(__file__).resolve().parents[2]  # this checkout: the attacker and the bots come from here
CALLER = HERE / "sample_bots" / "python" / "calling_station.py"
ATTACKS = {"joins": ["joins", "8", "16"]}


async def run(attack: list[str] | None) -> tuple[float, str]:
    """One match; its hands per second and what the attacker said at the end."""
    times: list[float] = []
    policy = ClockPolicy(per_action_ms=2000, time_bank_ms=0, max_violations=0, connect_timeout_ms=15000)
    setup = await prepare_match(MatchSpec("stall", "stall-seed", 300, policy=policy), ["a", "b"],
                                on_hand=lambda record: times.append(time.monotonic()))
    env = {**os.environ, "PYTHONPATH": str(HERE)}
    attacker = None
    if attack is not None:
        attacker = await asyncio.create_subprocess_exec(
            "nice", "-n", "19", sys.executable, "-m", "tests.integrity.stall_client", attack[0],
            setup.server.address, *attack[1:], stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            cwd=HERE, env=env)
        assert attacker.stdout is not None
        await asyncio.wait_for(attacker.stdout.readline(), 120)  # READY
    bots = [await asyncio.create_subprocess_exec(
        sys.executable, str(CALLER), stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
        env={**env, "ARENA_ADDRESS": setup.server.address, "ARENA_TOKEN": seat.token, "ARENA_BOT_NAME": seat.name})
        for seat in setup.seats]
    done = ""
    try:
        result = await asyncio.wait_for(play(setup), 600)
    finally:
        for bot in bots:
            with contextlib.suppress(TimeoutError, ProcessLookupError):
                await asyncio.wait_for(bot.wait(), 10)
            with contextlib.suppress(ProcessLookupError):
                bot.kill()
        if attacker is not None and attacker.stdin is not None and attacker.stdout is not None:
            attacker.stdin.close()
            with contextlib.suppress(TimeoutError):
                done = (await asyncio.wait_for(attacker.stdout.readline(), 60)).decode().strip()
            with contextlib.suppress(ProcessLookupError):
                attacker.kill()
            await attacker.wait()
        await setup.server.stop()
    rate = (len(times) - 1) / (times[-1] - times[0]) if len(times) > 1 else 0.0
    return rate, f"{result.hands_played} hands, violations {[r.violations for r in result.results]}; {done[:200]}"


async def main(mode: str, pairs: int, watchers: str) -> None:
    attack = ["watch", "stall", watchers] if mode == "watch" else ATTACKS[mode]
    plain, attacked = [], []
    for _ in range(pairs):
        base, _ = await run(None)
        under, note = await run(attack)
        plain.append(base)
        attacked.append(under)
        print(f"without {base:.1f} hands/s, with {under:.1f} ({note})", flush=True)
    before, after = statistics.median(plain), statistics.median(attacked)
    print(f"{Path(arena.__file__).parents[1]}: {mode}: {before:.1f} -> {after:.1f} hands/s ({after / before:.0%})")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else "2000"))
