"""The two ways to read a match's hands back (``hand_records``: by hand or for some hands; ``match_hand_records``:
a whole match in three queries, for the site) give the same records: a freezeout's own blinds per hand and the
mixed actions the referee drew included."""

from __future__ import annotations

import asyncio
from pathlib import Path

from arena.records import queries
from arena.records.db import Database
from arena.records.ledger import Ledger
from arena.referee import FunctionSeat, GameKind, GameRules, Match, MatchSpec
from arena.runner.bots import BotSpec
from tests.referee.test_games import TABLE
from tests.referee.test_mixed_action import mixer


def test_both_readers_give_the_same_records(tmp_path: Path) -> None:
    db = Database(tmp_path / "r.db")
    spec = MatchSpec("fz", "readers", 50, TABLE, starting_stack=200, game=GameRules(GameKind.FREEZEOUT, level_hands=3))
    seats = [(f"m{i}", FunctionSeat(f"m{i}", mixer)) for i in range(3)]
    entry = Ledger(db).open(spec, [BotSpec(n, "") for n, _ in seats])
    entry.finish(asyncio.run(Match(spec, seats, [entry]).run()))  # type: ignore[arg-type]
    by_hand = list(queries.hand_records(db, "fz"))
    assert by_hand == list(queries.hand_records(db, "fz"))
    assert len({r.config.big_blind for r in by_hand}) > 1  # the blinds rose: each hand's own table came back
    assert all(d.policy for r in by_hand for d in r.decisions)
    some = [r.hand_number for r in by_hand[::3]]
    assert [r.hand_number for r in queries.hand_records(db, "fz", some)] == some
