#!/usr/bin/env python3
"""Sample bot: Monte Carlo hand strength against random hands, then pot odds.

Run: ``python sample_bots/python/equity_bot.py --address 127.0.0.1:50051 --token TOKEN``.

For each request it deals the unknown cards a few hundred times (the opponents still in the hand get random hole
cards, the board is completed at random) and counts how often its hand wins, ties counting as shares: its equity.
Then: raise about two thirds of the pot when the equity is high, call when it beats the pot odds, check when
that is free, fold otherwise. The random generator is seeded from the hand and request ids, so the same request
always gets the same answer.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from arena_sdk import Action, Bot, Request, call, check, fold, raise_to, run
from arena_sdk.evaluator import evaluate

FULL_DECK = range(52)


def equity(hole: Sequence[int], board: Sequence[int], opponents: int, samples: int, rng: random.Random) -> float:
    """Share of the pot ``hole`` wins on average against ``opponents`` random hands, the board completed at random.

    A tie among k best hands counts 1/k. Cards are ints 0..51 (``arena_sdk.cards``); 0..5 board cards.
    """
    known = {*hole, *board}
    deck = [c for c in FULL_DECK if c not in known]
    missing = 5 - len(board)
    opponents = max(1, min(opponents, (len(deck) - missing) // 2))
    draw_size = missing + 2 * opponents
    hole = list(hole)
    board = list(board)
    won = 0.0
    for _ in range(samples):
        draw = rng.sample(deck, draw_size)
        full_board = board + draw[:missing]
        mine = evaluate(hole + full_board)
        best_other = 0
        ties = 0
        for i in range(missing, draw_size, 2):
            value = evaluate([draw[i], draw[i + 1], *full_board])
            if value > best_other:
                best_other, ties = value, 1 if value == mine else 0
            elif value == best_other and value == mine:
                ties += 1
            if best_other > mine:
                break
        if mine > best_other:
            won += 1.0
        elif mine == best_other:
            won += 1.0 / (ties + 1)
    return won / samples


class EquityBot(Bot):
    """Raises with a strong hand, calls when the equity beats the pot odds, checks when free, else folds.

    ``raise_equity`` is the equity needed to bet or raise heads-up; with more opponents the bar is scaled by
    the fair share, 2 / (opponents + 1), since each extra hand in the pot lowers every hand's equity.
    """

    max_tables = 256  # it acts from the request alone: any number of tables on one connection

    def __init__(self, samples: int = 300, raise_equity: float = 0.65) -> None:
        self.samples = samples
        self.raise_equity = raise_equity

    def equity(self, request: Request) -> float:
        """The Monte Carlo equity of the request's hand, reproducible for the same hand and request ids."""
        rng = random.Random(f"{request.hand_id}/{request.request_id}")
        return equity(request.hole_cards, request.board, request.num_active_opponents, self.samples, rng)

    def act(self, request: Request) -> Action:
        """Raise about 2/3 of the pot when strong; call if the equity beats the pot odds; else check or fold."""
        legal = request.legal
        strength = self.equity(request)
        opponents = max(1, request.num_active_opponents)
        if legal.can_raise and strength >= self.raise_equity * 2 / (opponents + 1):
            pot_after_call = request.pot + request.to_call
            target = request.my_bet + request.to_call + (2 * pot_after_call) // 3
            return raise_to(legal.clamp(target))
        if legal.can_check:
            return check()
        if legal.can_call and strength >= request.pot_odds:
            return call()
        return fold()


if __name__ == "__main__":
    raise SystemExit(run(EquityBot(), name="equity-bot", version="1.0").exit_code)
