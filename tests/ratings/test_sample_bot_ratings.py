"""Ratings that agree with the chips, on real tournaments of the sample bots (issue 23): the demo's heads-up
round-robin over a seed nobody tuned on, and a shorter 6-max round-robin (multiway blocks). Each is a real
tournament: the sample bots in Python, JavaScript and C++, sandboxed, over gRPC, recorded in SQLite.

What must hold: no pair is ranked against a head-to-head result whose 95% interval excludes zero, and the TrueSkill
order agrees with the mbb/hand order except where the pair's own head-to-head result says otherwise (a bot ranked
above one with a higher mbb/hand must at least have beaten it head-to-head on average); among the five sample bots
at most one pair may be swapped (the random bot loses its chips to the strong bots, the calling station only a few,
while the two are about even head-to-head).
"""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from pathlib import Path

import pytest

from arena.cli.demo import demo_config
from arena.ratings.leaderboard import Leaderboard, build_leaderboard
from arena.records.db import Database
from arena.records.ledger import Ledger
from arena.runner.bots import BotSpec
from arena.runner.tournament import matches_of, run_tournament

SEED = "arena issue 23: an untuned seed, number one"
"""Chosen before any run and never changed: the suite must not pass because the seed was picked. (A second seed of
the same demo ran here too, until the suite had to fit in five minutes: one demo-sized check is the point.)"""


def unexplained_swaps(board: Leaderboard) -> list[tuple[str, str]]:
    """Pairs the table ranks in the opposite order of mbb/hand without the pair's head-to-head result (the mean of
    the one the leaderboard's check uses) on its side."""
    rows = list(board.rows)
    out = []
    for i, above in enumerate(rows):
        for below in rows[i + 1:]:
            result = board.head_to_head[above.bot].get(below.bot)
            if above.win_rate.mean < below.win_rate.mean and (result is None or result.mean <= 0.0):
                out.append((above.bot, below.bot))
    return out


def play(tmp_path: Path, seed: str, hands: int, seats: int = 2, extra: tuple[BotSpec, ...] = ()) -> Leaderboard:
    seed_file = tmp_path / "seed"
    seed_file.write_text(seed)
    config = demo_config(hands, seed_file)
    if not any(b.name == "cpp" for b in config.bots) or not any(b.name == "js-caller" for b in config.bots):
        pytest.fail("the C++ and JavaScript sample bots are not built: run make install")
    config = dataclasses.replace(config, bots=(*config.bots, *extra), seats=seats, tables=16, name=f"t{seats}")
    db = Database(tmp_path / "ratings.db")
    config = config.with_seed(Ledger(db))
    results = asyncio.run(run_tournament(config, Ledger(db), resume=False))
    assert all(not r.failures() for r in results), [r.failures() for r in results]
    return build_leaderboard(db, list(matches_of(config)), history_points=0)


def test_the_demo_ranks_by_the_chips(tmp_path: Path) -> None:
    board = play(tmp_path, SEED, hands=300)
    order = [row.bot for row in board.rows]
    assert board.consistency.ok, (order, board.consistency.lines())
    swaps = unexplained_swaps(board)
    assert len(swaps) <= 1, (order, [row.win_rate.mean for row in board.rows], swaps)
    assert all(row.rating_games == 20 and not row.provisional for row in board.rows)  # 4 pairings x 5 blocks


def test_a_six_max_round_robin_ranks_every_seat_by_its_chips(tmp_path: Path) -> None:
    second_random = BotSpec("random-2", f"{sys.executable} sample_bots/python/random_bot.py --seed 11", "1.0")
    board = play(tmp_path, SEED, hands=900, seats=6, extra=(second_random,))
    order = [row.bot for row in board.rows]
    assert len(order) == 6 and board.games == 5  # 150 deals, each in six rotations: five blocks of 30
    assert board.consistency.ok, (order, board.consistency.lines())
    swaps = unexplained_swaps(board)
    assert len(swaps) <= 1, (order, [row.win_rate.mean for row in board.rows], swaps)
