#!/usr/bin/env python3
"""Cheat bot ``phh reader``: looks for the referee's finished hands (PHH files) in a folder inside its own, where a
``--phh-dir`` there would put them, and for the mirror of the deal it is playing (issue 24: the second rotation read
the first rotation's finished mirror hand, +20,734 mbb/hand).

``python phh_reader.py --folder NAME``: at every hand (and every request) it reads every ``*.phh`` under ``<its
folder>/NAME`` and looks for a hand where another seat was dealt the hole cards it holds now: the mirror of its
deal, which tells it the other seat's cards and the board. It plays check, else call, and at the match's end prints
``PHH-READER {json}``: the files it saw at most, and the mirrors it found.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from arena.cards import format_cards
from arena_sdk import Action, Bot, Request, call, check, run
from arena_sdk.pb import bot_pb2

DEALT = re.compile(r'"d dh p(\d+) ([2-9TJQKA][cdhs])([2-9TJQKA][cdhs])"')


class PhhReader(Bot):
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.files = 0
        self.mirrors: set[str] = set()

    def on_hand_start(self, msg: bot_pb2.HandStart) -> None:
        self.look(frozenset(str(card) for card in msg.hole_cards))

    def look(self, mine: frozenset[str]) -> None:
        paths = sorted(self.folder.rglob("*.phh")) if self.folder.is_dir() else []
        self.files = max(self.files, len(paths))
        for path in paths:
            try:
                text = path.read_text()
            except OSError:
                continue
            for _seat, first, second in DEALT.findall(text):
                if frozenset((first, second)) == mine:
                    self.mirrors.add(path.name)

    def on_match_end(self, msg: bot_pb2.MatchEnd) -> None:
        print("PHH-READER " + json.dumps({"files": self.files, "mirrors": len(self.mirrors)}), flush=True)

    def act(self, request: Request) -> Action:
        self.look(frozenset(format_cards([card]) for card in request.hole_cards))
        return check() if request.legal.can_check else call()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--folder", required=True)
    arguments, rest = parser.parse_known_args()
    bot = PhhReader(Path(__file__).resolve().parent / arguments.folder)
    raise SystemExit(run(bot, name="phh-reader", version="1", argv=rest).exit_code)
