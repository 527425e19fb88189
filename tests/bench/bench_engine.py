"""Rules engine speed: arena's ``Hand`` against PokerKit, playing the same random policy on the same tables.

Run with ``python -c "from tests.bench.bench_engine import main; main()"`` (or ``python -m tests.bench``). Prints a
table; never asserts. Both engines play no-limit 50/100 with 20,000-chip stacks, heads-up and 6-max, with one policy
driven by a seeded generator: raise 20% of the time (when raising is allowed) to a uniform amount between the
minimum and the maximum, fold 15% of the time when facing a bet, otherwise check or call. Each hand includes
shuffling and dealing (PokerKit deals from its own shuffled deck) and settling the pots.
"""

from __future__ import annotations

import random
import time

from pokerkit import Automation, Mode, NoLimitTexasHoldem

from arena.engine import ActionKind, Hand, TableConfig

SEED = 20240607
ARENA_HANDS = 20_000
POKERKIT_HANDS = 1_000
STACK = 20_000
SMALL_BLIND, BIG_BLIND = 50, 100
TABLES = (("heads-up", 2), ("6-max", 6))
RAISE, FOLD = 0.20, 0.15

POKERKIT_AUTOMATIONS = (
    Automation.ANTE_POSTING,
    Automation.BET_COLLECTION,
    Automation.BLIND_OR_STRADDLE_POSTING,
    Automation.CARD_BURNING,
    Automation.HOLE_DEALING,
    Automation.BOARD_DEALING,
    Automation.HOLE_CARDS_SHOWING_OR_MUCKING,
    Automation.HAND_KILLING,
    Automation.CHIPS_PUSHING,
    Automation.CHIPS_PULLING,
)


def play_arena(seats: int, hands: int, seed: int) -> tuple[int, float]:
    """Play ``hands`` hands in the arena engine; return (decisions, seconds)."""
    rng = random.Random(seed)
    config = TableConfig(SMALL_BLIND, BIG_BLIND)
    stacks = [STACK] * seats
    deck = list(range(52))
    decisions = 0
    start = time.perf_counter()
    for number in range(hands):
        rng.shuffle(deck)
        hand = Hand(config, stacks, deck, button=number % seats)
        while hand.to_act is not None:
            legal = hand.legal_actions()
            r = rng.random()
            if r < RAISE and legal.max_raise_to:
                hand.apply(legal.seat, ActionKind.RAISE, rng.randint(legal.min_raise_to, legal.max_raise_to))
            elif r >= 1 - FOLD and legal.can_fold:
                hand.apply(legal.seat, ActionKind.FOLD)
            else:
                hand.apply(legal.seat, ActionKind.CALL if legal.call_amount else ActionKind.CHECK)
            decisions += 1
    return decisions, time.perf_counter() - start


def play_pokerkit(seats: int, hands: int, seed: int) -> tuple[int, float]:
    """Play ``hands`` hands in PokerKit (every non-player step automated); return (decisions, seconds)."""
    rng = random.Random(seed)
    decisions = 0
    start = time.perf_counter()
    for _ in range(hands):
        state = NoLimitTexasHoldem.create_state(
            POKERKIT_AUTOMATIONS, True, 0, (SMALL_BLIND, BIG_BLIND), BIG_BLIND, [STACK] * seats, seats,
            mode=Mode.TOURNAMENT,  # no run-out-count question when players are all-in
        )
        while state.actor_index is not None:
            low = state.min_completion_betting_or_raising_to_amount
            r = rng.random()
            if r < RAISE and low is not None:
                state.complete_bet_or_raise_to(rng.randint(low, state.max_completion_betting_or_raising_to_amount))
            elif r >= 1 - FOLD and state.checking_or_calling_amount:
                state.fold()
            else:
                state.check_or_call()
            decisions += 1
    return decisions, time.perf_counter() - start


def main() -> None:
    """Time both engines on each table and print hands/s, decisions/s and arena's speed ratio."""
    rows: list[tuple[str, str, int, int, float]] = []
    ratios: list[tuple[str, float]] = []
    for name, seats in TABLES:
        arena_decisions, arena_seconds = play_arena(seats, ARENA_HANDS, SEED)
        pk_decisions, pk_seconds = play_pokerkit(seats, POKERKIT_HANDS, SEED)
        rows.append((name, "arena", ARENA_HANDS, arena_decisions, arena_seconds))
        rows.append((name, "pokerkit", POKERKIT_HANDS, pk_decisions, pk_seconds))
        ratios.append((name, (ARENA_HANDS / arena_seconds) / (POKERKIT_HANDS / pk_seconds)))

    print(
        f"Random legal play, no-limit {SMALL_BLIND}/{BIG_BLIND}, {STACK:,}-chip stacks, seed {SEED}: "
        f"raise {RAISE:.0%}, fold {FOLD:.0%} facing a bet, else check/call"
    )
    header = ("table", "engine", "hands", "decisions", "seconds", "hands/s", "decisions/s")
    print("{:<9} {:<9} {:>7} {:>10} {:>8} {:>10} {:>12}".format(*header))
    for name, engine, hands, decisions, seconds in rows:
        print(
            f"{name:<9} {engine:<9} {hands:>7,} {decisions:>10,} {seconds:>8.2f} "
            f"{hands / seconds:>10,.0f} {decisions / seconds:>12,.0f}"
        )
    print("arena / PokerKit, hands/s: " + ", ".join(f"{name} {ratio:.1f}x" for name, ratio in ratios))


if __name__ == "__main__":
    main()
