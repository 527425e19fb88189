"""The leaderboard: TrueSkill order (mu - 3 sigma) beside mbb/hand with 95% CIs, a crosstable, play statistics
and rating histories, all computed from the database; also its JSON form for machines and the published site.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from typing import Any

from arena.ratings.play_stats import PlayStats, play_stats
from arena.ratings.sessions import Session, bot_key, load_sessions
from arena.ratings.stats import WinRate, crosstable, win_rates
from arena.ratings.trueskill_ratings import Rating, RatingPoint, rate_sessions
from arena.records.db import Database


@dataclass(frozen=True, slots=True)
class Row:
    """One bot on the leaderboard."""

    rank: int
    bot: str
    rating: Rating
    win_rate: WinRate
    stats: PlayStats | None


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


@dataclass(frozen=True, slots=True)
class Leaderboard:
    """Everything a leaderboard shows."""

    rows: tuple[Row, ...]
    crosstable: dict[str, dict[str, WinRate]]
    history: dict[str, list[RatingPoint]]
    matches: tuple[MatchSummary, ...]
    sessions: int
    generated_at: float


def matches_summary(db: Database, match_ids: list[str]) -> tuple[MatchSummary, ...]:
    """A line per match: who played, how far it got, who won what."""
    out = []
    for match_id in match_ids:
        row = db.match_row(match_id)
        assert row is not None
        bots = tuple(bot_key(n, v) for n, v in db.participants(match_id))
        net = [0] * len(bots)
        for r in db.conn.execute("SELECT participant, SUM(payoff) AS s FROM hand_seats WHERE match_id = ?"
                                 " GROUP BY participant", (match_id,)):
            net[r["participant"]] = int(r["s"])
        out.append(MatchSummary(match_id, row["status"], bots, db.hands_recorded(match_id), row["hands_total"],
                                row["created_at"], row["commitment"], tuple(net)))
    return tuple(out)


def build_leaderboard(db: Database, match_ids: list[str] | None = None) -> Leaderboard:
    """The leaderboard of the given matches (default: every match in the database)."""
    ids = match_ids if match_ids is not None else db.match_ids()
    sessions: list[Session] = load_sessions(db, ids)
    ratings, history = rate_sessions(sessions)
    rates = win_rates(sessions)
    stats = play_stats(db, ids)
    ordered = sorted(ratings, key=lambda b: (-ratings[b].conservative, -rates[b].mean, b))
    rows = tuple(Row(i + 1, bot, ratings[bot], rates[bot], stats.get(bot)) for i, bot in enumerate(ordered))
    return Leaderboard(rows, crosstable(sessions), history, matches_summary(db, ids), len(sessions), time.time())


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def leaderboard_json(board: Leaderboard) -> dict[str, Any]:
    """The leaderboard as plain JSON data (infinite CI bounds of one-session bots become null)."""

    def rate(w: WinRate) -> dict[str, Any]:
        return {"mbb_per_hand": w.mean, "ci95": [_finite(w.low), _finite(w.high)], "sessions": w.sessions,
                "hands": w.hands}

    return {
        "generated_at": board.generated_at,
        "sessions": board.sessions,
        "ranking": "TrueSkill conservative estimate mu - 3 sigma, one update per duplicate session",
        "rows": [
            {
                "rank": r.rank,
                "bot": r.bot,
                "mu": r.rating.mu,
                "sigma": r.rating.sigma,
                "conservative": r.rating.conservative,
                **rate(r.win_rate),
                "stats": asdict(r.stats) if r.stats else None,
            }
            for r in board.rows
        ],
        "crosstable": {a: {b: rate(w) for b, w in row.items()} for a, row in board.crosstable.items()},
        "history": {bot: [asdict(p) for p in points] for bot, points in board.history.items()},
        "matches": [asdict(m) for m in board.matches],
    }
