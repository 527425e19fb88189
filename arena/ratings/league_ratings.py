"""A league's live ratings: TrueSkill updated one rating game at a time (a block of deals, arena.ratings.blocks) as
its matches end, for matchmaking and the live site (the published leaderboard is the order-independent fit of the
same games, arena.ratings.trueskill_ratings.TrueSkill).

Each version of a bot (``name@version``) is rated on its own. A new version starts from its previous version's
rating with the mean kept and the deviation widened (``version_sigma`` added in quadrature, at most the prior's),
as Halite seeded new submissions: it is probably about as strong, but nobody knows yet. Replaying the league's
games in the order its matches ended gives exactly the ratings the host had (``replay``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import trueskill

from arena.ratings.batch_fit import DEFAULT_MODEL, Model
from arena.ratings.blocks import RatingGame
from arena.ratings.trueskill_ratings import OnlineTrueSkill


def split_key(key: str) -> tuple[str, str]:
    """``name@version`` -> (name, version); registered names have no '@' (arena.records.registry)."""
    name, _, version = key.partition("@")
    return name, version


class LeagueRatings:
    """Online TrueSkill per bot version, each new version seeded from the one before it."""

    def __init__(self, model: Model = DEFAULT_MODEL, version_sigma: float = 2.0) -> None:
        self.model = model
        self.version_sigma = version_sigma
        self.online = OnlineTrueSkill(model)
        self.latest: dict[str, str] = {}  # bot name -> its newest version's key that has a rating
        self.games: dict[str, int] = {}  # key -> rating games rated

    def prior(self, key: str) -> trueskill.Rating:
        """The rating ``key`` starts from: its previous version's, widened; the league's prior for a new bot."""
        name, _ = split_key(key)
        before = self.latest.get(name)
        if before is None or before == key:
            return self.online.env.create_rating()
        old = self.online.current[before]
        sigma = min(self.model.sigma, math.sqrt(old.sigma**2 + self.version_sigma**2))
        return self.online.env.create_rating(mu=old.mu, sigma=sigma)

    def rating(self, key: str) -> trueskill.Rating:
        """``key``'s current rating (its prior if it has played no session yet)."""
        return self.online.current.get(key) or self.prior(key)

    def update(self, game: RatingGame) -> None:
        """Rate one more game."""
        if len(game.chips) < 2:
            return
        for key in game.chips:
            if key not in self.online.current:
                self.online.current[key] = self.prior(key)
                self.latest[split_key(key)[0]] = key
        self.online.update(game)
        for key in game.chips:
            self.games[key] = self.games.get(key, 0) + 1

    @classmethod
    def replay(cls, games: Iterable[RatingGame], model: Model = DEFAULT_MODEL,
               version_sigma: float = 2.0) -> LeagueRatings:
        """The ratings after ``games``, in that order."""
        ratings = cls(model, version_sigma)
        for game in games:
            ratings.update(game)
        return ratings
