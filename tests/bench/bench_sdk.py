"""The SDK package: its hand evaluator, the compiled core beside the Python fallback, in the sample equity bot's
Monte Carlo; and a real install of ``proto/python`` into a fresh virtual environment, as a bot author does it.

``python -m tests.bench.bench_sdk`` prints both; ``python -m tests.bench.bench_sdk install`` (``make sdk-check``)
does only the install and exits 1 if it pulled in any of the referee's dependencies, or if ``import arena_sdk`` or
a sample bot's ``--help`` fails in the new environment. The evaluators are timed in CPU seconds of this process
(all their work is in it), which the other processes of a shared machine disturb less than the wall clock.
Timings are printed, never asserted.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from arena_sdk import _eval, _pyeval
from tests.sdk.engine_match import duplicate_match
from tests.sdk.helpers import REFEREE_DEPENDENCIES, REPO, SAMPLES, load_sample

HANDS = 100_000
SPOTS = 200  # equity requests: hole cards and a board of 0, 3, 4 or 5 cards, heads-up
SAMPLES_PER_REQUEST = 300  # the equity bot's default
DEALS = 300  # an in-process duplicate match of the equity bot against the calling station: 600 hands
SEED = 26
REPEATS = 3


def _best(run: Callable[[], object], repeats: int = REPEATS) -> float:
    """Best CPU seconds of ``repeats`` runs."""
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return best


def evaluator_rates() -> dict[str, tuple[float, float, float]]:
    """For the C core and the Python fallback: 7-card evaluations per second, the equity bot's Monte Carlo samples
    per second, and the CPU seconds of a duplicate match of the equity bot against the calling station played
    in-process (as the suite's strength tests do), on the same seeded hands, spots and deals, each timed in turn."""
    rng = random.Random(SEED)
    hands = [rng.sample(range(52), 7) for _ in range(HANDS)]
    spots: list[tuple[list[int], list[int]]] = []
    for _ in range(SPOTS):
        cards = rng.sample(range(52), 7)
        spots.append((cards[:2], cards[2:2 + rng.choice((0, 3, 4, 5))]))
    sample = load_sample("equity_bot")
    station = load_sample("calling_station")

    def monte_carlo() -> None:
        for hole, board in spots:
            sample.equity(hole, board, 1, SAMPLES_PER_REQUEST, random.Random(f"{hole}{board}"))

    rates = {}
    for name, evaluate in (("C core (arena_sdk._eval)", _eval.evaluate),
                           ("Python fallback (arena_sdk._pyeval)", _pyeval.evaluate)):
        def loop(evaluate: Callable[[Sequence[int]], int] = evaluate) -> None:
            for hand in hands:
                evaluate(hand)

        def match() -> None:
            duplicate_match(sample.EquityBot(), station.CallingStation(), DEALS, seed=SEED)

        sample.evaluate = evaluate  # the module's global, as ``from arena_sdk.evaluator import evaluate`` bound it
        rates[name] = (HANDS / _best(loop), SPOTS * SAMPLES_PER_REQUEST / _best(monte_carlo), _best(match, 1))
    sample.evaluate = _eval.evaluate
    return rates


def check_light_install() -> tuple[float, list[str]]:
    """Install ``proto/python`` into a fresh virtual environment with pip's ordinary resolution, then import it and
    run a sample bot's ``--help`` there: the seconds it took and the distributions installed. Exits 1 on failure."""
    with tempfile.TemporaryDirectory(prefix="arena-sdk-venv-") as tmp:
        venv = Path(tmp) / "venv"
        python = venv / "bin" / "python"
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", str(REPO / "proto" / "python")], check=True)
        seconds = time.perf_counter() - start
        listed = subprocess.run([str(python), "-m", "pip", "list", "--format=json"], check=True, capture_output=True,
                                text=True).stdout
        installed = sorted(p["name"].lower().replace("_", "-") for p in json.loads(listed))
        problems = [f"{name} was installed: the referee needs it, a bot must not"
                    for name in installed if name in REFEREE_DEPENDENCIES or name == "arena"]
        checks = {
            "import arena_sdk": [str(python), "-c", "import arena_sdk, arena_sdk.evaluator, arena_sdk.pb.bot_pb2_grpc"],
            "calling_station.py --help": [str(python), str(SAMPLES / "calling_station.py"), "--help"],
        }
        for what, argv in checks.items():
            proc = subprocess.run(argv, capture_output=True, text=True, cwd=tmp, check=False, timeout=60)
            if proc.returncode != 0:
                problems.append(f"{what} failed in the fresh environment ({proc.returncode}): {proc.stderr.strip()}")
    if problems:
        print("the SDK's light install FAILED:\n  " + "\n  ".join(problems), file=sys.stderr)
        raise SystemExit(1)
    return seconds, installed


def main() -> None:
    """Print the evaluator rates side by side, then the fresh install's time and what it installed."""
    rates = evaluator_rates()
    _, c_samples, c_match = rates["C core (arena_sdk._eval)"]
    print(f"the SDK's hand evaluator, seed {SEED}, CPU time, best of {REPEATS}: {HANDS:,} 7-card hands; the equity "
          f"bot's Monte Carlo on {SPOTS} heads-up spots x {SAMPLES_PER_REQUEST} samples; once, its in-process "
          f"duplicate match against the calling station, {2 * DEALS} hands")
    print(f"{'evaluator':<36} {'evals/s':>11} {'MC samples/s':>13} {'ms/request':>11} {'time / C':>9} "
          f"{'match s':>8} {'time / C':>9}")
    for name, (evals, samples, seconds) in rates.items():
        print(f"{name:<36} {evals:>11,.0f} {samples:>13,.0f} {1000 * SAMPLES_PER_REQUEST / samples:>11.2f} "
              f"{c_samples / samples:>8.2f}x {seconds:>8.2f} {seconds / c_match:>8.2f}x")
    seconds, installed = check_light_install()
    print(f"pip install proto/python into a fresh venv: {seconds:.1f} s (venv, resolution, C core build); installed: "
          f"{', '.join(installed)}; none of the referee's dependencies; import and --help run there")


if __name__ == "__main__":
    if sys.argv[1:] == ["install"]:
        took, packages = check_light_install()
        print(f"the SDK's light install: {took:.1f} s; {', '.join(packages)}")
    else:
        main()
