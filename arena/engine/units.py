"""The poker-standard unit of a win rate: thousandths of a big blind per hand (mbb/hand), written once for every
result, session, block, comparison and page."""

from __future__ import annotations


def mbb_per_hand(chips: float, big_blind: int, hands: int) -> float:
    """``chips`` won over ``hands`` hands in thousandths of ``big_blind`` per hand (0.0 for no hands)."""
    return 1000.0 * chips / big_blind / hands if hands else 0.0
