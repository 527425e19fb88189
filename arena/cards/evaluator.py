"""Hand evaluation (RULES.md R9): a fast C core and a readable description of a hand.

``evaluate(cards)`` takes 5, 6 or 7 distinct cards (ints 0..51, see ``arena_sdk.cards``) and returns an int: higher
is stronger, equal is an exact tie (R9.3: only five cards count, suits never break a tie). It is the C function
itself, with no Python layer in between: the SDK's compiled core (``arena_sdk/_eval.c``, built when ``arena-sdk``
is installed), which bots use too; the referee needs it compiled, never the SDK's Python fallback. The value's
layout:

* ``value >> CATEGORY_SHIFT`` (bits 20..23) is the ``Category``, 0 high card .. 8 straight flush;
* bits 16..19, 12..15, 8..11, 4..7, 0..3 are the tiebreak ranks (0 = deuce .. 12 = ace) in the order R9.2
  compares them; a category uses ``TIEBREAK_COUNT[category]`` of them and the others are 0. A straight's rank
  is its top card, 3 (the five) for the wheel A-2-3-4-5 (R9.1).

``describe(cards)`` is the slow, friendly counterpart: the value, the five cards that make it and a text such
as "Full house, kings full of tens".
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations

from arena_sdk.cards import card_rank
from arena_sdk.evaluator import Category, category_of

try:
    from arena_sdk._eval import CATEGORY_SHIFT, category_counts, category_counts_7, evaluate, evaluate_many
except ImportError as exc:  # the SDK was installed where no C compiler was at hand
    raise ImportError(f"arena needs the SDK's compiled hand evaluator (arena_sdk._eval): {exc}; reinstall it with a "
                      "C compiler present (`make install`, or `pip install -e proto/python`)") from exc

__all__ = [
    "CATEGORY_SHIFT",
    "TIEBREAK_COUNT",
    "Category",
    "HandRank",
    "category_counts",
    "category_counts_7",
    "category_of",
    "describe",
    "evaluate",
    "evaluate_many",
    "hand_name",
    "hand_names_by_top_bits",
    "tiebreak_ranks",
]


TIEBREAK_COUNT: dict[Category, int] = {
    Category.HIGH_CARD: 5,
    Category.ONE_PAIR: 4,
    Category.TWO_PAIR: 3,
    Category.THREE_OF_A_KIND: 3,
    Category.STRAIGHT: 1,
    Category.FLUSH: 5,
    Category.FULL_HOUSE: 2,
    Category.FOUR_OF_A_KIND: 2,
    Category.STRAIGHT_FLUSH: 1,
}

_NAMES = (
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "jack",
    "queen",
    "king",
    "ace",
)
_PLURALS = tuple(name + ("es" if name == "six" else "s") for name in _NAMES)
_ACE = 12
_FIVE = 3


def tiebreak_ranks(value: int) -> tuple[int, ...]:
    """Tiebreak ranks of a hand value, in the order R9.2 compares them (0 = deuce .. 12 = ace)."""
    count = TIEBREAK_COUNT[category_of(value)]
    return tuple((value >> (16 - 4 * i)) & 0xF for i in range(count))


@dataclass(frozen=True)
class HandRank:
    """A hand's value, category, the five cards that count (in the order they count) and its text."""

    value: int
    category: Category
    best_five: tuple[int, ...]
    text: str


def _text(category: Category, ranks: tuple[int, ...]) -> str:
    """Human text for a category and its tiebreak ranks."""
    top = ranks[0]
    if category is Category.STRAIGHT_FLUSH:
        return "Royal flush" if top == _ACE else f"Straight flush, {_NAMES[top]} high"
    if category is Category.FOUR_OF_A_KIND:
        return f"Four of a kind, {_PLURALS[top]}"
    if category is Category.FULL_HOUSE:
        return f"Full house, {_PLURALS[top]} full of {_PLURALS[ranks[1]]}"
    if category is Category.FLUSH:
        return f"Flush, {_NAMES[top]} high"
    if category is Category.STRAIGHT:
        return f"Straight, {_NAMES[top]} high"
    if category is Category.THREE_OF_A_KIND:
        return f"Three of a kind, {_PLURALS[top]}"
    if category is Category.TWO_PAIR:
        return f"Two pair, {_PLURALS[top]} and {_PLURALS[ranks[1]]}"
    if category is Category.ONE_PAIR:
        return f"One pair, {_PLURALS[top]}"
    return f"High card, {_NAMES[top]}"


def _order(five: tuple[int, ...], category: Category) -> tuple[int, ...]:
    """The five cards in the order they count: groups by size then rank, straights from the top card down."""
    if category in (Category.STRAIGHT, Category.STRAIGHT_FLUSH):
        ranks = {card_rank(c) for c in five}
        wheel = _ACE in ranks and _FIVE in ranks
        return tuple(
            sorted(five, key=lambda c: -1 if wheel and card_rank(c) == _ACE else card_rank(c), reverse=True)
        )
    counts = Counter(card_rank(c) for c in five)
    return tuple(sorted(five, key=lambda c: (counts[card_rank(c)], card_rank(c)), reverse=True))


def hand_name(cards: list[int] | tuple[int, ...]) -> str:
    """``describe(cards).text`` without finding the best five: the name follows from the hand's value alone."""
    return _name_of(evaluate(cards))  # validates the cards as describe does


def hand_names_by_top_bits() -> tuple[str | None, ...]:
    """``hand_name``'s text for every value by its top twelve bits (index ``value >> 12``: the category and the first
    two tiebreak ranks, all the text depends on), None where no value has them: the compiled engine encodes HandEnds
    with it without calling Python (arena.engine._core.set_hand_names)."""
    names: list[str | None] = []
    for key in range(4096):
        category, top, second = key >> 8, (key >> 4) & 0xF, key & 0xF
        valid = category < len(Category) and top < 13 and second < 13
        names.append(_text(Category(category), (top, second)) if valid else None)
    return tuple(names)


@lru_cache(maxsize=8192)  # 7,462 distinct values
def _name_of(value: int) -> str:
    return _text(category_of(value), tiebreak_ranks(value))


def describe(cards: list[int] | tuple[int, ...]) -> HandRank:
    """Value, best five cards (in the order they count) and text of 5, 6 or 7 cards."""
    value = evaluate(cards)  # validates the cards (count, range, duplicates)
    five = next(combo for combo in combinations(cards, 5) if evaluate(combo) == value)
    category = category_of(value)
    return HandRank(value, category, _order(five, category), _text(category, tiebreak_ranks(value)))
