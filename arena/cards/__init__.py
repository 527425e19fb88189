"""Layer 1: cards and hands. A card is an int 0..51 (rank * 4 + suit); text form per RULES.md R1.2."""

from arena.cards.card import (
    FULL_DECK,
    RANKS,
    SUITS,
    CardError,
    card_rank,
    card_suit,
    format_card,
    format_cards,
    parse_card,
    parse_cards,
)

__all__ = [
    "FULL_DECK",
    "RANKS",
    "SUITS",
    "CardError",
    "card_rank",
    "card_suit",
    "format_card",
    "format_cards",
    "parse_card",
    "parse_cards",
]
