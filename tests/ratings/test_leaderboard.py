"""The leaderboard of real recorded matches follows from their results, not from the order they were recorded in."""

from __future__ import annotations

import asyncio
import math
import random
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from arena.ratings.leaderboard import build_leaderboard, leaderboard_json
from arena.ratings.sessions import load_sessions
from arena.records.db import Database
from arena.records.ledger import Ledger
from arena.referee import ClockPolicy, FunctionSeat, Match, MatchSpec, Seat
from arena.runner.bots import BotSpec
from arena.runner.inprocess import InProcessSeat
from tests.publish.helpers import caller, folder, gambler, raiser

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "sample_bots" / "python"))

from calling_station import CallingStation  # noqa: E402
from equity_bot import EquityBot  # noqa: E402

SeatMaker = Callable[[], Seat]

QUICK: dict[str, SeatMaker] = {  # function bots: a match of 40 hands takes a few hundredths of a second
    "raiser": lambda: FunctionSeat("raiser", raiser),
    "caller": lambda: FunctionSeat("caller", caller),
    "folder": lambda: FunctionSeat("folder", folder),
    "gambler": lambda: FunctionSeat("gambler", gambler(3)),
}
REAL: dict[str, SeatMaker] = {  # the sample bots in process, and two function bots
    "equity": lambda: InProcessSeat("equity", EquityBot()),
    "caller": lambda: InProcessSeat("caller", CallingStation()),
    "raiser": lambda: FunctionSeat("raiser", raiser),
    "gambler": lambda: FunctionSeat("gambler", gambler(3)),
}


def pairings(bots: Sequence[str]) -> list[tuple[str, str]]:
    return [(a, b) for i, a in enumerate(bots) for b in bots[i + 1:]]


def record(db: Database, makers: dict[str, SeatMaker], order: Sequence[tuple[str, str]], hands: int) -> None:
    """Play and record one duplicate match per pairing, in ``order`` (each match has its own fixed seed, so the
    same pairing deals the same cards in every database)."""
    for a, b in order:
        match_id = f"{a}-vs-{b}"
        spec = MatchSpec(match_id, f"seed-{match_id}", hands, policy=ClockPolicy(per_action_ms=60000))
        entry = Ledger(db).open(spec, [BotSpec(a, "test", "1"), BotSpec(b, "test", "1")])
        match = Match(spec, [(a, makers[a]()), (b, makers[b]())], [entry])
        entry.finish(asyncio.run(match.run()))


def results(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Leaderboard rows as JSON data without the one thing that is not a result: the bots' thinking time."""
    return [{**row, "stats": {k: v for k, v in row["stats"].items() if k != "think_ms"}} for row in rows]


def rows(db: Database) -> list[dict[str, Any]]:
    """The leaderboard's rows as JSON data (rank, bot, ratings, win rate, play statistics)."""
    return results(leaderboard_json(build_leaderboard(db))["rows"])


def test_the_same_matches_recorded_in_another_order_give_the_same_leaderboard(tmp_path: Path) -> None:
    order = pairings(list(QUICK))
    orders = {"played": order, "reversed": order[::-1], "shuffled": random.Random(1).sample(order, len(order))}
    boards = {}
    for name, matches in orders.items():
        db = Database(tmp_path / f"{name}.db")
        record(db, QUICK, matches, hands=40)
        assert [s.match_id for s in load_sessions(db)][::20] == [f"{a}-vs-{b}" for a, b in matches]
        boards[name] = rows(db)
    assert len(boards["played"]) == 4
    assert boards["reversed"] == boards["played"]  # every number, exactly
    assert boards["shuffled"] == boards["played"]


def wins_and_losses(db: Database, bot: str, other: str) -> tuple[int, int]:
    won = lost = 0
    for s in load_sessions(db):
        if s.chips.keys() == {bot, other}:
            won += s.chips[bot] > s.chips[other]
            lost += s.chips[bot] < s.chips[other]
    return won, lost


def test_a_bot_that_beats_every_other_bot_ranks_first_however_the_matches_were_recorded(tmp_path: Path) -> None:
    """Real in-process matches. The equity bot beats every other bot: mbb/hand with a 95% CI above zero and more
    sessions won than lost (a 95% interval of its share of decided sessions above one half). Its matches are
    recorded first and the runner-up's wins last, the order that let the last matches decide before."""
    bots = list(REAL)
    first = [p for p in pairings(bots) if "equity" in p]
    last = sorted((p for p in pairings(bots) if "equity" not in p), key=lambda p: "raiser" in p)
    boards = []
    for name, order in (("adversarial", first + last), ("reversed", (first + last)[::-1])):
        db = Database(tmp_path / f"{name}.db")
        record(db, REAL, order, hands=120)
        board = build_leaderboard(db)
        for other in ("caller@1", "raiser@1", "gambler@1"):
            assert board.crosstable["equity@1"][other].low > 0
            won, lost = wins_and_losses(db, "equity@1", other)
            share, n = won / (won + lost), won + lost
            assert share - 1.96 * math.sqrt(share * (1 - share) / n) > 0.5
        assert board.rows[0].bot == "equity@1"
        boards.append(results(leaderboard_json(board)["rows"]))
    assert boards[0] == boards[1]
