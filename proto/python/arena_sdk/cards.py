"""Cards as small ints, so the engine and the evaluator can index tables with them (RULES.md R1).

A card is ``rank * 4 + suit`` with rank 0 for a deuce up to 12 for an ace, and suit the index in ``SUITS``.
Suits have no order in play (R1.1); the index only names them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

RANKS = "23456789TJQKA"
SUITS = "cdhs"
FULL_DECK: tuple[int, ...] = tuple(range(52))

_TEXT = [r + s for r in RANKS for s in SUITS]
_PARSE = {text: i for i, text in enumerate(_TEXT)}
_TOKEN = re.compile(r"(10|[2-9TJQKAtjqka])([cdhsCDHS])")


class CardError(ValueError):
    """A card's text is not of the form R1.2 describes (rank then suit, e.g. ``As``, ``Td`` or ``10d``)."""


def card_rank(card: int) -> int:
    """Rank index of a card: 0 for a deuce up to 12 for an ace."""
    return card >> 2


def card_suit(card: int) -> int:
    """Suit index of a card (into ``SUITS``)."""
    return card & 3


def parse_card(text: str) -> int:
    """Parse one card such as ``As``, ``td`` or ``10h`` (R1.2 accepts ``10`` for ``T``)."""
    t = text.strip()
    if t[:2] == "10":
        t = "T" + t[2:]
    if len(t) == 2:
        card = _PARSE.get(t[0].upper() + t[1].lower())
        if card is not None:
            return card
    raise CardError(f"R1.2: {text!r} is not a card (expected rank 2-9, T, J, Q, K, A then suit c, d, h, s)")


def parse_cards(text: str) -> list[int]:
    """Parse a run of cards with or without separators: ``AsKd``, ``As Kd``, ``As,10d``."""
    stripped = re.sub(r"[\s,\[\]]+", "", text)
    cards: list[int] = []
    pos = 0
    while pos < len(stripped):
        m = _TOKEN.match(stripped, pos)
        if m is None:
            raise CardError(f"R1.2: cannot read a card at {stripped[pos:]!r} in {text!r}")
        cards.append(parse_card(m.group(0)))
        pos = m.end()
    return cards


def format_card(card: int) -> str:
    """Text form of a card, always with ``T`` for ten (R1.2)."""
    if not 0 <= card < 52:
        raise CardError(f"R1.1: {card} is not a card index (0..51)")
    return _TEXT[card]


def format_cards(cards: Iterable[int], sep: str = "") -> str:
    """Text form of several cards, joined by ``sep``."""
    return sep.join(map(_TEXT.__getitem__, cards))  # (a generator expression was twice as slow: the records' rows)
