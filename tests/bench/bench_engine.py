"""Rules engine speed: arena's compiled ``Hand`` and its Python reference against pokerfast and PokerKit, playing the
same random policy on the same tables, through each engine's Python API.

Run with ``python -c "from tests.bench.bench_engine import main; main()"`` (or ``python -m tests.bench``). Prints a
table; never asserts. Every engine plays no-limit 50/100 with 20,000-chip stacks, heads-up and 6-max, with one policy
driven by a seeded generator: raise 20% of the time (when raising is allowed) to a uniform amount between the
minimum and the maximum, fold 15% of the time when facing a bet, otherwise check or call. Each hand includes building
the hand, dealing, the forced bets and settling the pots. The decks are shuffled before the clock starts (a Python
shuffle of 52 cards takes 12 µs, more than a whole heads-up hand of the compiled engine): arena's engines and
pokerfast take the same pre-shuffled decks in turn (pokerfast through the ``rng`` it shuffles with); PokerKit deals
from its own deck, inside its time. Times are this process's CPU seconds (``time.process_time``): on this shared
machine another's load changes wall times by up to 2x from one engine's run to the next.

``ARENA_BENCH_ENGINE_HANDS`` sets the compiled engine's hands (default 200,000); the others play a tenth of that
(PokerKit a two-hundredth).
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable, MutableSequence, Sequence

from pokerfast import FULL_DECK as POKERFAST_DECK
from pokerfast import FastHand
from pokerkit import Automation, Mode, NoLimitTexasHoldem

from arena.engine import ActionKind, TableConfig, hand_class

SEED = 20240607
COMPILED_HANDS = int(os.environ.get("ARENA_BENCH_ENGINE_HANDS", "200000"))
DECKS = 4_096  # distinct pre-shuffled decks, dealt in turn
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

Player = Callable[[int, int, int], tuple[int, float]]  # (seats, hands, seed) -> (decisions, seconds)


def shuffled_decks(seed: int) -> list[list[int]]:
    """``DECKS`` shuffled 52-card decks, the same for every engine."""
    rng = random.Random(seed)
    decks = []
    for _ in range(DECKS):
        deck = list(range(52))
        rng.shuffle(deck)
        decks.append(deck)
    return decks


def arena_player(engine: str) -> Player:
    """Random play in arena's ``engine`` (``compiled`` or ``python``)."""
    hand_type = hand_class(engine)

    def play(seats: int, hands: int, seed: int) -> tuple[int, float]:
        rng = random.Random(seed)
        decks = shuffled_decks(seed)
        config = TableConfig(SMALL_BLIND, BIG_BLIND)
        stacks = [STACK] * seats
        raise_, fold, call, check = ActionKind.RAISE, ActionKind.FOLD, ActionKind.CALL, ActionKind.CHECK
        decisions = 0
        start = time.process_time()
        for number in range(hands):
            hand = hand_type(config, stacks, decks[number % DECKS], button=number % seats)
            while hand.to_act is not None:
                legal = hand.legal_actions()
                r = rng.random()
                if r < RAISE and legal.max_raise_to:
                    hand.apply(legal.seat, raise_, rng.randint(legal.min_raise_to, legal.max_raise_to))
                elif r >= 1 - FOLD and legal.can_fold:
                    hand.apply(legal.seat, fold)
                else:
                    hand.apply(legal.seat, call if legal.call_amount else check)
                decisions += 1
        return decisions, time.process_time() - start

    return play


class _DeckPool:
    """The ``rng`` pokerfast deals with: its shuffle lays out the next pre-shuffled deck; stacks are all equal."""

    def __init__(self, decks: Sequence[Sequence[int]]) -> None:
        self._decks = [[POKERFAST_DECK[card] for card in deck] for deck in decks]
        self._next = 0

    def shuffle(self, deck: MutableSequence[str]) -> None:
        deck[:] = self._decks[self._next % len(self._decks)]
        self._next += 1

    def randint(self, low: int, high: int) -> int:
        if low != high:
            raise ValueError("the benchmark gives every seat the same stack")
        return low


def play_pokerfast(seats: int, hands: int, seed: int) -> tuple[int, float]:
    """Play ``hands`` hands in pokerfast's ``FastHand`` (its blinds on seats 0 and 1); return (decisions, seconds)."""
    rng = random.Random(seed)
    pool = _DeckPool(shuffled_decks(seed))
    decisions = 0
    start = time.process_time()
    for _ in range(hands):
        hand = FastHand(player_count=seats, small_blind=SMALL_BLIND, big_blind=BIG_BLIND, min_stack=STACK,
                        max_stack=STACK, rng=pool)
        while not hand.done:
            space = hand.get_action_space()
            r = rng.random()
            if r < RAISE and "min_bet" in space:
                hand.bet_or_raise(rng.randint(space["min_bet"], space["max_bet"]))  # chips added, not raise-to
            elif r >= 1 - FOLD and "fold" in space:
                hand.fold()
            elif "call" in space:
                hand.call()
            else:
                hand.check()
            decisions += 1
    return decisions, time.process_time() - start


def play_pokerkit(seats: int, hands: int, seed: int) -> tuple[int, float]:
    """Play ``hands`` hands in PokerKit (every non-player step automated); return (decisions, seconds)."""
    rng = random.Random(seed)
    decisions = 0
    start = time.process_time()
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
    return decisions, time.process_time() - start


ENGINES: tuple[tuple[str, Player, int], ...] = (
    ("arena (compiled)", arena_player("compiled"), COMPILED_HANDS),
    ("arena (python)", arena_player("python"), COMPILED_HANDS // 10),
    ("pokerfast", play_pokerfast, COMPILED_HANDS // 10),
    ("pokerkit", play_pokerkit, COMPILED_HANDS // 200),
)


def main() -> None:
    """Time every engine on each table; print hands/s, decisions/s, µs a decision and the speed against pokerfast."""
    print(
        f"Random legal play, no-limit {SMALL_BLIND}/{BIG_BLIND}, {STACK:,}-chip stacks, seed {SEED}: "
        f"raise {RAISE:.0%}, fold {FOLD:.0%} facing a bet, else check/call; decks shuffled before the clock"
    )
    header = ("table", "engine", "hands", "decisions", "CPU s", "hands/s", "decisions/s", "µs/decision", "×pokerfast")
    print("{:<9} {:<17} {:>8} {:>10} {:>8} {:>10} {:>12} {:>12} {:>11}".format(*header))
    for name, seats in TABLES:
        rates: dict[str, float] = {}
        rows = []
        for engine, player, hands in ENGINES:
            decisions, seconds = player(seats, hands, SEED)
            rates[engine] = hands / seconds
            rows.append((engine, hands, decisions, seconds))
        for engine, hands, decisions, seconds in rows:
            print(
                f"{name:<9} {engine:<17} {hands:>8,} {decisions:>10,} {seconds:>8.2f} {hands / seconds:>10,.0f} "
                f"{decisions / seconds:>12,.0f} {seconds / decisions * 1e6:>12.2f} "
                f"{rates[engine] / rates['pokerfast']:>10.1f}x"
            )


if __name__ == "__main__":
    main()
