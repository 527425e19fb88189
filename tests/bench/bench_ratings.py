"""Rating speed: the leaderboard's TrueSkill (all sessions fitted at once) on synthetic duplicate sessions.

Run with ``python -c "from tests.bench.bench_ratings import main; main()"`` (or ``python -m tests.bench``). Prints
figures; never asserts. Heads-up: 6 bots, all 15 pairings, 500 sessions each (7,500 sessions); three-way: 6 bots,
all 20 tables of three, 100 sessions each; 6-max: one table of 6 bots, 400 sessions (nearly every session a distinct
order of finish, the slow case: each distinct result is a game of its own in every sweep). The peer is one sweep of
TrueSkill Through Time itself (``trueskillthroughtime.History`` with every session at time 0: its construction is a
sweep) and how far that leaves the common level of the skills from the fixed point.
"""

from __future__ import annotations

import itertools
import random
import time

import trueskillthroughtime as ttt

from arena.ratings.sessions import Session
from arena.ratings.trueskill_ratings import TrueSkill

SEED = 20240607
BOTS = [f"bot{i}" for i in range(6)]
STRENGTH = {bot: 0.3 * i for i, bot in enumerate(BOTS)}


def sessions_of(tables: list[tuple[str, ...]], per_table: int, rng: random.Random) -> list[Session]:
    """Sessions of each table in turn; a bot's chips are its strength plus noise, in whole big blinds."""
    out = []
    for table in tables:
        for _ in range(per_table):
            chips = {bot: round(STRENGTH[bot] + rng.gauss(0, 1.5)) * 100 for bot in table}
            out.append(Session("bench", len(out), len(out), 100, chips, dict.fromkeys(table, len(table))))
    return out


def distinct(sessions: list[Session]) -> int:
    return len({tuple(sorted(s.places().items())) for s in sessions})


def report(name: str, sessions: list[Session], history: bool) -> None:
    fit_start = time.perf_counter()
    result = TrueSkill().fit(sessions)
    fit_s = time.perf_counter() - fit_start
    line = (f"{name:9} {len(sessions):6,} sessions {distinct(sessions):5,} distinct results: fit {fit_s:6.2f} s,"
            f" {result.sweeps:4} sweeps, converged {result.converged}")
    shuffled = random.Random(SEED).sample(sessions, len(sessions))
    again = TrueSkill().fit(shuffled)
    line += f"; shuffled: identical {again.posteriors == result.posteriors}"
    if history:
        start = time.perf_counter()
        points = TrueSkill().history(sessions, 30)
        line += f"; history {len(points[BOTS[0]])} points {time.perf_counter() - start:.2f} s"
    print(line, flush=True)


def ttt_peer(sessions: list[Session]) -> None:
    composition = [[[bot] for bot in sorted(s.chips)] for s in sessions]
    results = [[-s.places()[bot] for bot in sorted(s.chips)] for s in sessions]
    start = time.perf_counter()
    history = ttt.History(composition, results, times=[0] * len(sessions), mu=25.0, sigma=25 / 3, beta=25 / 6,
                          gamma=0.0, p_draw=0.10)
    elapsed = time.perf_counter() - start
    ours = TrueSkill().fit(sessions).posteriors
    theirs = history.batches[0].posteriors()
    off = max(abs(theirs[bot].mu - ours[bot][0]) for bot in ours)
    print(f"peer: TrueSkill Through Time, one sweep of the {len(sessions):,} heads-up sessions: {elapsed:.2f} s;"
          f" its mu are then up to {off:.2f} from the fixed point", flush=True)


def main() -> None:
    rng = random.Random(SEED)
    heads_up = sessions_of(list(itertools.combinations(BOTS, 2)), 500, rng)
    report("heads-up", heads_up, history=True)
    ttt_peer(heads_up)
    report("3-way", sessions_of(list(itertools.combinations(BOTS, 3)), 100, rng), history=True)
    report("6-max", sessions_of([tuple(BOTS)], 400, rng), history=False)


if __name__ == "__main__":
    main()
