"""Ratings as pure functions: t-intervals over sessions, crosstables, and the online TrueSkill updater (the batch
fit the leaderboard uses is tested in test_trueskill.py)."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from arena.ratings.sessions import Session, bot_key
from arena.ratings.stats import crosstable, t95, win_rate, win_rates
from arena.ratings.trueskill_ratings import OnlineTrueSkill
from arena.records.ledger import Ledger
from arena.runner.bots import BotSpec


def session(order: int, chips: dict[str, int], hands: int = 2, big_blind: int = 100) -> Session:
    return Session("m", order, order, big_blind, dict(chips), {b: hands for b in chips})


def test_bot_keys_carry_the_version() -> None:
    assert bot_key("equity", "") == "equity" and bot_key("equity", "1.2") == "equity@1.2"


def test_mbb_per_hand_of_a_session() -> None:
    # 300 chips over 2 hands at a 100 big blind: 1.5 big blinds a hand, 1500 mbb/hand
    assert session(0, {"a": 300, "b": -300}).mbb_per_hand("a") == 1500.0


def test_t_quantiles() -> None:
    assert t95(1) == pytest.approx(12.706) and t95(10) == pytest.approx(2.228) and t95(1000) == 1.96


def test_win_rate_interval_is_a_t_interval_over_sessions() -> None:
    rate = win_rate([100.0, 300.0, 200.0, 400.0], hands=8)
    assert rate.mean == 250.0 and rate.sessions == 4 and rate.hands == 8
    sd = math.sqrt(sum((x - 250) ** 2 for x in (100, 300, 200, 400)) / 3)
    assert rate.sd == pytest.approx(sd)
    half = t95(3) * sd / 2
    assert (rate.low, rate.high) == (pytest.approx(250 - half), pytest.approx(250 + half))
    assert rate.significant
    one = win_rate([5.0])
    assert one.low == -math.inf and one.high == math.inf and not one.significant
    assert win_rate([]).sessions == 0


def test_interval_covers_the_true_mean_about_95_percent_of_the_time() -> None:
    rng = random.Random(1)
    covered = 0
    for _ in range(2000):
        rate = win_rate([rng.gauss(40.0, 300.0) for _ in range(25)])
        covered += rate.low <= 40.0 <= rate.high
    assert 0.93 < covered / 2000 < 0.97


def online(sessions: list[Session], tau: float = 0.0) -> OnlineTrueSkill:
    updater = OnlineTrueSkill(tau=tau)
    for s in sessions:
        updater.update(s)
    return updater


def test_session_places_by_chips_with_ties_shared() -> None:
    assert session(0, {"a": 300, "b": 0, "c": -300}).places() == {"a": 0, "b": 1, "c": 2}
    assert session(0, {"a": 100, "b": 100, "c": -200}).places() == {"a": 0, "b": 0, "c": 1}
    assert session(0, {"a": 0, "b": 0}).places() == {"a": 0, "b": 0}


def test_online_trueskill_updates_once_per_session_and_ranks_the_winner_up() -> None:
    updater = OnlineTrueSkill()
    updater.update(session(0, {"good": 200, "bad": -200}))
    first = updater.ratings()["good"]
    assert first["mu"] > 25.0 and first["sigma"] < 25.0 / 3
    for i in range(1, 30):
        updater.update(session(i, {"good": 200, "bad": -200}))
    ratings = updater.ratings()
    assert ratings["good"]["conservative"] > ratings["bad"]["conservative"]
    assert ratings["good"]["sigma"] < first["sigma"]
    updater.update(session(30, {"alone": 5}))  # a session of one bot says nothing
    assert "alone" not in updater.ratings()


def test_online_equal_totals_are_draws_that_keep_skills_equal() -> None:
    ratings = online([session(i, {"a": 0, "b": 0}) for i in range(20)]).ratings()
    assert ratings["a"]["mu"] == pytest.approx(ratings["b"]["mu"])
    assert ratings["a"]["mu"] == pytest.approx(25.0, abs=1e-6)


def test_online_multiway_sessions_rank_by_chips() -> None:
    ratings = online([session(i, {"a": 300, "b": 0, "c": -300}, hands=3) for i in range(20)]).ratings()
    assert ratings["a"]["mu"] > ratings["b"]["mu"] > ratings["c"]["mu"]


def test_online_updates_depend_on_the_order_of_sessions() -> None:
    """Why the leaderboard does not use them: with drift, the last sessions decide."""
    early = [session(i, {"a": 200, "b": -200}) for i in range(20)]
    late = [session(20 + i, {"a": -200, "b": 200}) for i in range(20)]
    one, other = online(early + late, tau=25 / 300).ratings(), online(late + early, tau=25 / 300).ratings()
    assert one["b"]["mu"] > one["a"]["mu"] and other["a"]["mu"] > other["b"]["mu"]


def test_win_rates_and_crosstable_use_the_sessions_each_pair_shared() -> None:
    sessions = [
        session(0, {"a": 200, "b": -200}),
        session(1, {"a": 400, "b": -400}),
        session(2, {"a": -100, "c": 100}),
        session(3, {"a": -300, "c": 300}),
    ]
    rates = win_rates(sessions)
    assert rates["a"].mean == pytest.approx((1000 + 2000 - 500 - 1500) / 4)
    table = crosstable(sessions)
    assert table["a"]["b"].mean == pytest.approx(1500.0) and table["b"]["a"].mean == pytest.approx(-1500.0)
    assert table["a"]["c"].mean == pytest.approx(-1000.0) and "c" not in table["b"]


def test_running_rates_agree_with_the_exact_ones() -> None:
    """The live lines' constant-time figures (Welford's update) are the results' figures but for rounding."""
    from arena.ratings.sprt import Sprt
    from arena.ratings.stats import RunningRate

    rng = random.Random(3)
    running, samples, test = RunningRate(), [], Sprt()
    for k in range(5_000):
        sample = rng.gauss(150.0, 4_000.0) + (1e6 if k == 7 else 0.0)  # one huge session: a sum would lose digits
        running.add(sample, 2)
        test.add(sample, 2)
        samples.append(sample)
        if k in (0, 1, 2, 50, 4_999):
            exact, fast, sprt = win_rate(samples, 2 * (k + 1)), running.rate(), test.running_estimate()
            for got in (fast, sprt):
                assert (got.sessions, got.hands) == (exact.sessions, exact.hands)
                for a, b in ((got.mean, exact.mean), (got.low, exact.low), (got.high, exact.high),
                             (got.sd, exact.sd)):
                    assert a == b or abs(a - b) <= 1e-9 * max(1.0, abs(b)), (k, got, exact)


def test_a_match_tally_gives_the_live_line_the_figures_of_its_result() -> None:
    import asyncio

    from arena.engine import Action, ActionKind
    from arena.ratings.tally import SessionTally
    from arena.referee import Decision, FunctionSeat, HandRecord, Match, MatchSpec

    rng = random.Random(9)

    def choose(decision: Decision) -> Action:
        legal = decision.view.legal
        assert legal is not None
        if legal.min_raise_to and rng.random() < 0.3:
            return Action(ActionKind.RAISE, legal.min_raise_to)
        return Action(ActionKind.CALL) if legal.call_amount else Action(ActionKind.CHECK)

    tally = SessionTally(2, 2, 100)

    class Keep:
        def hand_finished(self, record: HandRecord) -> None:
            tally.add(record)

    asyncio.run(Match(MatchSpec("t", "tally", 300), [(n, FunctionSeat(n, choose)) for n in "ab"], [Keep()]).run())
    assert tally.sessions == 150
    for participant in (0, 1):
        live, exact = tally.live_rate(participant), tally.win_rate(participant)
        assert (live.sessions, live.hands) == (exact.sessions, exact.hands) == (150, 300)
        assert math.isclose(live.mean, exact.mean, rel_tol=1e-9, abs_tol=1e-9)
        assert math.isclose(live.high, exact.high, rel_tol=1e-9, abs_tol=1e-9)


def test_a_tally_whose_scorer_reads_its_hands_back_from_the_database_scores_them_alike(tmp_path: Path) -> None:
    """With a scorer that reads hands back (the scoring worker on the match's database) a tally's open sessions
    keep only their hands' numbers, seats and payoffs: the same figures as a tally that kept the hands."""
    import asyncio

    from arena.ratings.estimators import ADJUSTED
    from arena.ratings.scoring_worker import ScoringWorker
    from arena.ratings.tally import SessionTally
    from arena.records.db import Database
    from arena.referee import FunctionSeat, HandRecord, Match, MatchSpec
    from tests.compare.players import RandomPlayer

    db = Database(tmp_path / "t.db")
    spec = MatchSpec("r", "reader", 200)
    kept = SessionTally(2, 2, 100)
    worker = ScoringWorker(100, False, db.path, "r")
    read_back = SessionTally(2, 2, 100, scorer=worker)
    assert worker.db_path and not isinstance(kept.scorer, ScoringWorker)

    class Both:
        def hand_finished(self, record: HandRecord) -> None:
            kept.add(record)
            read_back.add(record)
            assert all(not isinstance(h, HandRecord) for hands in read_back._hands_of.values() for h in hands)

    seats = [(n, FunctionSeat(n, RandomPlayer(i))) for i, n in enumerate("ab")]
    entry = Ledger(db).open(spec, [BotSpec(n, "") for n, _ in seats])
    asyncio.run(Match(spec, seats, [entry, Both()]).run())
    for participant in (0, 1):
        for estimator in ADJUSTED:
            assert read_back.win_rate(participant, estimator) == kept.win_rate(participant, estimator)
    read_back.close()
