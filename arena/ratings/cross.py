"""Duplicate across tables (arena.deals.cross_table_plan): a deal played once at every table, each bot at one of
them. A bot's score on the deal is its chips minus the mean chips of the other bots that held the same seat's cards
at the other tables, as duplicate bridge scores a board against the other tables that played it. The scores of a
deal add up to zero, seat by seat, so luck in the cards cancels as it does in ordinary duplicate."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence


def cross_table_scores(hands: Iterable[tuple[Sequence[int], Sequence[float]]]) -> dict[int, float]:
    """Each bot's score on one deal, from its hands as (seating: bot per seat, payoffs per seat)."""
    by_seat: dict[int, list[tuple[int, float]]] = defaultdict(list)
    for seating, payoffs in hands:
        for seat, bot in enumerate(seating):
            by_seat[seat].append((bot, payoffs[seat]))
    scores: dict[int, float] = {}
    for holders in by_seat.values():
        total = sum(chips for _, chips in holders)
        others = len(holders) - 1
        for bot, chips in holders:
            scores[bot] = chips - (total - chips) / others if others else 0.0
    return scores
