"""The hand evaluator in plain Python, for an SDK installed without a C compiler: the same values, by the same
method, as the C core (``arena_sdk/_eval.c``), which the tests check it against.

One 13-bit rank mask per suit; a flush is a suit mask with five bits or more (with at most seven cards it decides
the hand); ranks held in two, three or four suits come from AND-ing the masks; small tables indexed by a mask give
its bit count, top bit, best straight and top five ranks. It differs from the C core only in accepting ``True``
and ``False`` as the cards 1 and 0.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["CATEGORY_SHIFT", "evaluate"]

CATEGORY_SHIFT = 20
_RANKS = "23456789TJQKA"
_SUITS = "cdhs"
_WHEEL = 0x100F  # A, 2, 3, 4, 5: the five (rank 3) is the straight's top
_ONE_PAIR, _TWO_PAIR, _TRIPS, _STRAIGHT, _FLUSH, _FULL_HOUSE, _QUADS, _STRAIGHT_FLUSH = (
    c << CATEGORY_SHIFT for c in range(1, 9))


def _straight_top(mask: int) -> int:
    for top in range(12, 3, -1):
        run = 0x1F << (top - 4)
        if mask & run == run:
            return top
    return 3 if mask & _WHEEL == _WHEEL else -1


def _top_five(mask: int) -> int:
    ranks = [r for r in range(12, -1, -1) if mask >> r & 1][:5]
    return sum(r << (16 - 4 * i) for i, r in enumerate(ranks))


_COUNT = [m.bit_count() for m in range(8192)]
_TOP = [max(m.bit_length() - 1, 0) for m in range(8192)]
_STRAIGHT_TOP = [_straight_top(m) for m in range(8192)]
_TOP5 = [_top_five(m) for m in range(8192)]
_RANK_BIT = {card: 1 << (card >> 2) for card in range(52)}


def evaluate(cards: Sequence[int], /) -> int:
    """Value of the best five-card hand among 5, 6 or 7 distinct cards (ints 0..51): higher is stronger, equal is
    an exact tie; ``value >> CATEGORY_SHIFT`` is the category (0 high card .. 8 straight flush)."""
    if type(cards) is not list and type(cards) is not tuple:
        _check(cards)  # any other sequence of card ints is read as the C core reads it
    masks = [0, 0, 0, 0]
    try:
        n = len(cards)
        for card in cards:
            masks[card & 3] |= _RANK_BIT[card]
    except (KeyError, TypeError):
        _check(cards)
        raise
    c, d, h, s = masks
    if not 5 <= n <= 7 or _COUNT[c] + _COUNT[d] + _COUNT[h] + _COUNT[s] != n:
        _check(cards)
    for suit in masks:
        if _COUNT[suit] >= 5:
            top = _STRAIGHT_TOP[suit]
            return _STRAIGHT_FLUSH | top << 16 if top >= 0 else _FLUSH | _TOP5[suit]
    ranks = c | d | h | s
    quads = c & d & h & s
    if quads:
        q = _TOP[quads]
        return _QUADS | q << 16 | _TOP[ranks & ~(1 << q)] << 12
    cd = c & d
    hs = h & s
    trips = (cd & (h | s)) | (hs & (c | d))
    pairs = cd | hs | ((c | d) & (h | s))  # ranks held at least twice
    if trips:
        t = _TOP[trips]
        rest = pairs & ~(1 << t)
        if rest:
            return _FULL_HOUSE | t << 16 | _TOP[rest] << 12
    top = _STRAIGHT_TOP[ranks]
    if top >= 0:
        return _STRAIGHT | top << 16
    if trips:
        t = _TOP[trips]
        return _TRIPS | t << 16 | (_TOP5[ranks & ~(1 << t)] >> 4) & 0xFF00
    if pairs:
        hi = _TOP[pairs]
        others = pairs & ~(1 << hi)
        if others:
            lo = _TOP[others]
            return _TWO_PAIR | hi << 16 | lo << 12 | _TOP[ranks & ~(1 << hi) & ~(1 << lo)] << 8
        return _ONE_PAIR | hi << 16 | (_TOP5[ranks & ~(1 << hi)] >> 4) & 0xFFF0
    return _TOP5[ranks]


def _check(cards: object) -> None:
    """Raise the C core's error for cards that are not 5 to 7 distinct ints 0..51."""
    if isinstance(cards, (str, bytes)) or not isinstance(cards, Sequence):
        raise TypeError(f"evaluate() expects a list or tuple of 5, 6 or 7 card ints (0..51), got "
                        f"{type(cards).__name__}")
    if not 5 <= len(cards) <= 7:
        raise ValueError(f"evaluate() needs 5, 6 or 7 cards, got {len(cards)}")
    seen: set[int] = set()
    for i, card in enumerate(cards):
        if not isinstance(card, int):
            raise TypeError(f"evaluate(): card {i} must be an int 0..51, got {type(card).__name__}")
        if not 0 <= card <= 51:
            raise ValueError(f"evaluate(): card {i} is {card}, out of range (must be 0..51)")
        if card in seen:
            raise ValueError(f"evaluate(): duplicate card {card} ({_RANKS[card >> 2]}{_SUITS[card & 3]})")
        seen.add(card)
