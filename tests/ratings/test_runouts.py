"""``board_orders``: the counts of the orders of finish that all-in EV and AIVAT read, exact where every completion is
counted (then no seed is derived: it would not be read) and drawn from the seed of the known cards otherwise."""

from __future__ import annotations

import random

import pytest

from arena.ratings.runouts import board_orders, board_shares, completions, draws_seed, headsup_shares, shares_of
from arena_sdk._eval import runout_orders
from arena_sdk.preflop import headsup_orders


def _deal(rng: random.Random, players: int, known: int) -> tuple[tuple[tuple[int, ...], ...], tuple[int, ...]]:
    cards = rng.sample(range(52), 2 * players + known)
    holes = tuple(tuple(cards[2 * p:2 * p + 2]) for p in range(players))
    return holes, tuple(cards[2 * players:])


@pytest.mark.parametrize(("players", "known", "samples"), [(2, 3, 1024), (2, 4, 1024), (3, 3, 1024), (3, 4, 64),
                                                          (6, 3, 8192), (2, 5, 1)])
def test_where_every_completion_is_counted_the_orders_are_the_same_whatever_the_seed(
        players: int, known: int, samples: int) -> None:
    rng = random.Random(players * 100 + known)
    for _ in range(20):
        holes, board = _deal(rng, players, known)
        assert completions(players, known) <= samples
        seeded = runout_orders(list(holes), board, samples, draws_seed("s", list(holes), board))
        assert board_orders(holes, board, samples, "s") == seeded == runout_orders(list(holes), board, samples, 7)
        assert sum(seeded.values()) == completions(players, known)


@pytest.mark.parametrize(("players", "known", "samples"), [(3, 0, 1024), (2, 3, 500), (4, 3, 100)])
def test_where_completions_are_drawn_the_draws_follow_the_known_cards_seed(players: int, known: int,
                                                                           samples: int) -> None:
    rng = random.Random(players * 10 + known)
    for _ in range(5):
        holes, board = _deal(rng, players, known)
        assert completions(players, known) > samples
        orders = board_orders(holes, board, samples, "s")
        assert orders == runout_orders(list(holes), board, samples, draws_seed("s", list(holes), board))
        assert sum(orders.values()) == samples


def test_completions_counts_the_boards_left() -> None:
    assert completions(2, 3) == 990 and completions(2, 4) == 44 and completions(2, 5) == 1
    assert completions(2, 0) == 1_712_304 and completions(3, 0) == 1_370_754


def test_heads_up_preflop_shares_are_the_orders_shares_to_the_last_bit() -> None:
    """``headsup_shares`` sums what ``shares_of`` sums over ``headsup_orders``' dict, in its order: the same floats
    (ties, one-sided match-ups and dominated hands among 20,000 random ones, and every pair of one hand's suits)."""
    rng = random.Random(11)
    pairs = [(cards[:2], cards[2:]) for cards in (rng.sample(range(52), 4) for _ in range(20_000))]
    pairs += [((0, 13), (26, 39)), ((12, 25), (11, 24)), ((12, 25), (38, 51))]  # a pair of twos each; AA-KK; AA-AA
    for a, b in pairs:
        assert headsup_shares(a, b) == shares_of(headsup_orders(a, b), 2), (a, b)
        assert board_shares((tuple(a), tuple(b)), (), 0, "s") == headsup_shares(a, b)
