"""What a rating game should be (arena.ratings.blocks): how long a block of duplicate deals must be for its result to
follow the chips, measured on a real round-robin of the sample bots; and how long re-rating a 100,000-hand database
takes to fit.

``python -m tests.bench.bench_blocks [DB]``: with a database of a heads-up round-robin (``arena demo --hands 2000``
writes one), its figures; without, a demo of 1,000 hands a pairing is played first (about a minute here). Prints;
never asserts. The figures:

* per pairing, the mean and sd of a deal's result and the share of deals the first bot wins, then the share of
  blocks of B deals whose sign is the sign of the pair's mean, for several B;
* the round-robin resampled into tournaments of ``DEALS`` deals a pairing (the demo's size), fitted with TrueSkill
  for several block sizes: pairs ranked against a significant head-to-head result, and pairs ranked against the
  mbb/hand order without their own head-to-head mean on the ranking's side, per tournament;
* the fitting time of 100,000 heads-up hands (50,000 duplicate deals of six bots) as blocks of 30 deals, beside
  the same hands as one-deal games (the peer: the definition of before).
"""

from __future__ import annotations

import itertools
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from arena.ratings.batch_fit import count_games, fit
from arena.ratings.blocks import RatingRules, places_by_result, rating_games
from arena.ratings.consistency import check_order, head_to_head
from arena.ratings.sessions import Session, load_sessions
from arena.ratings.stats import win_rates
from arena.records.db import Database

SIZES = (1, 5, 10, 20, 25, 30, 40, 50)
DEALS = 150  # deals a pairing in a demo-sized tournament (make demo: 300 hands a pairing)
TRIALS = 200
SEED = 23


def by_match(sessions: list[Session]) -> dict[str, list[Session]]:
    out: dict[str, list[Session]] = defaultdict(list)
    for s in sessions:
        out[s.match_id].append(s)
    return out


def sign_agreement(matches: dict[str, list[Session]]) -> None:
    print("per pairing: the first bot's mean and sd a deal (mbb/hand), the share of deals it wins, then the share of "
          "blocks of B deals won by the pair's winner in chips")
    print(f"{'pairing':<28} {'mean':>8} {'sd/deal':>8} {'won':>5} | B = " + " ".join(f"{b:>4}" for b in SIZES))
    for sessions in matches.values():
        first, second = sorted(sessions[0].chips)
        xs = [s.mbb_per_hand(first) for s in sessions]
        mean = statistics.fmean(xs)
        shares = []
        for size in SIZES:
            blocks = [sum(xs[i:i + size]) for i in range(0, len(xs) - size + 1, size)]
            shares.append(sum((b > 0) == (mean > 0) for b in blocks) / len(blocks))
        print(f"{first[:12]:>12} vs {second[:12]:<12} {mean:+8.0f} {statistics.stdev(xs):8.0f} "
              f"{sum(x > 0 for x in xs) / len(xs):5.2f} |     " + " ".join(f"{s:4.2f}" for s in shares))


def resampled(matches: dict[str, list[Session]]) -> None:
    rng = random.Random(SEED)
    print(f"\n{TRIALS} tournaments of {DEALS} deals a pairing resampled from these deals, TrueSkill on blocks of B:")
    for size in SIZES:
        against = swapped = 0
        most = 0
        for _ in range(TRIALS):
            sessions: list[Session] = []
            for match_id, played in matches.items():
                for deal in range(DEALS):
                    s = rng.choice(played)
                    sessions.append(Session(match_id, deal, len(sessions), s.big_blind, dict(s.chips), dict(s.hands)))
            games = rating_games(sessions, RatingRules(block_deals=size))
            posteriors = fit(count_games(g.places() for g in games)).posteriors
            order = sorted(posteriors, key=lambda b: -(posteriors[b][0] - 3 * posteriors[b][1]))
            pairs = head_to_head(sessions)
            against += len(check_order(order, pairs).contradictions)
            rates = win_rates(sessions)
            here = sum(1 for i, a in enumerate(order) for b in order[i + 1:]
                       if rates[a].mean < rates[b].mean and pairs[a][b].mean <= 0)
            swapped += here
            most = max(most, here)
        print(f"  B = {size:3}: ranked against a significant head-to-head {against / TRIALS:.3f} a tournament; "
              f"against mbb/hand and their own head-to-head {swapped / TRIALS:.2f} (at most {most})")


def fitting_time() -> None:
    rng = random.Random(SEED)
    bots = [f"bot{i}" for i in range(6)]
    strength = {b: 300.0 * i for i, b in enumerate(bots)}
    pairings = list(itertools.combinations(bots, 2))
    sessions = []
    per_pairing = 50_000 // len(pairings)
    for a, b in pairings:
        for deal in range(per_pairing):
            x = strength[a] - strength[b] + rng.gauss(0, 8000)
            sessions.append(Session(f"{a}-{b}", deal, len(sessions), 100, {a: x, b: -x}, {a: 2, b: 2}))
    hands = 2 * len(sessions)
    for name, rules in (("blocks of 30 deals", RatingRules()), ("one deal a game (peer)", RatingRules(block_deals=1))):
        start = time.perf_counter()
        games = rating_games(sessions, rules)
        cut = time.perf_counter() - start
        start = time.perf_counter()
        result = fit(count_games(g.places() for g in games))
        took = time.perf_counter() - start
        print(f"re-rating {hands:,} hands, {name}: {len(games):,} games cut in {cut:.2f} s, fitted in {took:.3f} s "
              f"({result.sweeps} sweeps, converged {result.converged})")
    assert places_by_result({"a": 1.0}, 0) == {"a": 0}


def main(path: str | None = None) -> None:
    fitting_time()
    with tempfile.TemporaryDirectory(prefix="arena-bench-blocks-") as scratch:
        if path is None:
            out = Path(scratch) / "demo"
            print("playing a demo of 1,000 hands a pairing for the block measurements ...", flush=True)
            arena = str(Path(sys.executable).parent / "arena")
            subprocess.run([arena, "demo", "--hands", "1000", "--out", str(out)],
                           check=True, stdout=subprocess.DEVNULL)
            path = str(out / "demo.db")
        db = Database(path, read_only=True)
        matches = by_match(load_sessions(db))
        print(f"\n{path}: {sum(len(v) for v in matches.values()):,} duplicate deals in {len(matches)} pairings")
        sign_agreement(matches)
        resampled(matches)
        db.close()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
