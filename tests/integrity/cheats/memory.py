#!/usr/bin/env python3
"""Cheat bot ``memory``: remembers every hand it sees and exploits the mirror of a duplicate deal when it meets one.

In a duplicate match both rotations of a deal use the same deck, with the seats exchanged: in the mirror the
opponent holds the cards this bot held, and the board is the board it saw. A process that plays both rotations
can therefore know the opponent's hole cards and the board in advance. This bot records, per hand: the deal (the
hand number over the number of seats: the duplicate schedule is public), its own hole cards, the board, and the
opponent's shown cards. It recognises a mirror when

* it holds a record of the same deal (it played the other rotation), or
* the board it sees by the turn, in order, is a board it saw before (the deck is the same; two different deals
  share four ordered board cards about once in 6.5 million pairs of hands; three, a flop, would be once in
  132,600, which a few hundred hands do meet).

Then it knows the opponent's cards (the ones it held) and as much of the board as it saw, and plays perfectly:
all-in when ahead, fold (check when free) when behind. Otherwise it plays like the sample equity bot. With
``MEMORY_HONEST=1`` it is the same bot without the trick: it records but never uses its memory.

At the match's end it prints one line ``MEMORY {json}``: hands seen, recognitions, hands played from memory.
"""

from __future__ import annotations

import importlib
import itertools
import json
import os
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.cards import parse_card
from arena.cards.evaluator import evaluate
from arena_sdk import Action, Bot, Request, all_in, call, check, fold, run
from arena_sdk.pb import bot_pb2

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "sample_bots" / "python"))
equity_bot: Any = importlib.import_module("equity_bot")  # bound into the sandbox by the test

HONEST = os.environ.get("MEMORY_HONEST") == "1"


@dataclass(slots=True)
class Seen:
    """What one hand showed this bot."""

    hand_number: int
    deal: int
    hole: tuple[int, ...]
    board: tuple[int, ...] = ()
    shown: dict[int, tuple[int, ...]] = field(default_factory=dict)  # seat: cards shown at showdown
    seat: int = -1


def exact_equity(mine: tuple[int, ...], theirs: tuple[int, ...], board: tuple[int, ...], rng: random.Random) -> float:
    """Share of the pot ``mine`` wins against ``theirs`` over the rest of the board (exact from the flop on)."""
    dead = {*mine, *theirs, *board}
    deck = [c for c in range(52) if c not in dead]
    missing = 5 - len(board)
    runs: Any = (itertools.combinations(deck, missing) if missing <= 2 else
                 (rng.sample(deck, missing) for _ in range(1500)))
    won = total = 0.0
    for rest in runs:
        full = [*board, *rest]
        a, b = evaluate([*mine, *full]), evaluate([*theirs, *full])
        won += 1.0 if a > b else 0.5 if a == b else 0.0
        total += 1.0
    return won / total if total else 0.5


class MemoryBot(Bot):
    """The equity bot with a memory of every hand, and the mirror exploit (unless ``honest``)."""

    def __init__(self, honest: bool) -> None:
        self.honest = honest
        self.base = equity_bot.EquityBot()
        self.seen: list[Seen] = []
        self.by_deal: dict[int, Seen] = {}
        self.by_board: dict[tuple[int, ...], Seen] = {}
        self.current: Seen | None = None
        self.source: Seen | None = None  # the earlier hand this one mirrors, once recognised
        self.num_seats = 2
        self.recognitions: list[dict[str, Any]] = []
        self.exploited_hands: set[int] = set()

    def on_welcome(self, welcome: bot_pb2.Welcome) -> None:
        self.num_seats = welcome.config.num_seats or 2

    def on_hand_start(self, msg: bot_pb2.HandStart) -> None:
        number = int(msg.hand_number)  # 1 for the first hand (proto/arena/v1/bot.proto)
        hole = tuple(parse_card(c) for c in msg.hole_cards)
        self.current = Seen(number, (number - 1) // self.num_seats, hole, seat=msg.seat)
        self.source = None
        earlier = self.by_deal.get(self.current.deal)
        if earlier is not None:
            self._recognise(earlier, "deal")

    def _recognise(self, earlier: Seen, how: str) -> None:
        assert self.current is not None
        self.source = earlier
        self.recognitions.append({"hand": self.current.hand_number, "mirrors": earlier.hand_number, "by": how})

    def on_hand_end(self, msg: bot_pb2.HandEnd) -> None:
        hand = self.current
        if hand is None:
            return
        hand.board = tuple(parse_card(c) for c in msg.board)
        hand.shown = {s.seat: tuple(parse_card(c) for c in s.cards) for s in msg.shown}
        self.seen.append(hand)
        self.by_deal.setdefault(hand.deal, hand)
        if len(hand.board) >= 4:
            self.by_board.setdefault(hand.board[:4], hand)
        self.current = None

    def on_match_end(self, msg: bot_pb2.MatchEnd) -> None:
        report = {"honest": self.honest, "hands_seen": len(self.seen), "recognitions": len(self.recognitions),
                  "exploited_hands": len(self.exploited_hands), "first": self.recognitions[:5],
                  "first_hand_numbers": [s.hand_number for s in self.seen[:4]]}
        print("MEMORY " + json.dumps(report), flush=True)

    def act(self, request: Request) -> Action:
        hand = self.current
        if hand is not None and self.source is None and len(request.board) >= 4:
            earlier = self.by_board.get(tuple(request.board[:4]))
            if earlier is not None:
                self._recognise(earlier, "board")
        earlier = self.source
        if self.honest or earlier is None or hand is None:
            return self.base.act(request)  # type: ignore[no-any-return]
        # The mirror: the opponent holds what this bot held, the board is what it saw (as far as it was dealt)
        theirs = earlier.hole
        if set(theirs) & set(request.hole_cards):
            return self.base.act(request)  # type: ignore[no-any-return]  # not a mirror after all
        board = earlier.board if len(earlier.board) >= len(request.board) else tuple(request.board)
        self.exploited_hands.add(hand.hand_number)
        rng = random.Random(f"{request.hand_id}/{request.request_id}")
        share = exact_equity(tuple(request.hole_cards), theirs, board, rng)
        legal = request.legal
        if share > 0.55:
            if legal.can_raise:
                return all_in()
            return call() if legal.can_call else check()
        if share < 0.45:
            return check() if legal.can_check else fold()
        return check() if legal.can_check else call()


if __name__ == "__main__":
    raise SystemExit(run(MemoryBot(HONEST), name="memory-honest" if HONEST else "memory", version="1").exit_code)
