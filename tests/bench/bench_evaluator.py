"""Hand evaluator speed: arena's C evaluator against eval7, phevaluator and treys on the same 7-card hands;
heads-up board draws (``runout_orders``' pre-flop draws, which all-in EV and AIVAT make for three players or more)
against eval7's Monte Carlo equity, the same number of draws for the same matchups; and exact heads-up pre-flop
equity over all 1,712,304 boards (what all-in EV and AIVAT read for two players: ``arena_sdk.preflop``'s table)
against counting the boards with ``runout_orders`` and against eval7's Monte Carlo estimate from 20,000 draws (its
``py_hand_vs_range_exact`` answers only from the flop on: 0.0 for an empty board).

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
from arena_sdk.preflop import headsup_preflop

with warnings.catch_warnings():  # eval7 calls deprecated pyparsing APIs when imported
    warnings.simplefilter("ignore", DeprecationWarning)
    import eval7

HANDS = 300_000
TREYS_HANDS = 30_000  # treys is pure Python and slow; it gets the first hands of the same sample
SEED = 20240607
REPEATS = 3
MATCHUPS = 50  # heads-up pre-flop matchups for the board draws
DRAWS = 20_000  # all-in EV's draws for each
EXACT_MATCHUPS = 8  # heads-up pre-flop matchups counted board by board (tens of ms each)
TABLE_READS = 200_000  # reads of the table, over the same matchups


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
    exact()


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


def exact() -> None:
    """Exact heads-up pre-flop equity, all 1,712,304 boards of a matchup: arena's table (``headsup_preflop``)
    against counting every board with ``runout_orders`` (tens of milliseconds a matchup), and against eval7's
    Monte Carlo estimate from ``DRAWS`` draws (the peer's nearest answer: within about 0.4% of the exact one). The
    table's answers are checked against the counts on the way."""
    rng = random.Random(SEED)
    matchups = [rng.sample(FULL_DECK, 4) for _ in range(EXACT_MATCHUPS)]
    read = [headsup_preflop(m[:2], m[2:]) for m in matchups]
    counted = [runout_orders([tuple(m[:2]), tuple(m[2:])], (), 0, 0) for m in matchups]
    assert read == [(o.get((0, 1), 0), o.get((1, 0), 0), o.get((0, 0), 0)) for o in counted]
    e7 = [([eval7.Card(format_card(c)) for c in m[:2]], eval7.HandRange("".join(format_card(c) for c in m[2:])))
          for m in matchups]
    many = matchups * (TABLE_READS // EXACT_MATCHUPS)

    def table_run() -> None:
        for m in many:
            headsup_preflop(m[:2], m[2:])

    def counting_run() -> None:
        for m in matchups:
            runout_orders([tuple(m[:2]), tuple(m[2:])], (), 0, 0)

    def eval7_run() -> None:
        for hand, villain in e7:
            eval7.py_hand_vs_range_monte_carlo(hand, villain, [], DRAWS)

    rows = [("arena headsup_preflop (table)", _time(table_run, len(many), REPEATS)),
            ("arena runout_orders, every board", _time(counting_run, EXACT_MATCHUPS, 1)),
            (f"eval7 Monte Carlo, {DRAWS:,} draws", _time(eval7_run, EXACT_MATCHUPS, REPEATS))]
    print(f"\nheads-up pre-flop equity, {EXACT_MATCHUPS} matchups (the table: {len(many):,} reads, best of {REPEATS} "
          "runs; counting every board: 1 run)")
    print(f"{'equity':<34} {'exact':>6} {'µs a matchup':>13} {'matchups/s':>12} {'table / this':>13}")
    for (name, rate), is_exact in zip(rows, ("yes", "yes", "no"), strict=True):
        print(f"{name:<34} {is_exact:>6} {1e6 / rate:>13.2f} {rate:>12,.1f} {rows[0][1] / rate:>12,.0f}x")


if __name__ == "__main__":
    main()
