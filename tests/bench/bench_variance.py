"""Variance reduction (arena.ratings.estimators): for sample-bot pairings played in-process on fixed seeds, the
standard deviation of one duplicate session's win rate and the 95% CI half-width of the match's mbb/hand, raw, with
all-in EV and with AIVAT's chance terms, side by side; and what AIVAT costs per hand. Prints a table; never asserts.
Run it alone with ``python -c "from tests.bench.bench_variance import main; main()"``.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from arena.ratings.aivat import aivat_payoffs
from arena.ratings.allin import allin_payoffs
from arena.ratings.estimators import Estimator
from arena.ratings.sessions import load_sessions
from arena.ratings.sprt import Sprt, SprtParams, Verdict
from arena.ratings.stats import win_rates
from arena.records.db import Database
from arena.records.ledger import Ledger
from arena.referee import HandRecord, Match, MatchSpec
from arena.runner.bots import BotSpec
from arena.runner.inprocess import InProcessSeat
from arena_sdk import Bot
from tests.sdk.helpers import load_sample

HANDS = 2_000  # per pairing (heads-up: 1,000 duplicate sessions)
SIX_MAX_HANDS = 1_200  # 6-max: 200 sessions of six rotations
SEED = "bench-variance-20261202"


def bots() -> dict[str, Callable[[], Bot]]:
    equity = load_sample("equity_bot")
    caller = load_sample("calling_station")
    rand = load_sample("random_bot")
    return {"equity": lambda: equity.EquityBot(), "caller": lambda: caller.CallingStation(),
            "random": lambda: rand.RandomBot(seed=7), "mixed": lambda: rand.RandomBot(seed=7, mixed=True)}


class Keep:
    def __init__(self) -> None:
        self.records: list[HandRecord] = []

    def hand_finished(self, record: HandRecord) -> None:
        self.records.append(record)


def play(folder: Path, names: list[str], hands: int) -> tuple[Database, str, list[HandRecord]]:
    makers = bots()
    match_id = "-".join(names)
    db = Database(folder / f"{match_id}.db")
    spec = MatchSpec(match_id, SEED, hands)
    keep = Keep()
    seats = [(f"{n}{i}", InProcessSeat(f"{n}{i}", makers[n]())) for i, n in enumerate(names)]
    entry = Ledger(db).open(spec, [BotSpec(name, "") for name, _ in seats])
    entry.finish(asyncio.run(Match(spec, seats, [entry, keep]).run()))
    return db, match_id, keep.records


ORDERS = 200  # shuffles of the sessions for hands-to-verdict (the same shuffles for both estimators)


def hands_to_verdict(samples: list[float], hands_per_session: int, order_seed: int) -> tuple[float, float]:
    """The median hands an SPRT (default hypotheses: 0 against 500 mbb/hand) takes to decide over ``ORDERS``
    shuffles of the sessions, and the share of shuffles it decided in before the sessions ran out."""
    rng = random.Random(order_seed)
    taken: list[float] = []
    decided = 0
    for _ in range(ORDERS):
        order = samples[:]
        rng.shuffle(order)
        test = Sprt(SprtParams())
        for sample in order:
            if test.add(sample, hands_per_session) is not Verdict.CONTINUE:
                decided += 1
                break
        taken.append(test.hands)
    return statistics.median(taken), decided / ORDERS


def main() -> None:
    pairings = [["equity", "caller"], ["equity", "random"], ["equity", "equity"], ["random", "caller"],
                ["equity", "mixed"], ["mixed", "caller"]]  # mixed: the random bot letting the referee draw
    six = ["equity", "caller", "random", "equity", "caller", "random"]
    adjusted = (Estimator.ALLIN, Estimator.AIVAT)
    print(f"{'pairing':<22} {'hands':>6} {'all-in':>7} {'sd/session raw':>15} {'all-in EV':>10} {'AIVAT':>7} "
          f"{'CI± raw':>9} {'all-in EV':>10} {'AIVAT':>7} {'narrower':>9} {'hands for same CI':>18} "
          f"{'ms/hand':>8} {'SPRT hands raw':>15} {'all-in EV':>11} {'AIVAT':>11}")
    with tempfile.TemporaryDirectory() as tmp:
        for names in [*pairings, six]:
            hands = SIX_MAX_HANDS if len(names) > 2 else HANDS
            db, match_id, records = play(Path(tmp), names, hands)
            allins = sum(allin_payoffs(r) is not None for r in records)
            started = time.perf_counter()
            for record in records:
                aivat_payoffs(record)
            cost_ms = (time.perf_counter() - started) * 1000 / len(records)
            first = f"{names[0]}0"
            spread = {}
            ci = {}
            verdict = {}
            for estimator in (Estimator.RAW, *adjusted):
                sessions = load_sessions(db, [match_id], estimator=estimator)
                samples = [s.mbb_per_hand(first) for s in sessions]
                spread[estimator] = statistics.pstdev(samples)
                rate = win_rates(sessions)[first]
                ci[estimator] = (rate.high - rate.low) / 2
                verdict[estimator] = hands_to_verdict(samples, len(names), order_seed=1)
            ratio = spread[Estimator.AIVAT] / spread[Estimator.RAW] if spread[Estimator.RAW] else 1.0
            label = "6-max, three kinds x2" if len(names) > 2 else " vs ".join(names)
            print(f"{label:<22} {len(records):>6} {allins:>7} {spread[Estimator.RAW]:>15,.0f} "
                  f"{spread[Estimator.ALLIN]:>10,.0f} {spread[Estimator.AIVAT]:>7,.0f} {ci[Estimator.RAW]:>9,.0f} "
                  f"{ci[Estimator.ALLIN]:>10,.0f} {ci[Estimator.AIVAT]:>7,.0f} "
                  f"{1 - ci[Estimator.AIVAT] / ci[Estimator.RAW]:>8.0%} {ratio**2:>17.2f}x {cost_ms:>8.2f} "
                  f"{_verdict(verdict[Estimator.RAW]):>15} {_verdict(verdict[Estimator.ALLIN]):>11} "
                  f"{_verdict(verdict[Estimator.AIVAT]):>11}", flush=True)
            db.close()
    print("sd/session: standard deviation of one duplicate session's mbb/hand for the first bot; CI±: half-width of "
          "its 95% interval over the match; narrower, hands for the same CI ((sd ratio)²) and ms/hand: AIVAT's, "
          "against raw; SPRT hands: the median hands the default test (0 against 500 mbb/hand) takes to decide over "
          f"{ORDERS} shuffles of the sessions, with the share of shuffles it decided in, either way (the same "
          "shuffles for every estimator; between two copies of one bot the right verdict is H0).", file=sys.stdout)


def _verdict(found: tuple[float, float]) -> str:
    hands, share = found
    return f"{hands:,.0f} ({share:.0%})"


if __name__ == "__main__":
    main()
