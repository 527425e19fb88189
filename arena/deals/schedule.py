"""Duplicate schedules: every deal is replayed once per seat order, so each bot holds each seat's cards.

Heads-up that is the two mirrored hands; with K seats it is K rotations (every bot in every seat once), or all
K! orders where asked for small K. Stacks reset every hand in this mode (RULES.md R11.2).
"""

from __future__ import annotations

import hashlib
import hmac
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


def duplicate_plan_length(num_seats: int, hands: int, all_orders: bool = False, duplicate: bool = True) -> int:
    """How many hands ``duplicate_plan`` gives (from the start), without making them: ``hands`` rounded up to whole
    duplicate sets (a 20,000-hand schedule takes 17 ms to make, and a match's start asked its length three times)."""
    orders = len(rotations(num_seats, all_orders)) if duplicate else 1
    return -(-hands // orders) * orders


def cross_table_plan(num_bots: int, seats: int, deals: int, seed: str) -> Iterator[DealPlan]:
    """Duplicate across tables, for bots that could remember a deal (RULES-style D3 in the README): each deal is
    played once at each of ``num_bots / seats`` tables, every bot at exactly one of them, so no bot is dealt a deal
    twice; each bot's result is then compared with those of the bots that held the same seat's cards at the other
    tables. Who sits where changes every deal, drawn from the seed (HMAC), so no bot can foresee it.

    ``DealPlan.rotation`` is the table's index and ``seating[seat]`` the bot's index among all ``num_bots``.
    """
    if seats < 2 or num_bots % seats or num_bots < 2 * seats:
        raise ValueError(f"duplicate across tables needs at least two full tables: {num_bots} bots cannot fill "
                         f"tables of {seats} seats")
    tables = num_bots // seats
    number = 0
    for deal in range(deals):
        order = _shuffled(num_bots, seed, deal)
        for table in range(tables):
            yield DealPlan(number, deal, table, tuple(order[table * seats:(table + 1) * seats]), deal % seats)
            number += 1


def _shuffled(n: int, seed: str, deal: int) -> list[int]:
    """0..n-1 in an order fixed by the seed and the deal (Fisher-Yates on HMAC-SHA256 words, exactly uniform)."""
    order = list(range(n))
    key = seed.encode("utf-8")
    counter = 0
    for i in range(n - 1, 0, -1):
        bound = i + 1
        limit = (1 << 32) - (1 << 32) % bound
        while True:
            digest = hmac.new(key, b"arena-cross-table-v1:%d:%d" % (deal, counter), hashlib.sha256).digest()
            counter += 1
            word = int.from_bytes(digest[:4], "big")
            if word < limit:
                break
        j = word % bound
        order[i], order[j] = order[j], order[i]
    return order
