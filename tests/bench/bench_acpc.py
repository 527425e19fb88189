"""The ACPC bridge's cost: the same heads-up no-limit match (1,000 hands, one table, unsandboxed, a clock nothing hits)
played by two native arena bots (the Python SDK's calling station against its random bot) and with the calling
station replaced by ACPC clients that always call behind the bridge: the test suite's client in Python
(tests/adapters/acpc_client.py --strategy call) and one in C (tests/adapters/acpc_caller.c, compiled here when gcc
is there). Rates are measured over the first rotation from its first finished hand to its last (start-up left out),
each pair played ``ROUNDS`` times in turn and the best round kept (the machine is shared); the bridge's cost is the
native pair's hands/s over the bridged pair's, minus one. The issue's goal: at most 20%. Prints; never asserts.
Run it alone with ``python -c "from tests.bench.bench_acpc import main; main()"``.
"""

from __future__ import annotations

import asyncio
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from arena.referee import MatchSpec
from arena.runner.bots import BotSpec
from arena.runner.remote_match import run_local_match
from arena.runner.sandbox import SandboxPolicy
from tests.bench.bench_grpc import BOTS, LIMITS, POLICY, ROOT, HandClock, first_rotation, print_machine

HANDS = 1_000
ROUNDS = 3
GOAL_COST = 0.20
GAME = ROOT / "tests" / "adapters" / "games" / "holdem.nolimit.2p.reverse_blinds.game"
PY = shlex.quote(sys.executable)


def native() -> list[BotSpec]:
    return [BotSpec("caller", f"{PY} {BOTS / 'calling_station.py'}"),
            BotSpec("random", f"{PY} {BOTS / 'random_bot.py'} --seed 1")]


def bridged(client: str) -> list[BotSpec]:
    return [BotSpec("caller", client, acpc=True), native()[1]]


def python_client() -> str:
    return f"{PY} {ROOT / 'tests' / 'adapters' / 'acpc_client.py'} --strategy call {GAME}"


def c_client(folder: Path) -> str | None:
    if shutil.which("gcc") is None:
        return None
    binary = folder / "acpc_caller"
    subprocess.run(["gcc", "-O2", "-o", str(binary), str(ROOT / "tests" / "adapters" / "acpc_caller.c")], check=True)
    return f"{binary} {GAME}"


async def rate(bots: list[BotSpec], match_id: str) -> tuple[float, float]:
    """hands/s and decisions/s of the first rotation at full speed."""
    spec = MatchSpec(match_id, "bench-acpc", HANDS, policy=POLICY)
    clock = HandClock(HANDS // 2)
    await run_local_match(spec, bots, on_hand=first_rotation(clock), limits=LIMITS,
                          sandbox=SandboxPolicy(enabled=False))
    window = clock.window()
    return (window.rate(window.hands), window.rate(window.decisions)) if window else (0.0, 0.0)


def main() -> None:
    print_machine()
    with tempfile.TemporaryDirectory() as folder:
        pairs = {"2 native Python bots": native(), "Python ACPC client, bridged": bridged(python_client())}
        c = c_client(Path(folder))
        if c is not None:
            pairs["C ACPC client, bridged"] = bridged(c)
        best: dict[str, tuple[float, float]] = {}
        started = time.perf_counter()
        for round_ in range(ROUNDS):
            for label, bots in pairs.items():
                hands_s, decisions_s = asyncio.run(rate(bots, f"acpc-{round_}-{len(best)}"))
                if hands_s > best.get(label, (0.0, 0.0))[0]:
                    best[label] = (hands_s, decisions_s)
    base = best["2 native Python bots"][0]
    print(f"heads-up no-limit, {HANDS} hands, one table, unsandboxed; best of {ROUNDS} rounds "
          f"({time.perf_counter() - started:.0f} s)")
    print(f"{'pair':<30} {'hands/s':>9} {'decisions/s':>12} {'bridge cost':>12}")
    for label, (hands_s, decisions_s) in best.items():
        cost = "-" if label.startswith("2 native") or not hands_s else f"{base / hands_s - 1:+.0%}"
        print(f"{label:<30} {hands_s:>9,.0f} {decisions_s:>12,.0f} {cost:>12}")
    print(f"goal: the bridge costs at most {GOAL_COST:.0%} (a bridged pair at least {base / (1 + GOAL_COST):,.0f} "
          "hands/s here)")


if __name__ == "__main__":
    main()
