"""Hand values for bots (RULES.md R9): ``evaluate(cards)`` takes 5, 6 or 7 distinct cards (ints 0..51, see
``arena_sdk.cards``) and returns an int, higher stronger, equal an exact tie; ``category_of`` names its category.

``evaluate`` is the C core compiled when the SDK was installed (``arena_sdk/_eval.c``, the one the referee uses),
or, where no C compiler was at hand, the same evaluator in Python (``arena_sdk/_pyeval.py``): ``COMPILED`` says
which. The value's bits 20..23 are the category, bits 16..19, 12..15, 8..11, 4..7, 0..3 the tiebreak ranks
(0 = deuce .. 12 = ace) in the order R9.2 compares them, unused ones 0.
"""

from __future__ import annotations

from enum import IntEnum

try:
    from arena_sdk._eval import CATEGORY_SHIFT, evaluate

    COMPILED = True
except ImportError:  # installed without a C compiler
    from arena_sdk._pyeval import CATEGORY_SHIFT, evaluate

    COMPILED = False

__all__ = ["CATEGORY_SHIFT", "COMPILED", "Category", "category_of", "evaluate"]


class Category(IntEnum):
    """Hand categories of R9, weakest first; the number is ``value >> CATEGORY_SHIFT``."""

    HIGH_CARD = 0
    ONE_PAIR = 1
    TWO_PAIR = 2
    THREE_OF_A_KIND = 3
    STRAIGHT = 4
    FLUSH = 5
    FULL_HOUSE = 6
    FOUR_OF_A_KIND = 7
    STRAIGHT_FLUSH = 8


def category_of(value: int) -> Category:
    """Category of a hand value returned by ``evaluate``."""
    return Category(value >> CATEGORY_SHIFT)
