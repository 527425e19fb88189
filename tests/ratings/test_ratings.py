"""Ratings as pure functions: t-intervals over sessions, TrueSkill per session with draws, crosstables."""

from __future__ import annotations

import math
import random

import pytest

from arena.ratings.sessions import Session, bot_key
from arena.ratings.stats import crosstable, t95, win_rate, win_rates
from arena.ratings.trueskill_ratings import rate_sessions


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


def test_trueskill_updates_once_per_session_and_ranks_the_winner_up() -> None:
    sessions = [session(i, {"good": 200, "bad": -200}) for i in range(30)]
    ratings, history = rate_sessions(sessions)
    assert ratings["good"].conservative > ratings["bad"].conservative
    assert len(history["good"]) == 31  # the prior, then one point per session
    assert ratings["good"].sigma < history["good"][0].sigma


def test_equal_totals_are_draws_that_keep_skills_equal() -> None:
    ratings, _ = rate_sessions([session(i, {"a": 0, "b": 0}) for i in range(20)])
    assert ratings["a"].mu == pytest.approx(ratings["b"].mu)
    assert ratings["a"].mu == pytest.approx(25.0, abs=1e-6)


def test_multiway_sessions_rank_by_chips() -> None:
    sessions = [session(i, {"a": 300, "b": 0, "c": -300}, hands=3) for i in range(20)]
    ratings, _ = rate_sessions(sessions)
    assert ratings["a"].mu > ratings["b"].mu > ratings["c"].mu


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
