"""What the stall attacks cost an honest match, in one run: two calling stations play 600 hands over TCP (one table,
2 s a decision; 100 ms under the spectators) while an attacker process, niced, does its worst to the same referee
(tests/integrity/stall_client.py), in runs that alternate with the same match unattacked.

Attacks: 8 clients x 16 streams of bad Joins; 2,000 WatchMatch calls of which 64 are admitted (``watchers_per_peer``
raised to ``max_watchers``, and the calls a peer may make at once to 100: what spectators from 8 addresses get);
1,124 idle connections (1,100 bare TCP, 24 gRPC channels) against a cap of 512, each opened again as soon as the
referee closes it. Each attacked run is set against the mean of the unattacked runs on both sides of it (this
shared machine's speed drifts within minutes); the ratio printed is the median of those shares. ``referee µs/hand``
is the referee's CPU (all its threads) per hand, without and with the attack; ``faults`` counts the time-outs,
violations and absences of the bots (and runs cut short), without and with the attack.

``python -m tests.bench.bench_stall [joins|watch|idle ...] [--pairs N]``; printed, never asserted (the integrity
tests in tests/integrity/test_stall.py assert what must hold under each attack).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import arena
from arena.referee import ClockPolicy
from arena.transport.server import ServerLimits
from tests.integrity.stall_harness import Attacker, Run, clock, honest_match

HANDS = 600
PAIRS = 3


@dataclass(frozen=True, slots=True)
class Attack:
    """One attack as the bench plays it."""

    label: str
    make: Callable[[], Attacker]
    limits: ServerLimits
    policy: ClockPolicy


def limits(**settings: Any) -> ServerLimits:
    """``ServerLimits`` with those of ``settings`` this version of arena has (so the bench also measures an older
    checkout: ``PYTHONPATH=`` a copy of its ``arena`` folder)."""
    known = {f.name for f in fields(ServerLimits)}
    return ServerLimits(**{name: value for name, value in settings.items() if name in known})


ATTACKS = {
    "joins": Attack("bad Joins, 8 clients x 16 streams", lambda: Attacker("joins", ["8", "16"]), limits(),
                    clock(2000)),
    "watch": Attack("2,000 spectators (64 admitted), 100 ms clock", lambda: Attacker("watch", ["stall", "2000"]),
                    limits(watchers_per_peer=64, spectator_calls_burst=100), clock(100)),
    "idle": Attack("1,124 idle connections, reopened", lambda: Attacker("idle", ["1100", "24", "reopen"]),
                   limits(), clock(2000)),
}


async def compare(attack: Attack, pairs: int) -> tuple[list[Run], list[Run]]:
    """Unattacked and attacked runs in turn, starting and ending unattacked."""
    plain = [await honest_match(None, attack.limits, HANDS, attack.policy)]
    attacked: list[Run] = []
    for _ in range(pairs):
        attacked.append(await honest_match(attack.make(), attack.limits, HANDS, attack.policy))
        plain.append(await honest_match(None, attack.limits, HANDS, attack.policy))
    return plain, attacked


def report(attack: Attack, plain: list[Run], attacked: list[Run]) -> str:
    """One line per attack: the medians without and with it, the ratio, and whether every run was clean."""
    shares = [run.hands_per_s / ((before.hands_per_s + after.hands_per_s) / 2)
              for run, before, after in zip(attacked, plain[:-1], plain[1:], strict=True)]
    def faults(runs: list[Run]) -> int:  # time-outs, violations and absences, and runs cut short
        return sum(sum(r.timeouts + r.violations + r.absent for r in run.result.results)
                   + (run.result.hands_played != HANDS) for run in runs)
    return (f"{attack.label:<46} {statistics.median(r.hands_per_s for r in plain):>8.0f} "
            f"{statistics.median(r.hands_per_s for r in attacked):>8.0f} {statistics.median(shares):>6.0%}  "
            f"{statistics.median(r.referee_us_per_hand for r in plain):>6.0f} "
            f"{statistics.median(r.referee_us_per_hand for r in attacked):>6.0f}  "
            f"{faults(plain):>3} {faults(attacked):>3}  [{', '.join(f'{s:.0%}' for s in shares)}]")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("attacks", nargs="*", default=list(ATTACKS), help=f"some of {', '.join(ATTACKS)}")
    parser.add_argument("--pairs", type=int, default=PAIRS)
    args = parser.parse_args(argv if argv is not None else [])
    unknown = [name for name in args.attacks if name not in ATTACKS]
    if unknown:
        parser.error(f"unknown attack {unknown[0]!r}: choose from {', '.join(ATTACKS)}")
    print(f"arena from {Path(arena.__file__).parent}")
    print(f"The honest match: two calling stations, {HANDS} hands over TCP; {args.pairs} attacked runs each, between "
          f"unattacked ones; load average {os.getloadavg()[0]:.1f} at the start")
    print(f"{'attack':<46} {'hands/s':>8} {'attacked':>8} {'ratio':>6}  {'referee µs/hand':>13}  faults  per pair")
    for name in args.attacks:
        attack = ATTACKS[name]
        started = time.perf_counter()
        plain, attacked = asyncio.run(compare(attack, args.pairs))
        print(report(attack, plain, attacked), f"({time.perf_counter() - started:.0f} s)", flush=True)
        worst = attacked[-1]
        print(f"    attacker: {worst.ready} {worst.done}"[:300] + (f"; warden {worst.warden}" if worst.warden else ""))


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
