"""The orders of finish over the ways a board can be completed, as all-in EV and AIVAT count them: exact for two
players before the flop (read from ``arena_sdk.preflop``'s table of every match-up), every completion from the flop
on, and uniform draws seeded by the known cards otherwise (three players or more before the flop)."""

from __future__ import annotations

import hashlib
import math

from arena_sdk._eval import runout_orders
from arena_sdk.preflop import headsup_orders


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
    if completions(len(holes), len(board)) <= samples:  # every completion counted: no draws, and no seed (a
        return runout_orders(list(holes), board, samples, 0)  # SHA-256 of the cards was 7% of the scoring worker)
    return runout_orders(list(holes), board, samples, draws_seed(salt, list(holes), board))


def completions(players: int, known: int) -> int:
    """The ways to complete a board of ``known`` cards with ``players``' hole cards out of the deck."""
    return math.comb(52 - 2 * players - known, 5 - known)
