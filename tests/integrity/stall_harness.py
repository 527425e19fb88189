"""What the stall tests and the stall benchmark share: an honest match between two calling stations (the C++ sample
bot's ``call`` style) that connect over TCP, as remote bots do, played while an attacker process (``stall_client``)
does its worst to the same referee.

The attacker runs at the lowest CPU priority: it stands for a machine of its own, so its own work must not count
against the referee.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import shlex
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from arena.referee import ClockPolicy, MatchResult, MatchSpec
from arena.runner.remote_match import play, prepare_match
from arena.transport.server import ServerLimits
from tests.bots import caller

REPO = Path(__file__).resolve().parents[2]
CALLER = shlex.split(caller())
POLICY = ClockPolicy(per_action_ms=2000, time_bank_ms=0, max_violations=0, connect_timeout_ms=15000)


class Attacker:
    """``python -m tests.integrity.stall_client MODE ADDRESS ARGS``, niced, stopped by closing its stdin."""

    def __init__(self, mode: str, args: Sequence[str]) -> None:
        self.mode = mode
        self.args = list(args)
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self, address: str) -> dict[str, Any]:
        """Start the attack; what the attacker reports once it is under way."""
        self.proc = await asyncio.create_subprocess_exec(
            "nice", "-n", "19", sys.executable, "-m", "tests.integrity.stall_client", self.mode, address, *self.args,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO)})
        return await self._line("READY")

    async def _line(self, kind: str) -> dict[str, Any]:
        assert self.proc is not None and self.proc.stdout is not None
        line = (await asyncio.wait_for(self.proc.stdout.readline(), 60)).decode()
        assert line.startswith(kind + " "), line
        data: dict[str, Any] = json.loads(line[len(kind) + 1:])
        return data

    async def stop(self) -> dict[str, Any]:
        """End the attack; what the attacker reports at the end."""
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            return await self._line("DONE")
        finally:
            await ended(self.proc, 20)


async def ended(process: asyncio.subprocess.Process, wait_s: float) -> None:
    """Wait ``wait_s`` for a process to end, then kill it."""
    try:
        await asyncio.wait_for(process.wait(), wait_s)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()


@dataclass(slots=True)
class Run:
    """One honest match, and what its attacker and the referee's warden said."""

    result: MatchResult
    hands_per_s: float  # from the first finished hand to the last
    referee_us_per_hand: float  # the referee's CPU (this process, all its threads) per hand, over the same hands
    ready: dict[str, Any] = field(default_factory=dict)  # the attacker's report once its attack was under way
    done: dict[str, Any] = field(default_factory=dict)  # and at the end
    warden: dict[str, Any] = field(default_factory=dict)  # the warden's counts at the end

    @property
    def clean(self) -> bool:
        """Every bot played every decision itself: no violation, time-out or absence."""
        return all(r.violations == 0 and r.timeouts == 0 and r.absent == 0 for r in self.result.results)


async def honest_match(attack: Attacker | None, limits: ServerLimits, hands: int, policy: ClockPolicy = POLICY,
                       hold_s: float = 0.0) -> Run:
    """Two calling stations play ``hands`` hands (one table, fresh decks) over TCP, under ``attack`` if given, which
    starts before the bots do; the referee keeps serving the attack for at least ``hold_s`` after it started."""
    # What this process held before the match (earlier runs' garbage: a referee's objects form cycles; under pytest,
    # every collected test module) would lengthen each full collection in the referee's loop far beyond what a
    # referee process of its own pays: collected, then frozen out of the collector for the match.
    gc.collect()
    gc.freeze()
    spec = MatchSpec("stall", "stall-seed", hands, policy=policy, duplicate=False)
    times: list[tuple[float, float]] = []  # each finished hand: when, and the referee's CPU time then
    setup = await prepare_match(spec, ["a", "b"], limits=limits, tcp=True,
                                on_hand=lambda record: times.append((time.monotonic(), time.process_time())))
    ready: dict[str, Any] = {}
    done: dict[str, Any] = {}
    bots: list[asyncio.subprocess.Process] = []
    attacked_at = time.monotonic()
    finished = False  # the bots of a finished match leave at once; those that never got in are not waited for
    try:
        if attack is not None:
            ready = await attack.start(setup.server.address)
            attacked_at = time.monotonic()
        for seat in setup.seats:
            env = {**os.environ, "ARENA_ADDRESS": setup.server.address, "ARENA_TOKEN": seat.token,
                   "ARENA_BOT_NAME": seat.name}
            bots.append(await asyncio.create_subprocess_exec(
                *CALLER, env=env, stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL))
        result = await play(setup)
        finished = result.hands_played > 0
    finally:
        await asyncio.gather(*(ended(bot, 3 if finished else 0.2) for bot in bots))
        if attack is not None:
            await asyncio.sleep(max(0.0, attacked_at + hold_s - time.monotonic()))
            done = await attack.stop()
        warden = getattr(setup.server, "warden", None)  # (an older arena has none)
        counts = {} if warden is None else {k: getattr(warden.counts, k) for k in warden.counts.__slots__}
        await setup.server.stop()
        gc.unfreeze()
    rate = cpu = 0.0
    if len(times) > 1:
        (first, cpu_0), (last, cpu_1) = times[0], times[-1]
        rate = (len(times) - 1) / (last - first)
        cpu = (cpu_1 - cpu_0) / (len(times) - 1) * 1e6
    return Run(result, rate, cpu, ready, done, counts)


def clock(per_action_ms: int, connect_timeout_ms: int = POLICY.connect_timeout_ms, bank_ms: int = 0) -> ClockPolicy:
    """The honest match's clock with another time per action (no violation allowed)."""
    return replace(POLICY, per_action_ms=per_action_ms, connect_timeout_ms=connect_timeout_ms, time_bank_ms=bank_ms)
