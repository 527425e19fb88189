"""One deal's hands folded into a duplicate session: each participant's chips and hands, the one fold every session,
live tally, scorer and comparison uses (below the runner and the ratings, which both need it).

Across tables (arena.deals.schedule's cross-table plan) a deal is played once at every table, each bot at one of
them. A bot's score on the deal is its chips minus the mean chips of the other bots that held the same seat's cards
at the other tables, as duplicate bridge scores a board against the other tables that played it. The scores of a
deal add up to zero, seat by seat, so luck in the cards cancels as it does in ordinary duplicate."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from arena.engine.units import mbb_per_hand

Hand = tuple[Sequence[int], Sequence[float]]  # (participant per seat, payoff per seat)


def fold_session(hands: Iterable[Hand], cross_table: bool = False) -> tuple[dict[int, float], dict[int, int]]:
    """Each participant's chips and hands over one deal's ``hands``, in the order given (one order of adding up);
    with ``cross_table`` its chips are its cross-table score and its hands 1 (a deal played once at every table)."""
    if cross_table:
        scores = cross_table_scores(hands)
        return scores, dict.fromkeys(scores, 1)
    chips: dict[int, float] = {}
    count: dict[int, int] = {}
    for seating, payoffs in hands:
        for seat, participant in enumerate(seating):
            chips[participant] = chips.get(participant, 0) + payoffs[seat]
            count[participant] = count.get(participant, 0) + 1
    return chips, count


def cross_table_scores(hands: Iterable[Hand]) -> dict[int, float]:
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


__all__ = ["Hand", "cross_table_scores", "fold_session", "mbb_per_hand"]
