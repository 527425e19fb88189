"""Duplicate schedules: every deal is replayed once per seat order, so each bot holds each seat's cards.

Heads-up that is the two mirrored hands; with K seats it is K rotations (every bot in every seat once), or all
K! orders where asked for small K. Stacks reset every hand in this mode (RULES.md R11.2).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass


def rotations(num_seats: int, all_orders: bool = False) -> list[tuple[int, ...]]:
    """Seat orders for one deal: ``order[seat]`` is the index of the bot in that seat."""
    if num_seats < 2:
        raise ValueError(f"a duplicate deal needs at least 2 seats, got {num_seats}")
    if all_orders:
        return list(itertools.permutations(range(num_seats)))
    return [tuple((seat + shift) % num_seats for seat in range(num_seats)) for shift in range(num_seats)]


@dataclass(frozen=True, slots=True)
class DealPlan:
    """One hand of a match: which deal (deck), which seat order, where the button is."""

    hand_number: int
    deal: int
    rotation: int
    seating: tuple[int, ...]
    button: int


def duplicate_plan(
    num_seats: int, hands: int, all_orders: bool = False, duplicate: bool = True, start: int = 0
) -> Iterator[DealPlan]:
    """The hands of a match in order: each deal's rotations back to back, so a cut-off match loses little.

    ``hands`` is rounded up to whole duplicate sets. The button moves one seat every deal (R2.2) and stays put
    within a deal, so the same cards meet the same positions. Without ``duplicate`` every hand is a new deal
    with the bots in their first order.
    """
    orders = rotations(num_seats, all_orders) if duplicate else [tuple(range(num_seats))]
    sets = -(-hands // len(orders))
    number = 0
    for deal in range(sets):
        for rotation, seating in enumerate(orders):
            if number >= start:
                yield DealPlan(number, deal, rotation, seating, deal % num_seats)
            number += 1
