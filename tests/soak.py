"""How much randomized volume the suite plays: ``ARENA_SOAK`` multiplies the hands and examples of the randomized
tests (the engine against PokerKit, the engine's properties, OpenSpiel against the ACPC bridge). 1, the default,
keeps ``make test`` near five minutes; ``make soak`` plays ten times as much."""

from __future__ import annotations

import os

SOAK = max(1, int(os.environ.get("ARENA_SOAK", "1") or "1"))


def scaled(count: int) -> int:
    """``count`` hands or examples, times the soak factor."""
    return count * SOAK
