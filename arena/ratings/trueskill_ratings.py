"""TrueSkill over rating games. A game is a block of consecutive duplicate deals of one match, its bots placed by
the chips they won over it (arena.ratings.blocks says why a block, and how long), or a whole freezeout.

``TrueSkill`` is the leaderboard's rating system: TrueSkill's model fitted to all the games at once, as TrueSkill
Through Time does with every game in one time step (``arena.ratings.batch_fit``). A bot version's skill does not
drift, so every game counts the same, and the order in which games were played or recorded cannot change a
rating. ``OnlineTrueSkill`` is the classic one-game-at-a-time update of the ``trueskill`` package, for a rating
that has to move while a league plays; it depends on the order of the games, so the leaderboard never uses it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence

import trueskill

from arena.ratings.batch_fit import DEFAULT_MODEL, TOLERANCE, Fit, GameKey, Model, count_games, fit
from arena.ratings.blocks import DEFAULT_RULES, RatingRules
from arena.ratings.system import Column, Ranked, Rating, RatingPoint, RatingSystem

log = logging.getLogger(__name__)

HISTORY_TOLERANCE = 1e-6  # a plot needs no more
HISTORY_WORK = 20_000  # points x distinct games a history may cost, a game of k > 2 players counting 40 (k - 1)
BAND_SIGMAS = 3  # the band is mu ± 3 sigma: its lower edge is the conservative rating the leaderboard sorts by
COLUMNS = (
    Column("conservative", "mu − 3σ",
           "conservative TrueSkill rating: a skill the bot has with about 99.9% confidence; the order of the table"),
    Column("mu", "mu", "TrueSkill skill estimate"),
    Column("sigma", "σ", "TrueSkill uncertainty of mu"),
)


def trueskill_rating(mu: float, sigma: float) -> Rating:
    """A TrueSkill (mu, sigma) as a leaderboard rating: mu − 3σ, mu, σ; band mu ± 3σ."""
    low, high = mu - BAND_SIGMAS * sigma, mu + BAND_SIGMAS * sigma
    return Rating({"conservative": low, "mu": mu, "sigma": sigma}, mu, low, high)


class TrueSkill(RatingSystem):
    """TrueSkill fitted to all sessions at once (no drift): the leaderboard's default rating system."""

    name = "trueskill"
    title = "TrueSkill over blocks of duplicate deals, all fitted at once"
    columns = COLUMNS
    sort_key = "conservative"
    estimate_label = f"TrueSkill mu (band: mu \u00b1 {BAND_SIGMAS}\u03c3)"

    def __init__(self, model: Model = DEFAULT_MODEL, rules: RatingRules = DEFAULT_RULES) -> None:
        self.model = model
        self.rules = rules
        self._last: tuple[dict[GameKey, int], float, Fit] | None = None
        self.method = (
            f"A game is a block of {rules.block_deals} consecutive duplicate deals of one match, each deal in all its"
            f" rotations: its bots are placed by the {rules.estimator.label} chips they won over the block (results"
            f" within {rules.draw_margin_mbb:g} mbb/hand are a draw), so a game follows the chips, where a single"
            " deal would follow only who won it (a bot that wins many small pots and loses a few big ones would win"
            " most deals and lose chips). A freezeout, or a cash game's duplicate set, is one game. TrueSkill's"
            " model is fitted to all the games at once, as TrueSkill Through Time does with every game in one time"
            " step: a bot version's skill does not drift, so the order in which games were played or recorded does"
            f" not matter. Prior skill N({model.mu:g}, {model.sigma:.2f}\u00b2), performance noise"
            f" \u03b2 = {model.beta:.2f}, draw probability {model.draw_probability:.0%}. mu is the skill estimate and"
            " \u03c3 its uncertainty; the table is ordered by mu \u2212 3\u03c3, a skill the bot has with about 99.9%"
            " confidence, so a bot with few games ranks low until its results make it certain; one with fewer than"
            f" {rules.min_games} games is marked provisional. The leaderboard then checks its order against every"
            " head-to-head result and names any pair it ranks against a significant one."
        )

    def parameters(self) -> Mapping[str, float]:
        return {"mu": self.model.mu, "sigma": self.model.sigma, "beta": self.model.beta,
                "draw_probability": self.model.draw_probability, "drift": 0.0}

    def fit(self, games: Sequence[Ranked]) -> Fit:
        """The batch fit itself (posteriors, messages, sweeps, convergence)."""
        return self._fit(count_games(g.places() for g in games))

    def _fit(self, games: dict[GameKey, int], tolerance: float = TOLERANCE) -> Fit:
        if self._last is not None and self._last[0] == games and self._last[1] == tolerance:
            return self._last[2]  # the leaderboard asks for the ratings, then for the history ending in them
        result = fit(games, self.model, tolerance)
        if not result.converged:
            log.warning("TrueSkill fit of %d distinct games did not converge in %d sweeps (last step %.2g)",
                        len(games), result.sweeps, result.step)
        self._last = (games, tolerance, result)
        return result

    def rate(self, games: Sequence[Ranked], players: Iterable[str] = ()) -> dict[str, Rating]:
        result = self.fit(games)
        prior = trueskill_rating(self.model.mu, self.model.sigma)
        ratings = dict.fromkeys(players, prior)
        ratings.update({bot: trueskill_rating(mu, sigma) for bot, (mu, sigma) in result.posteriors.items()})
        return ratings

    def history(self, games: Sequence[Ranked], points: int = 30) -> dict[str, list[RatingPoint]]:
        """The fit of the first n games (in play order) for up to ``points`` values of n spread evenly up to all of
        them: what the leaderboard said after n games; the last point is ``rate``'s fit of all of them. Each point
        is a fit of its own, so games with many distinct results (big tables) get fewer points.
        """
        total = len(games)
        if total == 0 or points < 1:
            return {}
        every = count_games(g.places() for g in games)
        work = sum(1 if len(key) == 2 else 40 * (len(key) - 1) for key in every)  # TTT's Game for 3+ is slow
        points = max(1, min(points, HISTORY_WORK // max(1, work)))
        ends = sorted({max(1, round(total * (i + 1) / points)) for i in range(points)})
        history: dict[str, list[RatingPoint]] = {}
        counted: dict[GameKey, int] = {}
        done = 0
        for end in ends:
            for key, n in count_games(g.places() for g in games[done:end]).items():
                counted[key] = counted.get(key, 0) + n
            done = end
            result = self._fit(dict(counted), HISTORY_TOLERANCE) if end < total else self._fit(every)
            for bot, (mu, sigma) in sorted(result.posteriors.items()):
                rating = trueskill_rating(mu, sigma)
                history.setdefault(bot, []).append(RatingPoint(end, rating.estimate, rating.low, rating.high))
        return history


class OnlineTrueSkill:
    """The ``trueskill`` package's update, one game at a time, in the order given: for live use, where a rating has
    to move as games finish. ``tau`` is the drift added before each update (0: a fixed bot version does not
    change). Its ratings depend on the order of the games (the last ones weigh most when ``tau`` > 0); the
    leaderboard uses the batch fit (``TrueSkill``) instead.
    """

    def __init__(self, model: Model = DEFAULT_MODEL, tau: float = 0.0) -> None:
        self.env = trueskill.TrueSkill(mu=model.mu, sigma=model.sigma, beta=model.beta, tau=tau,
                                       draw_probability=model.draw_probability)
        self.current: dict[str, trueskill.Rating] = {}

    def update(self, game: Ranked) -> None:
        """Rate one more game (one with fewer than two bots changes nothing)."""
        places = game.places()
        if len(places) < 2:
            return
        bots = sorted(places)
        before = [(self.current.get(bot) or self.env.create_rating(),) for bot in bots]
        after = self.env.rate(before, ranks=[places[bot] for bot in bots])
        for bot, (rating,) in zip(bots, after, strict=True):
            self.current[bot] = rating

    def ratings(self) -> dict[str, Rating]:
        """Each bot's current rating, with the same columns as ``TrueSkill``."""
        return {bot: trueskill_rating(r.mu, r.sigma) for bot, r in self.current.items()}
