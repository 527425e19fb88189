#!/usr/bin/env python3
"""Cheat bot ``contention``: its processes for the two rotations of a heads-up duplicate match tell each other the
cards through CPU contention (cpu_channel.py), a covert channel that no sandbox short of pinning each process to
cores of its own can close.

Each process forks the channel's helpers before it connects. The one playing rotation 0 (odd hand numbers on the
wire) sends each deal's hole cards as its HandStart arrives, frame after frame. The one playing rotation 1 listens:
in deal d it holds what its opponent held in rotation 0, so its opponent now holds what the rotation-0 process held,
and a frame heard for deal d is its opponent's cards. With them it plays perfectly: all in when its equity against
them is above one half, else check or fold. Without them it plays like a calling station (check, else call), which
is all its honest copy (``CONTENTION_HONEST=1``: no channel at all) ever does. It waits up to ``WAIT_S`` for each
deal's frame before it acts while its partner is there (a good frame heard in the last ``PARTNER_S`` seconds) or
while it is still looking for it (its first ``SEARCH_S`` seconds, before any frame was heard); a bot alone gives up
looking after that.

At the match's end each process prints one line ``CONTENTION {json}``: its role, the frames it heard and dropped,
and (rotation 1) the cards it heard for each hand number.
"""

from __future__ import annotations

import json
import os
import random
import time
from typing import Any

try:
    from tests.integrity.cheats import cpu_channel as channel
except ImportError:  # in its sandbox: beside this file, in the bot's own folder
    import cpu_channel as channel  # type: ignore[no-redef,import-not-found]

from arena.cards import parse_card
from arena.cards.evaluator import evaluate
from arena_sdk import Action, Bot, Request, all_in, call, check, fold, run
from arena_sdk.pb import bot_pb2

HONEST = os.environ.get("CONTENTION_HONEST") == "1"
PARTNER_S = 5.0
WAIT_S = 3.0
SEARCH_S = 5.0


def equity(mine: tuple[int, ...], theirs: tuple[int, int], board: tuple[int, ...], rng: random.Random) -> float:
    """Share of the pot ``mine`` wins against ``theirs`` over boards completing ``board`` (sampled)."""
    deck = [c for c in range(52) if c not in {*mine, *theirs, *board}]
    won = 0.0
    runs = 400
    for _ in range(runs):
        full = [*board, *rng.sample(deck, 5 - len(board))]
        a, b = evaluate([*mine, *full]), evaluate([*theirs, *full])
        won += 1.0 if a > b else 0.5 if a == b else 0.0
    return won / runs


class Contention(Bot):
    """The calling station, with the cards its other process tells it (unless ``channel`` is None: honest)."""

    def __init__(self, talk: channel.Channel | None) -> None:
        self.talk = talk
        self.role = "unknown"
        self.hand_number = 0
        self.hand_started_ns = 0
        self.heard: dict[int, list[int]] = {}  # hand number -> the opponent's cards, as heard
        self.exploited = 0
        self.sent = 0
        self.listening_since_ns = 0

    def on_hand_start(self, msg: bot_pb2.HandStart) -> None:
        self.hand_number = int(msg.hand_number)  # 1, 2, 3... on the wire: deal (n - 1) // 2, rotation (n - 1) % 2
        self.hand_started_ns = time.monotonic_ns()
        if self.talk is None:
            return
        deal, rotation = divmod(self.hand_number - 1, 2)
        if rotation == 0:
            if self.role != "sender":
                self.role = "sender"
                self.talk.set_role(channel.SENDER)
            cards = tuple(parse_card(c) for c in msg.hole_cards)
            self.talk.send(deal, (cards[0], cards[1]))
            self.sent += 1
        elif self.role != "listener":
            self.role = "listener"
            self.listening_since_ns = time.monotonic_ns()
            self.talk.set_role(channel.LISTENER)

    def _partner_may_be_there(self) -> bool:
        """Heard lately, or still looking (no frame heard yet, in the first ``SEARCH_S`` seconds)."""
        assert self.talk is not None
        now, last = time.monotonic_ns(), self.talk.last_heard_ns()
        if last:
            return now - last < PARTNER_S * 1e9
        return now - self.listening_since_ns < SEARCH_S * 1e9

    def _their_cards(self) -> tuple[int, int] | None:
        """The opponent's cards of this hand, if heard (waited for while the partner may be there)."""
        if self.talk is None or self.role != "listener":
            return None
        deal = (self.hand_number - 1) // 2
        since = self.listening_since_ns  # frames come in deal order: one heard for deal d (mod 16) is this one's
        cards = self.talk.heard(deal, since)
        deadline = time.monotonic() + WAIT_S
        while cards is None and time.monotonic() < deadline and self._partner_may_be_there():
            time.sleep(0.005)
            cards = self.talk.heard(deal, since)
        if cards is not None:
            self.heard[self.hand_number] = list(cards)
        return cards

    def act(self, request: Request) -> Action:
        legal = request.legal
        theirs = self._their_cards()
        if theirs is None or set(theirs) & set(request.hole_cards):
            return check() if legal.can_check else call()
        self.exploited += 1
        share = equity(tuple(request.hole_cards), theirs, tuple(request.board), random.Random(request.hand_id))
        if share > 0.5:
            return all_in() if legal.can_raise else call() if legal.can_call else check()
        return check() if legal.can_check else fold()

    def on_match_end(self, msg: bot_pb2.MatchEnd) -> None:
        report: dict[str, Any] = {"honest": self.talk is None, "role": self.role, "sent": self.sent,
                                  "exploited_decisions": self.exploited, "heard": self.heard}
        if self.talk is not None:
            report.update(frames_heard=self.talk.frames_heard, frames_dropped=self.talk.frames_dropped)
            self.talk.stop()
        print("CONTENTION " + json.dumps(report), flush=True)


if __name__ == "__main__":
    talk = None if HONEST else channel.Channel()
    if talk is not None:
        talk.start()  # before any thread: the helpers are forked
    raise SystemExit(run(Contention(talk), name="contention", version="1").exit_code)
