"""Heads-up duplicate matches between SDK bots, played in-process by the real referee (no network).

Each deck is dealt twice with the bots in swapped seats, so the cards' luck cancels out (duplicate poker); stacks
reset every hand. The bots get exactly the ActionRequests a remote bot would (arena.runner.inprocess).
"""

from __future__ import annotations

import asyncio
import math
from collections import defaultdict
from dataclasses import dataclass

from arena.engine import TableConfig
from arena.referee import ClockPolicy, HandRecord, Match, MatchSpec
from arena.runner.inprocess import InProcessSeat
from arena_sdk import Bot

STACK = 10_000
CONFIG = TableConfig(small_blind=50, big_blind=100)


@dataclass(frozen=True)
class DuplicateResult:
    """Hero's net chips per deal (both seatings summed) and summary statistics in milli-big-blinds per hand."""

    nets: list[int]

    @property
    def hands(self) -> int:
        return 2 * len(self.nets)

    @property
    def mbb_per_hand(self) -> float:
        return 1000 * sum(self.nets) / CONFIG.big_blind / self.hands

    @property
    def stderr_mbb(self) -> float:
        """Standard error of ``mbb_per_hand`` (deals are independent; the two seatings of a deal are not)."""
        n = len(self.nets)
        mean = sum(self.nets) / n
        var = sum((x - mean) ** 2 for x in self.nets) / (n - 1)
        return 1000 * math.sqrt(var / n) / 2 / CONFIG.big_blind


def duplicate_match(hero: Bot, villain: Bot, deals: int, seed: int) -> DuplicateResult:
    """``deals`` decks, each played once with each bot in each seat; any illegal action fails the match."""
    nets: dict[int, int] = defaultdict(int)

    def on_hand(record: HandRecord) -> None:
        nets[record.deal] += record.payoffs[record.seating.index(0)]

    spec = MatchSpec("sdk", str(seed), 2 * deals, config=CONFIG, starting_stack=STACK,
                     policy=ClockPolicy(per_action_ms=60_000, max_retries=0))
    seats = [("hero", InProcessSeat("hero", hero)), ("villain", InProcessSeat("villain", villain))]
    result = asyncio.run(Match(spec, seats, on_hand=on_hand).run())
    assert all(r.violations == 0 for r in result.results), result.results
    return DuplicateResult([nets[d] for d in range(deals)])
