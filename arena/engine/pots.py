"""Main and side pots (R10.1) and how a pot is split among tied winners (R10.4). Pure functions."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True, slots=True)
class Pot:
    """A pot: its chips and the seats that can win it (not folded, contributed up to its level)."""

    amount: int
    eligible: tuple[int, ...]


def build_pots(contributions: Sequence[int], folded: Sequence[bool], dead: int = 0) -> list[Pot]:
    """Main and side pots, main first (R10.1): one pot per level of live contribution.

    ``contributions`` are each seat's live chips (blinds, bets, calls); ``dead`` is the dead money of the antes
    (R3.2), which goes to the main pot that every seat still in the hand can win. A seat still in with no live chips
    (all-in on its ante) can win the antes only. Folded chips stay in the pots; folded seats are eligible for none.
    Consecutive levels that the same seats can win are one pot (a folded player's contribution does not make a
    pot of its own), as in card rooms and PokerKit; this changes no payoff except how odd chips fall (R10.4).
    The uncalled part of a bet (R10.2) should be returned before calling this.
    """
    in_hand = tuple(seat for seat in range(len(folded)) if not folded[seat])
    pots: list[Pot] = [Pot(dead, in_hand)] if dead and in_hand else []
    previous = 0
    carry = 0  # chips of a level nobody eligible reached, when no pot exists yet to hold them
    for level in sorted({c for c in contributions if c > 0}):
        contributors = [seat for seat, c in enumerate(contributions) if c >= level]
        amount = (level - previous) * len(contributors) + carry
        carry = 0
        eligible = tuple(seat for seat in contributors if not folded[seat])
        if pots and (not eligible or eligible == pots[-1].eligible):
            last = pots[-1]
            pots[-1] = Pot(last.amount + amount, last.eligible)
        elif eligible:
            pots.append(Pot(amount, eligible))
        else:
            carry = amount
        previous = level
    return pots


@lru_cache(maxsize=4096)
def pots_of(contributions: tuple[int, ...], folded: tuple[bool, ...], dead: int = 0) -> tuple[Pot, ...]:
    """``build_pots`` remembered (it is pure): the table asks for the pots at every decision, and the same few
    patterns of contributions (the blinds, a call, a raise to three big blinds) recur from hand to hand."""
    return tuple(build_pots(contributions, folded, dead))


def split_pot(amount: int, winners: Sequence[int], button: int, num_seats: int, chip: int = 1) -> dict[int, int]:
    """Share a pot equally among ``winners``; odd chips go one by one clockwise from the button's left (R10.4)."""
    ordered = sorted(winners, key=lambda seat: (seat - button - 1) % num_seats)
    units, remainder = divmod(amount, chip)
    base, extra = divmod(units, len(ordered))
    shares = {seat: base * chip + (chip if k < extra else 0) for k, seat in enumerate(ordered)}
    shares[ordered[0]] += remainder  # less than one chip of the table's smallest denomination
    return shares
