"""Variance reduction (arena.ratings.estimators): for sample-bot pairings played in-process on fixed seeds, the
standard deviation of one duplicate session's win rate and the 95% CI half-width of the match's mbb/hand, raw and
with all-in EV, side by side; and what the estimate costs per hand. Prints a table; never asserts. Run it alone with
``python -c "from tests.bench.bench_variance import main; main()"``.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from arena.ratings.allin import allin_payoffs
from arena.ratings.estimators import Estimator
from arena.ratings.sessions import load_sessions
from arena.ratings.stats import win_rates
from arena.records.db import Database
from arena.referee import HandRecord, Match, MatchSpec
from arena.sdk import Bot
from arena.sdk.inprocess import InProcessSeat
from tests.sdk.helpers import load_sample

HANDS = 2_000  # per pairing (heads-up: 1,000 duplicate sessions)
SIX_MAX_HANDS = 1_200  # 6-max: 200 sessions of six rotations
SEED = "bench-variance-20261202"


def bots() -> dict[str, Callable[[], Bot]]:
    equity = load_sample("equity_bot")
    caller = load_sample("calling_station")
    rand = load_sample("random_bot")
    return {"equity": lambda: equity.EquityBot(), "caller": lambda: caller.CallingStation(),
            "random": lambda: rand.RandomBot(seed=7)}


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
    db.start_match(spec, [(name, "", "") for name, _ in seats], len(spec.plan(len(seats))))
    result = asyncio.run(Match(spec, seats, [db, keep]).run())
    db.finish_match(result)
    return db, match_id, keep.records


def main() -> None:
    pairings = [["equity", "caller"], ["equity", "random"], ["equity", "equity"], ["random", "caller"]]
    six = ["equity", "caller", "random", "equity", "caller", "random"]
    print(f"{'pairing':<22} {'hands':>6} {'all-in':>7} {'sd/session raw':>15} {'all-in EV':>10} {'ratio':>6} "
          f"{'CI± raw':>9} {'all-in EV':>10} {'narrower':>9} {'hands for same CI':>18} {'ms/hand':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for names in [*pairings, six]:
            hands = SIX_MAX_HANDS if len(names) > 2 else HANDS
            db, match_id, records = play(Path(tmp), names, hands)
            started = time.perf_counter()
            adjusted = sum(allin_payoffs(r) is not None for r in records)
            cost_ms = (time.perf_counter() - started) * 1000 / len(records)
            first = f"{names[0]}0"
            spread = {}
            ci = {}
            for estimator in (Estimator.RAW, Estimator.ALLIN):
                sessions = load_sessions(db, [match_id], estimator=estimator)
                spread[estimator] = statistics.pstdev(s.mbb_per_hand(first) for s in sessions)
                rate = win_rates(sessions)[first]
                ci[estimator] = (rate.high - rate.low) / 2
            ratio = spread[Estimator.ALLIN] / spread[Estimator.RAW] if spread[Estimator.RAW] else 1.0
            label = "6-max, three kinds x2" if len(names) > 2 else " vs ".join(names)
            print(f"{label:<22} {len(records):>6} {adjusted:>7} {spread[Estimator.RAW]:>15,.0f} "
                  f"{spread[Estimator.ALLIN]:>10,.0f} {ratio:>6.2f} {ci[Estimator.RAW]:>9,.0f} "
                  f"{ci[Estimator.ALLIN]:>10,.0f} {1 - ci[Estimator.ALLIN] / ci[Estimator.RAW]:>8.0%} "
                  f"{ratio**2:>17.2f}x {cost_ms:>8.2f}", flush=True)
            db.close()
    print("sd/session: standard deviation of one duplicate session's mbb/hand for the first bot; CI±: half-width of "
          "its 95% interval over the match; hands for the same CI: (sd ratio)², the share of hands all-in EV needs "
          "for the raw interval's width; ms/hand: the all-in estimate's cost over all hands.", file=sys.stdout)


if __name__ == "__main__":
    main()
