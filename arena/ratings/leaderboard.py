"""The leaderboard: the bots in the order of a rating system (by default TrueSkill fitted to all rating games at
once, a game being a block of duplicate deals ranked by chips, arena.ratings.blocks; sorted by mu - 3 sigma) beside
mbb/hand with 95% CIs, a crosstable, play statistics and rating histories, all computed from the database; then the
order checked against every head-to-head result (arena.ratings.consistency); also its JSON form for machines and
the published site.

Nothing here knows TrueSkill's field names: the sort key and the columns come from the ``RatingSystem``.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from arena.ratings.blocks import DEFAULT_RULES, RatingRules, games_played, rating_games
from arena.ratings.consistency import Consistency, check_order, head_to_head
from arena.ratings.estimators import ADJUSTED, Estimator
from arena.ratings.games import Standing, standings
from arena.ratings.play_stats import PlayStats, play_stats
from arena.ratings.sessions import Session, bot_key, load_sessions_by
from arena.ratings.stats import WinRate, crosstable, win_rates
from arena.ratings.system import Rating, RatingPoint, RatingSystem
from arena.ratings.trueskill_ratings import TrueSkill
from arena.records import queries
from arena.records.db import Database
from arena.referee.game import GameKind, GameResult


@dataclass(frozen=True, slots=True)
class Row:
    """One bot on the leaderboard."""

    rank: int
    bot: str
    rating: Rating
    win_rate: WinRate
    stats: PlayStats | None
    flags: dict[str, int] = field(default_factory=dict)  # matches it never connected to, crashed in, ... (BotOutcome)
    allin: WinRate | None = None  # the win rate with all-in hands scored by their EV (arena.ratings.allin)
    aivat: WinRate | None = None  # the win rate with the luck of the cards taken out (arena.ratings.aivat)
    games: Standing | None = None  # cash games and freezeouts: games, wins, in the money, mean place
    rating_games: int = 0  # the rating games (blocks of deals, arena.ratings.blocks) it was rated on
    provisional: bool = False  # fewer rating games than the rules ask for

    @property
    def flag_text(self) -> str:
        """The flags in words: ``crashed in 2 matches, no show in 1``."""
        return flag_text(self.flags)


@dataclass(frozen=True, slots=True)
class MatchSummary:
    """One recorded match, for listings."""

    match_id: str
    status: str
    bots: tuple[str, ...]
    hands: int
    hands_total: int
    created_at: float
    commitment: str
    net: tuple[int, ...]
    final_hash: str = ""  # the match's final hash once it ended (arena.records.evidence)


@dataclass(frozen=True, slots=True)
class Leaderboard:
    """Everything a leaderboard shows."""

    rows: tuple[Row, ...]
    crosstable: dict[str, dict[str, WinRate]]
    history: dict[str, list[RatingPoint]]
    matches: tuple[MatchSummary, ...]
    sessions: int
    generated_at: float
    system: RatingSystem
    unrated: dict[str, dict[str, int]] = field(default_factory=dict)  # flagged bots with no complete session
    rules: RatingRules = DEFAULT_RULES  # what a rating game is
    games: int = 0  # rating games
    consistency: Consistency = field(default_factory=Consistency)  # the order against the head-to-head results
    head_to_head: dict[str, dict[str, WinRate]] = field(default_factory=dict)  # what the check compared it with


def default_system(rules: RatingRules = DEFAULT_RULES) -> RatingSystem:
    """The leaderboard's rating system unless one is given: TrueSkill over blocks of deals, all fitted at once."""
    return TrueSkill(rules=rules)


def matches_summary(db: Database, match_ids: list[str]) -> tuple[MatchSummary, ...]:
    """A line per match: who played, how far it got, who won what."""
    out = []
    for match_id in match_ids:
        info = queries.require(db, match_id)
        bots = tuple(bot_key(n, v) for n, v in queries.participants(db, match_id))
        net = queries.net_chips(db, match_id)
        out.append(MatchSummary(match_id, info.status.value, bots, queries.hands_recorded(db, match_id),
                                info.hands_total, info.created_at, info.commitment, tuple(net), info.final_hash))
    return tuple(out)


def build_leaderboard(
    db: Database, match_ids: list[str] | None = None, system: RatingSystem | None = None, history_points: int = 30,
    rules: RatingRules = DEFAULT_RULES,
) -> Leaderboard:
    """The leaderboard of the given matches (default: every match in the database), ordered by ``system``'s sort
    key, highest first; ties go to the higher mbb/hand, then to the name. ``rules`` say what a rating game is.
    """
    system = system if system is not None else default_system(rules)
    system.check()
    ids = match_ids if match_ids is not None else queries.match_ids(db)
    by = load_sessions_by(db, (Estimator.RAW, *ADJUSTED), ids)
    sessions: list[Session] = by[Estimator.RAW]
    games = rating_games(sessions, rules)
    rates = win_rates(sessions)
    ratings = system.rate(games, sorted(rates))
    history = system.history(games, history_points) if history_points > 0 else {}
    played_games = games_played(games)
    allin = win_rates(by[Estimator.ALLIN])
    aivat = win_rates(by[Estimator.AIVAT])
    stats = play_stats(db, ids)
    ordered = rank_bots(system, ratings, rates)
    flags = bot_flags(db, ids)
    played = game_standings(db, ids)
    rows = tuple(Row(i + 1, bot, ratings[bot], rates[bot], stats.get(bot), flags.get(bot, {}), allin.get(bot),
                     aivat.get(bot), played.get(bot), played_games.get(bot, 0),
                     played_games.get(bot, 0) < rules.min_games)
                 for i, bot in enumerate(ordered))
    unrated = {bot: f for bot, f in flags.items() if bot not in ratings}
    pairs = head_to_head(sessions)
    return Leaderboard(rows, crosstable(sessions), history, matches_summary(db, ids), len(sessions), time.time(),
                       system, unrated, rules, len(games), check_order(ordered, pairs), pairs)


def game_standings(db: Database, match_ids: list[str]) -> dict[str, Standing]:
    """Each bot's standing over the finished cash games and freezeouts of the matches (arena.ratings.games)."""
    games: list[tuple[list[str], GameResult]] = []
    for match_id in match_ids:
        if queries.game_kind(db, match_id) is not GameKind.RESET:
            names = [bot_key(n, v) for n, v in queries.participants(db, match_id)]
            games.extend((names, g) for g in queries.game_results(db, match_id))
    return standings(games)


def bot_flags(db: Database, match_ids: list[str]) -> dict[str, dict[str, int]]:
    """For each bot, in how many of the matches it never connected, crashed, forfeited or was disconnected."""
    flags: dict[str, dict[str, int]] = {}
    for outcome in queries.bot_outcomes(db, match_ids):
        if outcome.outcome.failed:
            counts = flags.setdefault(bot_key(outcome.name, outcome.version), {})
            counts[outcome.outcome.value] = counts.get(outcome.outcome.value, 0) + 1
    return flags


FLAG_WORDS = {"no_show": "no show", "crashed": "crashed", "forfeited": "forfeited", "absent": "disconnected"}


def flag_text(flags: dict[str, int]) -> str:
    """Flags in words, worst first: ``crashed in 2 matches, no show in 1``."""
    parts: list[str] = []
    for key, word in FLAG_WORDS.items():
        n = flags.get(key, 0)
        if n:
            parts.append(f"{word} in {n} match{'es' if n > 1 else ''}" if not parts else f"{word} in {n}")
    return ", ".join(parts)


def rank_bots(system: RatingSystem, ratings: dict[str, Rating], rates: dict[str, WinRate]) -> list[str]:
    """The rated bots in leaderboard order: by the system's sort key, highest first, then by mbb/hand, then name."""
    key = system.sort_key
    return sorted(ratings, key=lambda b: (-ratings[b][key], -rates[b].mean if b in rates else 0.0, b))


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def sorted_by(system: RatingSystem) -> dict[str, Any]:
    """What a leaderboard is sorted by, as JSON data."""
    column = system.sort_column
    return {"key": column.key, "label": column.label, "order": "descending", "rating_system": system.name,
            "ties": ["mbb_per_hand descending", "bot ascending"], "text": system.sorted_by()}


def leaderboard_json(board: Leaderboard) -> dict[str, Any]:
    """The leaderboard as plain JSON data (infinite CI bounds of one-session bots become null). Each row carries
    the rating system's values under its column keys (TrueSkill: ``conservative``, ``mu``, ``sigma``);
    ``sorted_by`` and ``rating_system`` say which of them orders the rows and what they mean.
    """

    def rate(w: WinRate) -> dict[str, Any]:
        return {"mbb_per_hand": w.mean, "ci95": [_finite(w.low), _finite(w.high)], "sessions": w.sessions,
                "hands": w.hands}

    system = board.system
    return {
        "generated_at": board.generated_at,
        "sessions": board.sessions,
        "ranking": system.sorted_by(),
        "sorted_by": sorted_by(system),
        "rating_system": system.describe(),
        "rating_game": {**board.rules.as_json(), "games": board.games},
        "consistency": board.consistency.as_json(),
        "rows": [
            {
                "rank": r.rank,
                "bot": r.bot,
                **{c.key: r.rating[c.key] for c in system.columns},
                **rate(r.win_rate),
                "allin_ev": rate(r.allin) if r.allin is not None else None,
                "aivat": rate(r.aivat) if r.aivat is not None else None,
                "games": r.games.as_json() if r.games is not None else None,
                "rating_games": r.rating_games,
                "provisional": r.provisional,
                "stats": asdict(r.stats) if r.stats else None,
                "flags": r.flags,
            }
            for r in board.rows
        ],
        "crosstable": {a: {b: rate(w) for b, w in row.items()} for a, row in board.crosstable.items()},
        "history": {bot: [asdict(p) for p in points] for bot, points in board.history.items()},
        "matches": [asdict(m) for m in board.matches],
        "unrated": board.unrated,  # bots flagged (never connected, crashed...) without a complete session
    }
