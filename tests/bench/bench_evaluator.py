"""Hand evaluator speed: arena's C evaluator against eval7, phevaluator and treys on the same 7-card hands; and
heads-up board draws (all-in EV's and AIVAT's pre-flop runouts, ``runout_orders``) against eval7's Monte Carlo
equity, the same number of draws for the same matchups.

Run with ``python -c "from tests.bench.bench_evaluator import main; main()"``. Prints two tables; never asserts.
Every evaluator gets its cards already converted to its own form, so only evaluation (and the Python call
that every caller pays) is timed.
"""

from __future__ import annotations

import random
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import phevaluator
import treys

from arena.cards import FULL_DECK, format_card
from arena.cards.evaluator import evaluate, evaluate_many
from arena_sdk._eval import runout_orders

with warnings.catch_warnings():  # eval7 calls deprecated pyparsing APIs when imported
    warnings.simplefilter("ignore", DeprecationWarning)
    import eval7

HANDS = 300_000
TREYS_HANDS = 30_000  # treys is pure Python and slow; it gets the first hands of the same sample
SEED = 20240607
REPEATS = 3
MATCHUPS = 50  # heads-up pre-flop matchups for the board draws
DRAWS = 20_000  # all-in EV's draws for each


def _hands(count: int, seed: int) -> list[list[int]]:
    """``count`` seeded random 7-card hands in arena's encoding."""
    rng = random.Random(seed)
    return [rng.sample(FULL_DECK, 7) for _ in range(count)]


def _time(run: Callable[[], object], count: int, repeats: int) -> float:
    """Best evaluations per second over ``repeats`` runs of ``run`` (which evaluates ``count`` hands)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return count / best


def _loop(func: Callable[[Any], object], hands: Sequence[Any]) -> Callable[[], object]:
    """A run that calls ``func(hand)`` for every hand."""

    def run() -> None:
        for hand in hands:
            func(hand)

    return run


def _loop_star(func: Callable[..., object], hands: Sequence[Sequence[Any]]) -> Callable[[], object]:
    """A run that calls ``func(*hand)`` for every hand."""

    def run() -> None:
        for hand in hands:
            func(*hand)

    return run


def main() -> None:
    """Time each evaluator on the same seeded hands and print evals/s and arena's speed ratio."""
    hands = _hands(HANDS, SEED)

    e7_deck = [eval7.Card(format_card(c)) for c in FULL_DECK]
    e7_hands = [[e7_deck[c] for c in h] for h in hands]

    ph_id = [phevaluator.Card(format_card(c)).id_ for c in FULL_DECK]  # same rank*4+suit layout as arena
    ph_hands = [[ph_id[c] for c in h] for h in hands]

    tr_deck = [treys.Card.new(format_card(c)) for c in FULL_DECK]
    tr_hands = [([tr_deck[c] for c in h[:2]], [tr_deck[c] for c in h[2:]]) for h in hands[:TREYS_HANDS]]
    tr_eval = treys.Evaluator()

    def treys_run() -> None:
        for hole, board in tr_hands:
            tr_eval.evaluate(hole, board)

    rows: list[tuple[str, int, float]] = [
        ("arena evaluate", HANDS, _time(_loop(evaluate, hands), HANDS, REPEATS)),
        ("arena evaluate_many", HANDS, _time(lambda: evaluate_many(hands), HANDS, REPEATS)),
        ("eval7 evaluate", HANDS, _time(_loop(eval7.evaluate, e7_hands), HANDS, REPEATS)),
        (
            "phevaluator evaluate_cards",
            HANDS,
            _time(_loop_star(phevaluator.evaluate_cards, ph_hands), HANDS, REPEATS),
        ),
        ("treys Evaluator.evaluate", TREYS_HANDS, _time(treys_run, TREYS_HANDS, 1)),
    ]

    arena_rate = rows[0][2]
    print(f"7-card hand evaluation, seed {SEED}, best of {REPEATS} runs (treys: 1 run)")
    print(f"{'evaluator':<28} {'hands':>9} {'evals/s':>14} {'arena evaluate / this':>22}")
    for name, count, rate in rows:
        print(f"{name:<28} {count:>9,} {rate:>14,.0f} {arena_rate / rate:>21.2f}x")
    draws()


def draws() -> None:
    """Heads-up pre-flop board draws: arena's ``runout_orders`` (how often each player wins or they tie) against
    eval7's ``py_hand_vs_range_monte_carlo`` (the first hand's equity against a range of the one other hand)."""
    rng = random.Random(SEED)
    matchups = [rng.sample(FULL_DECK, 4) for _ in range(MATCHUPS)]
    e7 = [([eval7.Card(format_card(c)) for c in m[:2]], eval7.HandRange("".join(format_card(c) for c in m[2:])))
          for m in matchups]

    def arena_run() -> None:
        for i, m in enumerate(matchups):
            runout_orders([tuple(m[:2]), tuple(m[2:])], (), DRAWS, i)

    def eval7_run() -> None:
        for hand, villain in e7:
            eval7.py_hand_vs_range_monte_carlo(hand, villain, [], DRAWS)

    count = MATCHUPS * DRAWS
    rows = [("arena runout_orders", _time(arena_run, count, REPEATS)),
            ("eval7 hand_vs_range_monte_carlo", _time(eval7_run, count, REPEATS))]
    print(f"\nheads-up pre-flop board draws, {MATCHUPS} matchups x {DRAWS:,} draws, best of {REPEATS} runs")
    print(f"{'draws':<34} {'ns a draw':>10} {'draws/s':>14} {'arena / this':>13}")
    for name, rate in rows:
        print(f"{name:<34} {1e9 / rate:>10.1f} {rate:>14,.0f} {rows[0][1] / rate:>12.2f}x")


if __name__ == "__main__":
    main()
