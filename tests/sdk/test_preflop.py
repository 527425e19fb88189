"""The heads-up pre-flop table (arena_sdk.preflop, proto/python/tools/preflop_table.py): every match-up of two hands
is in it, and its counts are the ones counting all 1,712,304 boards gives, whichever order the hands come in and
whatever their suits are called."""

from __future__ import annotations

import itertools
import random
import zlib
from importlib import resources

import pytest

from arena.cards import parse_cards
from arena_sdk import _eval, preflop
from arena_sdk._eval import runout_orders
from arena_sdk.preflop import BOARDS, headsup_orders, headsup_preflop


def counted(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, int, int]:
    """``a``'s wins, ``b``'s wins and the ties, every board counted (about 40 ms)."""
    orders = runout_orders([a, b], (), 0, 0)
    return orders.get((0, 1), 0), orders.get((1, 0), 0), orders.get((0, 0), 0)


def test_the_table_agrees_with_counting_every_board() -> None:
    """Random match-ups, and some whose hands share ranks or suits (mirrors, dominated hands, the same pair), read
    from the table and counted afresh (a second or so)."""
    rng = random.Random(27)
    ups = [tuple(tuple(parse_cards(h)) for h in pair.split()) for pair in (
        "AsAh KdKc", "AsKh AhKs", "AsKs AdKd", "7c2d 7h2s", "AsKs AhQh", "2c2d AhAs", "JcTc 9h9d", "AsKd QsQd")]
    for _ in range(16):
        cards = rng.sample(range(52), 4)
        ups.append(((cards[0], cards[1]), (cards[2], cards[3])))
    for a, b in ups:
        assert headsup_preflop(a, b) == counted(a, b), (a, b)


def test_every_match_up_is_in_the_table_and_counts_every_board() -> None:
    """All 812,175 pairs of disjoint hands find their entry (a missing one raises), in either order and with the
    cards of a hand either way round, and each counts every board once: wins, losses and ties add up to C(48, 5),
    and swapping the hands swaps the wins."""
    hands = list(itertools.combinations(range(52), 2))
    seen = 0
    for i, a in enumerate(hands):
        for b in hands[i + 1:]:
            if a[0] in b or a[1] in b:
                continue
            wins, losses, ties = headsup_preflop(a, b)
            assert wins + losses + ties == BOARDS
            if seen % 97 == 0:
                assert headsup_preflop(b, a) == (losses, wins, ties)
                assert headsup_preflop(a[::-1], b[::-1]) == (wins, losses, ties)
            seen += 1
    assert seen == 812_175


def test_relabelling_the_suits_changes_nothing() -> None:
    rng = random.Random(5)
    for _ in range(2_000):
        cards = rng.sample(range(52), 4)
        perm = rng.sample(range(4), 4)
        moved = [(c & ~3) | perm[c & 3] for c in cards]
        assert headsup_preflop(cards[:2], cards[2:]) == headsup_preflop(moved[:2], moved[2:])


def test_known_figures() -> None:
    """The figures an equity calculator gives: aces against kings of the other suits win 81.06% of boards and tie
    0.38%; ace-king suited against queens has 46% of the pot; the same two hands with the suits swapped tie 98.5%."""
    wins, losses, ties = headsup_preflop(parse_cards("AsAh"), parse_cards("KdKc"))
    assert round(wins / BOARDS, 4) == 0.8106 and round(ties / BOARDS, 4) == 0.0038
    wins, losses, ties = headsup_preflop(parse_cards("AsKs"), parse_cards("QdQh"))
    assert round((wins + ties / 2) / BOARDS, 2) == 0.46
    wins, losses, ties = headsup_preflop(parse_cards("AsKh"), parse_cards("AhKs"))
    assert wins == losses and round(ties / BOARDS, 3) == 0.985


def test_orders_are_runout_orders_answer() -> None:
    a, b = tuple(parse_cards("9s8s")), tuple(parse_cards("AdKc"))
    assert headsup_orders(a, b) == runout_orders([a, b], (), 0, 0)


def test_bad_cards_and_bad_tables_are_refused() -> None:
    with pytest.raises(ValueError, match="distinct"):
        headsup_preflop((0, 1), (1, 2))
    with pytest.raises(ValueError, match="distinct"):
        headsup_preflop((0, 52), (1, 2))
    data = zlib.decompress(resources.files("arena_sdk").joinpath(preflop.TABLE).read_bytes())
    with pytest.raises(ValueError, match="expected"):
        _eval.load_preflop_table(data[:-12])
    swapped = data[12:24] + data[:12] + data[24:]  # two entries out of order
    with pytest.raises(ValueError, match="out of order"):
        _eval.load_preflop_table(swapped)
    headsup_preflop((0, 1), (2, 3))  # the table loaded before is kept
