"""Live league ratings: online TrueSkill per version, a new version seeded from its predecessor, replayable."""

from __future__ import annotations

import math

from arena.ratings.blocks import RatingGame
from arena.ratings.league_ratings import LeagueRatings


def session(i: int, winner: str, loser: str) -> RatingGame:
    """One rating game (a block of deals, arena.ratings.blocks) won by ``winner``."""
    return RatingGame("m", i, 30, i, 100, chips={winner: 100.0, loser: -100.0}, hands={winner: 60, loser: 60},
                      finish={winner: 0, loser: 1})


def test_a_new_version_starts_at_its_predecessors_mu_with_a_wider_sigma() -> None:
    ratings = LeagueRatings(version_sigma=2.0)
    for i in range(30):
        ratings.update(session(i, "alpha@1", "beta@1"))
    old = ratings.rating("alpha@1")
    prior = ratings.rating("alpha@2")
    assert prior.mu == old.mu and math.isclose(prior.sigma, math.hypot(old.sigma, 2.0))
    assert ratings.rating("gamma@1").mu == 25.0  # a new bot: the league's prior
    ratings.update(session(30, "beta@1", "alpha@2"))
    assert ratings.rating("alpha@2").mu < old.mu  # rated on its own from its seeded prior
    assert ratings.rating("alpha@1") == old  # the old version's rating stays
    assert ratings.games["alpha@2"] == 1 and ratings.games["alpha@1"] == 30


def test_replay_gives_the_same_ratings() -> None:
    sessions = [session(i, "a@1" if i % 3 else "b@1", "b@1" if i % 3 else "a@1") for i in range(40)]
    sessions += [session(40 + i, "a@2", "b@1") for i in range(5)]
    live = LeagueRatings()
    for s in sessions:
        live.update(s)
    again = LeagueRatings.replay(sessions)
    assert {k: (r.mu, r.sigma) for k, r in live.online.current.items()} == \
        {k: (r.mu, r.sigma) for k, r in again.online.current.items()}
