"""The orders of finish over the ways a board can be completed, as all-in EV and AIVAT count them: exact for two
players before the flop (read from ``arena_sdk.preflop``'s table of every match-up), every completion from the flop
on, and uniform draws seeded by the known cards otherwise (three players or more before the flop)."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

from arena_sdk._eval import runout_orders, runout_shares
from arena_sdk.preflop import headsup_orders, headsup_preflop


def draws_seed(salt: str, holes: list[tuple[int, ...]], board: tuple[int, ...]) -> int:
    """A draws' seed: the estimator's name and the cards known at that point, nothing else (never the cards to
    come), so the draws are independent of the dealt board and the same point scores the same in any match."""
    digest = hashlib.sha256(f"{salt}:{holes}:{board}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def board_orders(holes: tuple[tuple[int, ...], ...], board: tuple[int, ...], samples: int,
                 salt: str) -> dict[tuple[int, ...], int]:
    """How often each order of finish (per player: how many hold a strictly better hand) comes up over the board's
    completions: all 1,712,304 for two players before the flop (from the table), every one when there are at most
    ``samples``, else ``samples`` draws seeded by ``draws_seed(salt, ...)``."""
    if len(holes) == 2 and not board:
        return headsup_orders(holes[0], holes[1])
    return runout_orders(list(holes), board, samples, _seed(holes, board, samples, salt))


def board_shares(holes: tuple[tuple[int, ...], ...], board: tuple[int, ...], samples: int,
                 salt: str) -> tuple[float, ...]:
    """Each player's expected share of a pot they all contest over the board's completions: ``shares_of`` the
    ``board_orders``, summed in C (``runout_shares``) where the orders are counted there, to the same last bit."""
    if len(holes) == 2 and not board:
        return headsup_shares(holes[0], holes[1])
    return runout_shares(holes, board, samples, _seed(holes, board, samples, salt))


def headsup_shares(a: Sequence[int], b: Sequence[int]) -> tuple[float, float]:
    """``shares_of(headsup_orders(a, b), 2)`` without the dict: the same sums in the same order (the ties', then
    ``b``'s wins, then ``a``'s), so the same floats to the last bit. The scoring worker asks it for most hands."""
    wins, losses, ties = headsup_preflop(a, b)
    total = wins + losses + ties
    first = second = 0.0
    if ties:
        first += ties / total / 2
        second += ties / total / 2
    if losses:
        second += losses / total
    if wins:
        first += wins / total
    return first, second


def _seed(holes: tuple[tuple[int, ...], ...], board: tuple[int, ...], samples: int, salt: str) -> int:
    """The draws' seed of ``runout_orders`` and ``runout_shares``: 0 where every completion is counted (no draws,
    and no seed: a SHA-256 of the cards was 7% of the scoring worker), else ``draws_seed``."""
    if completions(len(holes), len(board)) <= samples:
        return 0
    return draws_seed(salt, list(holes), board)


def shares_of(orders: dict[tuple[int, ...], int], players: int) -> tuple[float, ...]:
    """Each player's expected share of a pot from how often each order of finish comes up: a tie's count split
    among its winners (the definition ``runout_shares`` computes in C, in the same order)."""
    total = sum(orders.values())
    shares = [0.0] * players
    for order, count in orders.items():
        winners = [i for i, rank in enumerate(order) if rank == 0]
        for i in winners:
            shares[i] += count / total / len(winners)
    return tuple(shares)


def completions(players: int, known: int) -> int:
    """The ways to complete a board of ``known`` cards with ``players``' hole cards out of the deck."""
    return math.comb(52 - 2 * players - known, 5 - known)
