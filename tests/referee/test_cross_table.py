"""Duplicate across tables (README D3): bots that could remember a deal never see one twice, and each is scored
against the bots that held the same cards at the other tables."""

from __future__ import annotations

import asyncio
import random
from collections import defaultdict
from pathlib import Path

import pytest

from arena.deals import cross_table_plan
from arena.deals.fold import cross_table_scores
from arena.engine import Action, ActionKind
from arena.ratings.tally import SessionTally
from arena.records.db import Database
from arena.records.ledger import Ledger
from arena.records.verify import verify_match
from arena.referee import ClockPolicy, Decision, FunctionSeat, HandRecord, Match, MatchSpec, MatchStatus
from arena.runner.bots import BotSpec
from tests.publish.helpers import caller


def raiser(seed: int) -> FunctionSeat:
    rng = random.Random(seed)

    def choose(decision: Decision) -> Action:
        legal = decision.view.legal
        assert legal is not None
        if legal.can_raise and rng.random() < 0.3:
            return Action(ActionKind.RAISE, legal.min_raise_to)
        return caller(decision)

    return FunctionSeat(f"raiser-{seed}", choose)


def test_the_schedule_seats_every_bot_once_per_deal_at_tables_drawn_from_the_seed() -> None:
    plans = list(cross_table_plan(6, 2, 50, "seed"))
    assert len(plans) == 150
    by_deal: dict[int, list[tuple[int, ...]]] = defaultdict(list)
    for plan in plans:
        by_deal[plan.deal].append(plan.seating)
    for seatings in by_deal.values():
        bots = [bot for seating in seatings for bot in seating]
        assert sorted(bots) == list(range(6))  # each bot at exactly one table, once
    assert len({tuple(s) for s in by_deal.values()}) > 40  # who meets whom changes from deal to deal
    assert plans == list(cross_table_plan(6, 2, 50, "seed"))
    assert plans != list(cross_table_plan(6, 2, 50, "other seed"))
    with pytest.raises(ValueError, match="two full tables"):
        list(cross_table_plan(3, 2, 1, "s"))


def test_scores_compare_each_bot_with_those_that_held_the_same_seat() -> None:
    # two tables: seat 0 won 100 at one table and lost 50 at the other
    scores = cross_table_scores([((0, 1), (100, -100)), ((2, 3), (-50, 50))])
    assert scores == {0: 150.0, 1: -150.0, 2: -150.0, 3: 150.0}
    assert sum(scores.values()) == 0


def test_a_match_across_tables_deals_each_deal_once_per_table_and_verifies(tmp_path: Path) -> None:
    db = Database(tmp_path / "cross.db")
    spec = MatchSpec("cross", "cross-seed", 40, policy=ClockPolicy(per_action_ms=5000), seats=2)
    seats = [("caller-a", FunctionSeat("caller-a", caller)), ("caller-b", FunctionSeat("caller-b", caller)),
             ("raiser-1", raiser(1)), ("raiser-2", raiser(2))]
    entry = Ledger(db).open(spec, [BotSpec(name, "") for name, _ in seats])
    records: list[HandRecord] = []
    tally = SessionTally(4, spec.hands_per_deal(4), spec.config.big_blind, cross_table=True)

    def keep(record: HandRecord) -> None:
        records.append(record)
        tally.add(record)

    match = Match(spec, seats, [entry], on_hand=keep)
    result = asyncio.run(match.run())
    entry.finish(result)
    assert result.reason is MatchStatus.COMPLETED and result.hands_played == 40
    assert {r.table_id for r in records} == {"table-1-t1", "table-1-t2"}
    by_deal: dict[int, list[HandRecord]] = defaultdict(list)
    for record in records:
        by_deal[record.deal].append(record)
    assert len(by_deal) == 20
    for hands in by_deal.values():
        assert len(hands) == 2 and hands[0].deck == hands[1].deck  # the same cards at both tables
        assert sorted(p for h in hands for p in h.seating) == [0, 1, 2, 3]  # every bot once
    assert all(r.hands == 20 for r in result.results)  # one hand per deal each
    assert tally.sessions == 20
    assert sum(tally.win_rate(p).mean for p in range(4)) == pytest.approx(0.0, abs=1e-6)
    check = verify_match(db, "cross")
    assert check.ok, check.problems
