"""The comparison runner (arena.runner.compare): plans, rounds in deal order across matches, stopping, and the
database records a comparison leaves, from which its verdict can be recomputed to the last bit."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.engine import TableConfig
from arena.ratings.leaderboard import build_leaderboard
from arena.ratings.sprt import SprtParams, Verdict, recorded_comparison, replay_comparison
from arena.records import queries
from arena.records.comparisons import record_comparison
from arena.records.db import Database
from arena.records.ledger import Ledger
from arena.referee import HandRecord, MatchKind
from arena.runner.bots import BotSpec
from arena.runner.compare import DealRound, RoundCollector, plan_comparison
from tests.compare.harness import compare_in_process
from tests.compare.players import HeuristicPlayer, RandomPlayer, calling_station


def test_plan() -> None:
    plan = plan_comparison("c1", "seed", 1000, references=2, config=TableConfig(10, 20), starting_stack=4000)
    assert [p.match_id for p in plan.pairings] == [
        "c1-h2h", "c1-ref1-candidate", "c1-ref1-baseline", "c1-ref2-candidate", "c1-ref2-baseline",
    ]
    assert [(p.first, p.second) for p in plan.pairings] == [(0, 1), (0, 2), (1, 2), (0, 3), (1, 3)]
    assert plan.pairings[0].head_to_head and not plan.pairings[1].head_to_head
    assert plan.hands_per_round == 10 and plan.rounds == 100 and plan.max_hands == 1000
    assert {s.seed for s in plan.specs} == {"seed"} and {s.hands for s in plan.specs} == {200}
    assert plan.big_blind == 20 and plan.references == 2
    assert plan_comparison("c2", "s", 3).rounds == 1  # at least one round
    with pytest.raises(ValueError):
        plan_comparison("c3", "s", 100, references=-1)


def _record(match_id: str, deal: int, rotation: int, payoff_of_first: int) -> HandRecord:
    seating = (0, 1) if rotation == 0 else (1, 0)
    payoffs = (payoff_of_first, -payoff_of_first) if rotation == 0 else (-payoff_of_first, payoff_of_first)
    return HandRecord(
        match_id=match_id, table_id="t", hand_id=f"{match_id}-{deal}-{rotation}", hand_number=2 * deal + rotation,
        deal=deal, rotation=rotation, seating=seating, button=deal % 2, config=TableConfig(), starting_stacks=(0, 0),
        deck=(), hole=(), board=(), events=(), payoffs=payoffs, final_stacks=(0, 0),
    )


def test_rounds_come_in_deal_order_once_every_match_has_the_deal() -> None:
    plan = plan_comparison("c", "s", 600, references=1)
    seen: list[DealRound] = []

    def on_round(completed: DealRound) -> bool:
        seen.append(completed)
        return completed.deal == 1  # stop after the second round

    collector = RoundCollector(plan, on_round)
    h2h, cand, base = (p.match_id for p in plan.pairings)
    # the reference matches run ahead of the head-to-head one
    for match_id, chips in ((cand, 100), (base, -50)):
        for deal in range(3):
            collector.hand_finished(_record(match_id, deal, 0, chips))
            collector.hand_finished(_record(match_id, deal, 1, chips))
    assert seen == []
    collector.hand_finished(_record(h2h, 0, 0, 300))
    assert seen == []  # half a session is not a session
    collector.hand_finished(_record(h2h, 0, 1, -100))
    assert len(seen) == 1
    first = seen[0]
    assert first.deal == 0 and first.hands == 6
    assert first.head_to_head == pytest.approx(1000 * 200 / 100 / 2)  # candidate +200 chips over 2 hands
    assert len(first.references) == 1
    assert first.references[0] == pytest.approx((1000.0, -500.0))
    assert not collector.stopped
    collector.hand_finished(_record(h2h, 1, 0, 0))
    collector.hand_finished(_record(h2h, 1, 1, 0))
    assert [r.deal for r in seen] == [0, 1] and collector.stopped and collector.decided  # on_round said stop
    collector.hand_finished(_record(h2h, 2, 0, 0))
    collector.hand_finished(_record(h2h, 2, 1, 0))
    assert len(seen) == 2  # nothing is counted once stopped
    assert collector.hands_played == 18 and collector.hands_counted == 12
    with pytest.raises(KeyError):
        collector.hand_finished(_record("elsewhere", 0, 0, 0))


def _record_comparison(db: Database, cid: str, seed: str, references: int, params: SprtParams,
                       max_hands: int = 20000) -> Verdict:
    plan = plan_comparison(cid, seed, max_hands, references)
    entries = [Ledger(db).open(spec, [BotSpec(f"bot{pairing.first}", ""), BotSpec(f"bot{pairing.second}", "")],
                               MatchKind.COMPARE, cid)
               for pairing, spec in zip(plan.pairings, plan.specs, strict=True)]
    record_comparison(db, cid, {}, [(p.match_id, *p.role) for p in plan.pairings])
    outcome = compare_in_process(
        HeuristicPlayer(1), calling_station, seed, params, max_hands,
        references=[RandomPlayer(9)] * references, entries=entries, comparison_id=cid,
    )
    for entry, result in zip(entries, outcome.run.results, strict=True):
        entry.finish(result)
    recorded = recorded_comparison(db, cid)
    replayed = replay_comparison(recorded, params)
    live = outcome.sprt
    assert replayed.verdict is live.verdict and replayed.decided_at == live.decided_at
    assert replayed.samples == live.samples and replayed.llr == live.llr and replayed.hands == live.hands
    assert (recorded.candidate, recorded.baseline) == ("bot0", "bot1")
    assert recorded.references == tuple(f"bot{2 + k}" for k in range(references))
    return live.verdict


def test_recorded_comparison_replays_to_the_same_verdict(tmp_path: Path) -> None:
    """Every hand is in the database like any match's; recomputing the test from them gives the same samples, the
    same LLR (exactly) and the same verdict, with or without reference bots; the bots are on the leaderboard."""
    db = Database(tmp_path / "arena.db")
    params = SprtParams()
    assert _record_comparison(db, "plain", "s1", 0, params) is Verdict.H1
    # a reference bot that plays randomly: its noise is averaged into every round, so the test would take some 18 s
    # to decide; 3,000 hands of it replay just as well (stopped at the hand limit, undecided)
    assert _record_comparison(db, "withref", "s2", 1, SprtParams(mbb1=2000), max_hands=3000) in (Verdict.H1,
                                                                                               Verdict.CONTINUE)
    board = build_leaderboard(db)
    assert {row.bot for row in board.rows} == {"bot0", "bot1", "bot2"}
    kinds = {info.kind for m in queries.match_ids(db) if (info := queries.match_info(db, m)) is not None}
    assert kinds == {MatchKind.COMPARE}
    with pytest.raises(KeyError):
        recorded_comparison(db, "nothing")
