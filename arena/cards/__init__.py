"""Layer 1: cards and hands. A card is an int 0..51 (rank * 4 + suit); text form per RULES.md R1.2.

The card codec is the SDK's (``arena_sdk.cards``): bots and the referee read and write cards the same way, and the
SDK, the public protocol's package, is the lower layer.
"""

from arena_sdk.cards import (
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
