"""A rating system is a plug-in: the leaderboard, its JSON, the terminal table and the site take the sort key and
the columns from it. A toy system (share of sessions won) stands in for another one."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner

import arena.cli.leaderboard as cli
from arena.publish import publish
from arena.ratings.leaderboard import build_leaderboard, leaderboard_json
from arena.ratings.system import Column, Ranked, Rating, RatingSystem
from arena.ratings.trueskill_ratings import TrueSkill
from arena.records.db import Database
from tests.publish.helpers import caller, folder, play, raiser


class WinShare(RatingSystem):
    """Share of sessions won (a draw counts half): sorted by it, and also showing the wins."""

    name = "win-share"
    title = "share of sessions won"
    method = "Each session won counts 1, a draw 1/2."
    columns = (Column("share", "won %", "share of sessions won, draws half", digits=3),
               Column("won", "won", "sessions won", digits=0))
    sort_key = "share"
    estimate_label = "share of sessions won"

    def rate(self, games: Sequence[Ranked], players: Iterable[str] = ()) -> dict[str, Rating]:
        points: dict[str, float] = dict.fromkeys(players, 0.0)
        won: dict[str, float] = dict.fromkeys(players, 0.0)
        played: dict[str, int] = dict.fromkeys(players, 0)
        for s in games:
            places = s.places()
            if len(places) < 2:
                continue
            for bot, place in places.items():
                beaten = sum(place < p for p in places.values())
                tied = sum(place == p for p in places.values()) - 1
                share = (beaten + tied / 2) / (len(places) - 1)
                points[bot] = points.get(bot, 0.0) + share
                won[bot] = won.get(bot, 0.0) + (share == 1.0)
                played[bot] = played.get(bot, 0) + 1
        share = {bot: points[bot] / played[bot] if played[bot] else 0.0 for bot in points}
        return {bot: Rating({"share": share[bot], "won": won[bot]}, share[bot], 0.0, 1.0) for bot in points}


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Database:
    database = Database(tmp_path_factory.mktemp("system") / "a.db")
    play(database, "r-c", [("raiser", "", raiser), ("caller", "", caller)], hands=20)
    play(database, "r-f", [("raiser", "", raiser), ("folder", "", folder)], hands=20)
    play(database, "c-f", [("caller", "", caller), ("folder", "", folder)], hands=20)
    return database


def test_the_leaderboard_is_sorted_by_the_systems_key(db: Database) -> None:
    board = build_leaderboard(db, system=WinShare())
    shares = [row.rating["share"] for row in board.rows]
    assert shares == sorted(shares, reverse=True) and board.history == {}
    data = leaderboard_json(board)
    assert data["sorted_by"]["key"] == "share" and data["sorted_by"]["order"] == "descending"
    assert data["rating_system"]["name"] == "win-share"
    assert [c["key"] for c in data["rating_system"]["columns"]] == ["share", "won"]
    for row in data["rows"]:
        assert {"share", "won", "mbb_per_hand", "ci95"} <= row.keys() and "mu" not in row
    assert "share of sessions won" in data["ranking"]


def test_the_default_is_trueskill_and_its_json_keeps_the_old_fields(db: Database) -> None:
    data = leaderboard_json(build_leaderboard(db))
    assert data["rating_system"]["name"] == "trueskill" and data["sorted_by"]["key"] == "conservative"
    assert data["sorted_by"]["label"] == "mu − 3σ"
    assert data["rating_system"]["parameters"] == {"mu": 25.0, "sigma": 25 / 3, "beta": 25 / 6,
                                                   "draw_probability": 0.10, "drift": 0.0}
    for row in data["rows"]:
        assert row["conservative"] == pytest.approx(row["mu"] - 3 * row["sigma"])
    conservative = [row["conservative"] for row in data["rows"]]
    assert conservative == sorted(conservative, reverse=True)
    assert all(point.keys() == {"games", "estimate", "low", "high"} for points in data["history"].values()
               for point in points)


def test_the_terminal_table_shows_the_systems_columns_and_its_sort(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    def with_win_share(d: Database, ids: list[str] | None, history_points: int = 0, **kw: object) -> object:
        return build_leaderboard(d, ids, system=WinShare(), history_points=history_points)

    monkeypatch.setattr(cli, "build_leaderboard", with_win_share)
    out = CliRunner().invoke(cli.leaderboard, ["--db", str(db.path)])
    assert out.exit_code == 0, out.output
    assert "won % ▼" in out.output and "mu" not in out.output
    assert "sorted by won % (share of sessions won), highest first" in " ".join(out.output.split())
    monkeypatch.undo()
    default = CliRunner().invoke(cli.leaderboard, ["--db", str(db.path), "--block-deals", "2"])
    text = " ".join(default.output.split())
    assert "mu − 3σ ▼" in text and "mbb/hand" in text and "95% CI" in text
    assert "sorted by mu − 3σ (TrueSkill over blocks of duplicate deals, all fitted at once), highest first" in text
    assert "a rating game is a block of 2 consecutive duplicate deals" in text
    as_json = json.loads(CliRunner().invoke(cli.leaderboard, ["--db", str(db.path), "--json",
                                                              "--block-deals", "2"]).output)
    assert as_json["sorted_by"]["key"] == "conservative" and as_json["history"]


def test_the_site_shows_the_systems_columns_and_its_sort(db: Database, tmp_path: Path) -> None:
    board = build_leaderboard(db, system=WinShare())
    result = publish(db, tmp_path / "site", board=board)
    index = result.index.read_text(encoding="utf-8")
    assert 'aria-sort="descending"' in index and "won % ▼" in index
    assert "Sorted by <strong>won %</strong> (share of sessions won), highest first" in index
    assert "mu − 3σ" not in index and "Each session won counts 1, a draw 1/2." in index
    assert not (tmp_path / "site" / "plots" / "rating.svg").exists()  # no history, no plot
    assert json.loads((tmp_path / "site" / "leaderboard.json").read_text())["sorted_by"]["key"] == "share"


def test_a_system_whose_columns_cannot_go_on_a_leaderboard_is_refused(db: Database) -> None:
    class Clash(WinShare):
        columns = (Column("bot", "bot", "a clash with the bot's name"),)
        sort_key = "bot"

    class Unsorted(WinShare):
        sort_key = "nothing"

    for system in (Clash(), Unsorted()):
        with pytest.raises(ValueError, match=system.name):
            build_leaderboard(db, system=system)
    assert TrueSkill().sort_column.label == "mu − 3σ"
