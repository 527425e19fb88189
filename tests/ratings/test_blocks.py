"""A rating game is a block of duplicate deals scored by chips (arena.ratings.blocks), and the leaderboard checks its
order against the head-to-head results (arena.ratings.consistency)."""

from __future__ import annotations

import random

import pytest

from arena.ratings.blocks import RatingRules, RatingRulesError, block_bounds, places_by_result, rating_games
from arena.ratings.consistency import check_order, head_to_head
from arena.ratings.leaderboard import rank_bots
from arena.ratings.sessions import Session
from arena.ratings.settings import rules_from_mapping
from arena.ratings.stats import crosstable, win_rates
from arena.ratings.trueskill_ratings import TrueSkill
from arena.runner.settings import SettingsError


def session(match: str, deal: int, chips: dict[str, float], hands: int = 2) -> Session:
    return Session(match, deal, deal, 100, dict(chips), dict.fromkeys(chips, hands))


def test_a_match_is_cut_into_whole_blocks_the_last_taking_the_remainder() -> None:
    assert block_bounds(0, 30) == [] and block_bounds(29, 30) == []
    assert block_bounds(30, 30) == [(0, 30)]
    assert block_bounds(59, 30) == [(0, 59)]
    assert block_bounds(95, 30) == [(0, 30), (30, 60), (60, 95)]
    assert block_bounds(5, 1) == [(i, i + 1) for i in range(5)]


def test_places_by_chips_with_a_draw_margin() -> None:
    assert places_by_result({"a": 300.0, "b": -300.0}, 50) == {"a": 0, "b": 1}
    assert places_by_result({"a": 20.0, "b": -20.0}, 50) == {"a": 0, "b": 0}  # 40 mbb/hand apart: a draw
    assert places_by_result({"a": 0.0, "b": 0.0}, 0) == {"a": 0, "b": 0}
    six = places_by_result({"a": 900, "b": 880, "c": 100, "d": 0, "e": -10, "f": -1870}, 25)
    assert six == {"a": 0, "b": 0, "c": 2, "d": 3, "e": 3, "f": 5}


def test_games_are_blocks_of_one_match_in_deal_order_never_spanning_two() -> None:
    first = [session("m1", d, {"a": 100 * (d % 3 - 1), "b": -100 * (d % 3 - 1)}) for d in range(65)]
    second = [session("m2", d, {"a": -50, "c": 50}) for d in range(20)]
    third = [session("m3", d, {"b": 10, "c": -10}) for d in range(30)]
    shuffled = random.Random(1).sample(first, len(first))  # the deals come back in deal order
    games = rating_games([*shuffled, *second, *third], RatingRules(block_deals=30))
    assert [(g.match_id, g.first_deal, g.deals) for g in games] == [("m1", 0, 30), ("m1", 30, 35), ("m3", 0, 30)]
    block = games[0]
    assert block.chips == {"a": sum(s.chips["a"] for s in first[:30]), "b": sum(s.chips["b"] for s in first[:30])}
    assert block.hands == {"a": 60, "b": 60}
    assert games[2].places() == {"b": 0, "c": 1}  # +100 mbb/hand against -100: 200 apart, beyond the margin
    incomplete = [session("m4", d, {"a": 1, "b": -1}) for d in range(30)]
    incomplete[3].complete = False
    assert rating_games(incomplete, RatingRules(block_deals=30)) == []  # 29 complete deals: not a game yet


def test_a_freezeout_and_a_cash_game_set_are_whole_games() -> None:
    freezeout = Session("fz", 0, 0, 100, {"a": 400, "b": -100, "c": -300}, {"a": 9, "b": 9, "c": 5},
                        finish={"a": 0, "b": 1, "c": 2}, whole_game=True)
    cash = Session("cash", 0, 0, 100, {"a": -500, "b": 500}, {"a": 80, "b": 80}, whole_game=True)
    games = rating_games([freezeout, cash], RatingRules(block_deals=30))
    assert [g.places() for g in games] == [{"a": 0, "b": 1, "c": 2}, {"a": 1, "b": 0}]


def steady_and_swingy(seed: int, deals: int) -> list[Session]:
    """The random bot's shape (issue 23): 'swingy' wins 85% of the deals by half a big blind and loses the rest by
    ten big blinds a hand, so it wins most deals and loses chips (-1,075 mbb/hand on average)."""
    rng = random.Random(seed)
    out = []
    for d in range(deals):
        swing = 100.0 if rng.random() < 0.85 else -2000.0
        out.append(session("m", d, {"swingy": swing, "steady": -swing}))
    return out


def test_a_bot_that_wins_most_deals_and_loses_chips_ranks_below_one_that_wins_the_chips() -> None:
    sessions = steady_and_swingy(3, 600)
    rates = win_rates(sessions)
    assert rates["steady"].low > 0  # steady wins the chips, significantly
    system = TrueSkill()
    blocks = rating_games(sessions, RatingRules(block_deals=30))
    assert rank_bots(system, system.rate(blocks), rates) == ["steady", "swingy"]
    # the positive control: one deal a game, the definition of before, ranks the bot that wins most deals first
    deals = rating_games(sessions, RatingRules(block_deals=1))
    assert rank_bots(system, system.rate(deals), rates) == ["swingy", "steady"]


def test_bots_without_a_game_get_the_prior_and_are_provisional() -> None:
    ratings = TrueSkill().rate([], ["a", "b"])
    assert ratings["a"]["mu"] == 25.0 and ratings["a"]["sigma"] == pytest.approx(25 / 3)


def test_the_check_names_a_pair_ranked_against_a_significant_head_to_head_result() -> None:
    sessions = steady_and_swingy(4, 400)
    table = head_to_head(sessions)
    assert table["steady"]["swingy"].mean == pytest.approx(crosstable(sessions)["steady"]["swingy"].mean)
    wrong = check_order(["swingy", "steady"], table)
    assert not wrong.ok and [(c.above, c.below) for c in wrong.contradictions] == [("swingy", "steady")]
    assert "swingy is ranked above steady, but steady beat it head-to-head by +" in wrong.lines()[0]
    assert wrong.as_json()["contradictions"][0]["below"] == "steady"
    assert check_order(["steady", "swingy"], table).ok


def test_a_cycle_of_significant_results_is_said_plainly() -> None:
    sessions = []
    for d in range(40):  # a beats b, b beats c, c beats a, each by a big blind a hand or so
        noise = (d % 5 - 2) * 10
        sessions += [session("ab", d, {"a": 200 + noise, "b": -200 - noise}),
                     session("bc", d, {"b": 200 + noise, "c": -200 - noise}),
                     session("ca", d, {"c": 200 + noise, "a": -200 - noise}),
                     session("ad", d, {"a": 300 + noise, "d": -300 - noise})]
    found = check_order(["a", "b", "c", "d"], head_to_head(sessions))
    assert found.cycles == (("a", "b", "c"),)
    assert found.lines()[0] == "head-to-head cycle: a beats b beats c beats a (each significant at 95%)"
    assert [(c.above, c.below, c.in_cycle) for c in found.contradictions] == [("a", "c", True)]


def test_multiway_head_to_head_is_the_paired_difference_at_the_same_table() -> None:
    sessions = [session("six", d, {"a": 600, "b": 300, "c": -900}, hands=3) for d in range(10)]
    table = head_to_head(sessions)
    assert table["a"]["b"].mean == pytest.approx(500.0)  # (2000 - 1000) / 2 mbb/hand
    assert table["b"]["a"].mean == pytest.approx(-500.0)


def test_rating_settings_are_checked_with_the_key_named() -> None:
    assert rules_from_mapping({"block_deals": 12, "draw_margin_mbb": 0}, "cup.toml").block_deals == 12
    with pytest.raises(SettingsError, match=r"cup\.toml: ratings\.block_deals = 0: must be at least 1"):
        rules_from_mapping({"block_deals": 0}, "cup.toml")
    with pytest.raises(SettingsError, match=r"unknown key 'ratings\.block_deal'; did you mean block_deals"):
        rules_from_mapping({"block_deal": 10}, "cup.toml")
    with pytest.raises(RatingRulesError, match="draw_margin_mbb"):
        RatingRules(draw_margin_mbb=-1.0)
