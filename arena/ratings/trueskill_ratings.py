"""TrueSkill over duplicate sessions: one update per session, ranking the bots by their total chips over all the
rotations of that session (equal totals are a draw). The leaderboard orders by the conservative mu - 3 sigma.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import trueskill

from arena.ratings.sessions import Session

ENVIRONMENT = trueskill.TrueSkill(draw_probability=0.10)


@dataclass(frozen=True, slots=True)
class Rating:
    """A TrueSkill rating: skill estimate ``mu`` and its uncertainty ``sigma``."""

    mu: float
    sigma: float

    @property
    def conservative(self) -> float:
        """mu - 3 sigma: the skill the bot has with about 99.9% confidence; what the leaderboard sorts by."""
        return self.mu - 3 * self.sigma


@dataclass(frozen=True, slots=True)
class RatingPoint:
    """A bot's rating after a session (for plots of rating over time)."""

    session: int
    mu: float
    sigma: float


def rate_sessions(sessions: Sequence[Session]) -> tuple[dict[str, Rating], dict[str, list[RatingPoint]]]:
    """Final ratings and each bot's rating history, updating once per duplicate session in play order."""
    current: dict[str, trueskill.Rating] = {}
    history: dict[str, list[RatingPoint]] = {}
    for session in sessions:
        bots = sorted(session.chips)
        if len(bots) < 2:
            continue
        for bot in bots:
            if bot not in current:
                current[bot] = ENVIRONMENT.create_rating()
                history[bot] = [RatingPoint(-1, current[bot].mu, current[bot].sigma)]
        order = sorted({session.chips[b] for b in bots}, reverse=True)
        ranks = [order.index(session.chips[b]) for b in bots]
        rated = ENVIRONMENT.rate([(current[b],) for b in bots], ranks=ranks)
        for bot, (rating,) in zip(bots, rated, strict=True):
            current[bot] = rating
            history[bot].append(RatingPoint(session.order, rating.mu, rating.sigma))
    return {bot: Rating(r.mu, r.sigma) for bot, r in current.items()}, history
