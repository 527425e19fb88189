"""The two ways to read a match's hands back (``hand_records``: by hand or for some hands; ``match_hand_records``:
a whole match in three queries, for the site) give the same records: a freezeout's own blinds per hand and the
mixed actions the referee drew included."""

from __future__ import annotations

import asyncio
from pathlib import Path

from arena.records.db import Database
from arena.referee import FunctionSeat, GameKind, GameRules, Match, MatchSpec
from tests.referee.test_games import TABLE
from tests.referee.test_mixed_action import mixer


def test_both_readers_give_the_same_records(tmp_path: Path) -> None:
    db = Database(tmp_path / "r.db")
    spec = MatchSpec("fz", "readers", 50, TABLE, starting_stack=200, game=GameRules(GameKind.FREEZEOUT, level_hands=3))
    seats = [(f"m{i}", FunctionSeat(f"m{i}", mixer)) for i in range(3)]
    db.start_match(spec, [(n, "", "") for n, _ in seats], spec.hands_planned(3))
    db.finish_match(asyncio.run(Match(spec, seats, [db]).run()))  # type: ignore[arg-type]
    by_hand = list(db.hand_records("fz"))
    assert by_hand == list(db.match_hand_records("fz"))
    assert len({r.config.big_blind for r in by_hand}) > 1  # the blinds rose: each hand's own table came back
    assert all(d.policy for r in by_hand for d in r.decisions)
    some = [r.hand_number for r in by_hand[::3]]
    assert [r.hand_number for r in db.hand_records("fz", some)] == some
