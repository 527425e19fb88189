"""TrueSkill over duplicate sessions. Each complete session is one game: its bots are placed by their total chips
over all the session's rotations (equal totals are a draw).

``TrueSkill`` is the leaderboard's rating system: TrueSkill's model fitted to all the sessions at once, as
TrueSkill Through Time does with every session in one time step (``arena.ratings.batch_fit``). A bot version's
skill does not drift, so every session counts the same, and the order in which sessions were played or recorded
cannot change a rating. ``OnlineTrueSkill`` is the classic one-session-at-a-time update of the ``trueskill``
package, for a rating that has to move while a match is played; it depends on the order of the sessions, so the
leaderboard never uses it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import trueskill

from arena.ratings.batch_fit import DEFAULT_MODEL, TOLERANCE, Fit, GameKey, Model, count_games, fit
from arena.ratings.sessions import Session
from arena.ratings.system import Column, Rating, RatingPoint, RatingSystem

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
    title = "TrueSkill, all sessions fitted at once"
    columns = COLUMNS
    sort_key = "conservative"
    estimate_label = f"TrueSkill mu (band: mu \u00b1 {BAND_SIGMAS}\u03c3)"

    def __init__(self, model: Model = DEFAULT_MODEL) -> None:
        self.model = model
        self._last: tuple[dict[GameKey, int], float, Fit] | None = None
        self.method = (
            "Every complete duplicate session is one game: its bots are placed by their total chips over the"
            " session's rotations (equal totals are a draw). TrueSkill's model is fitted to all the sessions at once,"
            " as TrueSkill Through Time does with every session in one time step: a bot version's skill does not"
            " drift, so the order in which sessions were played or recorded does not matter. Prior skill"
            f" N({model.mu:g}, {model.sigma:.2f}\u00b2), performance noise \u03b2 = {model.beta:.2f}, draw probability"
            f" {model.draw_probability:.0%}. mu is the skill estimate and \u03c3 its uncertainty; the table is ordered"
            " by mu \u2212 3\u03c3, a skill the bot has with about 99.9% confidence, so a bot with few sessions ranks"
            " low until its results make it certain. It counts who won each session, not by how much: mbb/hand"
            " does, and the two can disagree (a bot that loses many small pots and wins a few big ones)."
        )

    def parameters(self) -> Mapping[str, float]:
        return {"mu": self.model.mu, "sigma": self.model.sigma, "beta": self.model.beta,
                "draw_probability": self.model.draw_probability, "drift": 0.0}

    def fit(self, sessions: Sequence[Session]) -> Fit:
        """The batch fit itself (posteriors, messages, sweeps, convergence)."""
        return self._fit(count_games(s.places() for s in sessions))

    def _fit(self, games: dict[GameKey, int], tolerance: float = TOLERANCE) -> Fit:
        if self._last is not None and self._last[0] == games and self._last[1] == tolerance:
            return self._last[2]  # the leaderboard asks for the ratings, then for the history ending in them
        result = fit(games, self.model, tolerance)
        if not result.converged:
            log.warning("TrueSkill fit of %d distinct games did not converge in %d sweeps (last step %.2g)",
                        len(games), result.sweeps, result.step)
        self._last = (games, tolerance, result)
        return result

    def rate(self, sessions: Sequence[Session]) -> dict[str, Rating]:
        result = self.fit(sessions)
        return {bot: trueskill_rating(mu, sigma) for bot, (mu, sigma) in result.posteriors.items()}

    def history(self, sessions: Sequence[Session], points: int = 30) -> dict[str, list[RatingPoint]]:
        """The fit of the first n sessions (in play order) for up to ``points`` values of n spread evenly up to all
        of them: what the leaderboard said after n sessions; the last point is ``rate``'s fit of all of them.
        Each point is a fit of its own, so sessions with many distinct results (big tables) get fewer points.
        """
        total = len(sessions)
        if total == 0 or points < 1:
            return {}
        every = count_games(s.places() for s in sessions)
        work = sum(1 if len(key) == 2 else 40 * (len(key) - 1) for key in every)  # TTT's Game for 3+ is slow
        points = max(1, min(points, HISTORY_WORK // max(1, work)))
        ends = sorted({max(1, round(total * (i + 1) / points)) for i in range(points)})
        history: dict[str, list[RatingPoint]] = {}
        games: dict[GameKey, int] = {}
        done = 0
        for end in ends:
            for key, n in count_games(s.places() for s in sessions[done:end]).items():
                games[key] = games.get(key, 0) + n
            done = end
            result = self._fit(dict(games), HISTORY_TOLERANCE) if end < total else self._fit(every)
            for bot, (mu, sigma) in sorted(result.posteriors.items()):
                rating = trueskill_rating(mu, sigma)
                history.setdefault(bot, []).append(RatingPoint(end, rating.estimate, rating.low, rating.high))
        return history


class OnlineTrueSkill:
    """The ``trueskill`` package's update, one session at a time, in the order given: for live use, where a rating
    has to move as sessions finish. ``tau`` is the drift added before each update (0: a fixed bot version does
    not change). Its ratings depend on the order of the sessions (the last ones weigh most when ``tau`` > 0); the
    leaderboard uses the batch fit (``TrueSkill``) instead.
    """

    def __init__(self, model: Model = DEFAULT_MODEL, tau: float = 0.0) -> None:
        self.env = trueskill.TrueSkill(mu=model.mu, sigma=model.sigma, beta=model.beta, tau=tau,
                                       draw_probability=model.draw_probability)
        self.current: dict[str, trueskill.Rating] = {}

    def update(self, session: Session) -> None:
        """Rate one more session (one with fewer than two bots changes nothing)."""
        places = session.places()
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
