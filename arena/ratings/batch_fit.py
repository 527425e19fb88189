"""TrueSkill fitted to every game at once: the fixed point of TrueSkill Through Time with all games in one time step.

The model is TrueSkill's, as ``trueskillthroughtime`` (TTT) states it: each player's skill has a Gaussian prior,
a performance is the skill plus Gaussian noise (``beta``), and a game's result says how the performances are
ordered, with equal results a draw inside a margin set by the draw probability. With every game in one time step
and no drift, TTT's answer is the fixed point of expectation propagation over the games of that step: each game
sends each of its players a Gaussian message, the product of a player's prior and messages is its posterior, and a
game's message is recomputed from the posterior without it (the "cavity") until nothing changes. That fixed point
depends on the set of games, not on the order they are listed in.

TTT computes it by sweeping over the games one by one, which is far too slow here. The likelihood of who beat whom
does not change when every skill moves by the same amount; only the weak prior pins that common level, and a sweep
corrects it by a tiny fraction. Measured on this project's machine: 7,500 heads-up sessions (6 bots, 15 pairings,
500 sessions each) take TTT about half a second a sweep, and after 41 sweeps every mu is still about 3.9 too
high; for the 900 sessions of ``make demo`` every mu is still 2e-4 off after 5,000 sweeps (11 minutes). This
module computes the same fixed point with the same game messages (``trueskillthroughtime.Game``, or its
two-player formulas), in a tenth of a second for either:

- Identical games (same players, same order of finish) are one game with a count: at the fixed point they send
  the same message, so a sweep updates one message and counts it that many times. Updating many copies at once
  can overshoot into a lasting two-cycle (a long winning streak does), so a game whose message swings back by
  more than 90% of its last swing is damped (its step halved); damping changes the path, not the fixed point.
- The slow common level of each group of connected players is set directly, to where the fixed point has it. At a
  fixed point each game's posterior is its cavity times its message, so with leak_g = sum over the game's players of
  pi_cavity * (mu_posterior - mu_cavity) = sum of (tau_message - pi_message * mu_posterior), summing over all games
  with their counts n_g gives sum_g n_g * leak_g = sum_i (tau_i - tau_0) - sum_i (pi_i - pi_0) * mu_i = pi_0 * sum_i
  mu_i - k * tau_0: the k players of a group (all with the prior N(mu_0, 1/pi_0)) have sum_i mu_i = k * mu_0 +
  (sum_g n_g * leak_g) / pi_0. A game's leak depends only on the differences of its cavity means and on the
  variances, which settle fast, not on the slow level. For two players it is 0: a result says nothing about the two
  players' common level, and for independent Gaussians the precision-weighted mean is independent of their
  difference, so TTT's exact two-player projection keeps it. For more players TTT's messages come from an inner
  iteration, which leaks a little; the level follows from each game's latest leak.
- Games are swept in a canonical (sorted) order, so the arithmetic, not only its limit, is the same whatever order
  the games came in. The iteration stops when a plain sweep moves no mean or standard deviation by more than the
  tolerance (scaled by the smallest damping): at the fixed point of the plain iteration, which is TTT's.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import trueskillthroughtime as ttt

Player = str
GameKey = tuple[tuple[Player, int], ...]
"""A game: (player, place) pairs sorted by player; place 0 is first, equal places are a draw."""

TOLERANCE = 1e-10
MAX_SWEEPS = 5_000
MIN_DAMPING = 1 / 64
SWING = 0.81  # squared: a swing back of more than 90% of the last one
ADAPT_ABOVE = 1e-7  # below this the swings are rounding, not overshoot


@dataclass(frozen=True, slots=True)
class Model:
    """TrueSkill's parameters: the prior N(mu, sigma²) of every skill, the performance noise ``beta``, and the
    probability of a draw between two evenly matched players (it sets the draw margin). The defaults are the
    ``trueskill`` package's (mu 25, sigma 25/3, beta 25/6) with a 10% draw probability.
    """

    mu: float = 25.0
    sigma: float = 25.0 / 3.0
    beta: float = 25.0 / 6.0
    draw_probability: float = 0.10


DEFAULT_MODEL = Model()


def game_key(places: Mapping[Player, int]) -> GameKey:
    """The canonical form of a game from each player's place (0 first, equal places drawn)."""
    return tuple(sorted(places.items()))


def count_games(games: Iterable[Mapping[Player, int]]) -> dict[GameKey, int]:
    """How often each distinct game occurs (games with fewer than two players are left out: they say nothing)."""
    counts: dict[GameKey, int] = {}
    for places in games:
        if len(places) >= 2:
            key = game_key(places)
            counts[key] = counts.get(key, 0) + 1
    return counts


@dataclass(slots=True)
class Fit:
    """The result of ``fit``: each player's posterior (mu, sigma), each game's message to each of its players in
    natural parameters (tau, pi), and how the iteration went (sweeps, the last sweep's largest move).
    """

    posteriors: dict[Player, tuple[float, float]]
    messages: dict[GameKey, list[tuple[float, float]]]
    sweeps: int
    step: float
    converged: bool


def _components(keys: list[GameKey]) -> list[list[Player]]:
    """Groups of players connected through games (each sorted; the groups ordered by their first player)."""
    parent: dict[Player, Player] = {}

    def find(p: Player) -> Player:
        while parent[p] != p:
            parent[p] = parent[parent[p]]
            p = parent[p]
        return p

    for key in keys:
        for p, _ in key:
            parent.setdefault(p, p)
        first = find(key[0][0])
        for p, _ in key[1:]:
            root = find(p)
            if root != first:
                parent[max(root, first)] = min(root, first)
                first = min(root, first)
    groups: dict[Player, list[Player]] = {}
    for p in sorted(parent):
        groups.setdefault(find(p), []).append(p)
    return sorted(groups.values())


def _messages(key: GameKey, cavity: list[tuple[float, float]], model: Model) -> list[tuple[float, float]]:
    """The game's new message to each player (tau, pi), given each player's cavity (tau, pi): TTT's own Game, or
    for two players the same formulas without its objects (``_heads_up``; a test holds them to TTT's)."""
    if len(key) == 2:
        return _heads_up(key, cavity, model)
    # The teams go to TTT in finishing order: trueskillthroughtime 1.1 hands a game of three or more teams its
    # messages back in the wrong order when sorting them by result is not its own inverse (its likelihood_teams
    # returns t[o[e]] where team e's is t[o^-1[e]]), e.g. places (0, 2, 1); in finishing order o is the identity.
    order = sorted(range(len(key)), key=lambda i: key[i][1])  # stable: tied players keep their order
    teams = [[ttt.Player(ttt.Gaussian(cavity[i][0] / cavity[i][1], cavity[i][1] ** -0.5), model.beta, 0.0)]
             for i in order]
    game = ttt.Game(teams, [-key[i][1] for i in order], model.draw_probability)
    out = [(0.0, 0.0)] * len(key)
    for position, i in enumerate(order):
        (likelihood,) = game.likelihoods[position]
        out[i] = (float(likelihood.tau), float(likelihood.pi))
    return out


@functools.cache
def _draw_margin(draw_probability: float, beta: float) -> float:
    """TTT's draw margin of a game between two single players."""
    if draw_probability == 0.0:
        return 0.0
    return float(ttt.compute_margin(draw_probability, math.sqrt(beta**2 + beta**2)))


def _heads_up(key: GameKey, cavity: list[tuple[float, float]], model: Model) -> list[tuple[float, float]]:
    """TTT's ``Game.likelihood_analitico`` for two players: the performance difference (first place minus second)
    is truncated by the result, and each player gets the message that moves its cavity to the truncated moments."""
    (_, place_a), (_, place_b) = key
    (tau_a, pi_a), (tau_b, pi_b) = cavity
    first, second = (1, 0) if place_b < place_a else (0, 1)  # a draw keeps the given order, as TTT's sort does
    mus = (tau_a / pi_a, tau_b / pi_b)
    variances = (1.0 / pi_a, 1.0 / pi_b)
    beta2 = model.beta**2
    d_mu = mus[first] - mus[second]
    d_var = variances[first] + beta2 + variances[second] + beta2
    d_sigma = math.sqrt(d_var)
    mu_trunc, sigma_trunc = ttt.trunc(d_mu, d_sigma, _draw_margin(model.draw_probability, model.beta),
                                      place_a == place_b)
    if d_sigma == sigma_trunc:
        return [(0.0, 0.0), (0.0, 0.0)]  # the result says nothing: flat messages
    if not 0.0 < sigma_trunc < d_sigma:
        raise ValueError("truncation outside its range (a cavity far in the tail)")
    delta = (d_var * mu_trunc - sigma_trunc**2 * d_mu) / (d_var - sigma_trunc**2)
    theta2 = (sigma_trunc**2 * d_var) / (d_var - sigma_trunc**2)
    out = [(0.0, 0.0), (0.0, 0.0)]
    for rank, player in enumerate((first, second)):
        mu = mus[player] + (delta - d_mu) * (-1.0 if rank == 1 else 1.0)
        pi = 1.0 / (theta2 + d_var - variances[player])
        out[player] = (mu * pi, pi)
    return out


def fit(
    games: Mapping[GameKey, int],
    model: Model = DEFAULT_MODEL,
    tolerance: float = TOLERANCE,
    max_sweeps: int = MAX_SWEEPS,
) -> Fit:
    """The TrueSkill posterior of every player given all ``games`` (a count per distinct game) at once."""
    keys = sorted(k for k, n in games.items() if n > 0 and len(k) >= 2)
    counts = [games[k] for k in keys]
    pi0 = model.sigma ** -2
    tau0 = model.mu * pi0
    messages = [[(0.0, 0.0)] * len(k) for k in keys]
    players = sorted({p for k in keys for p, _ in k})
    tau = dict.fromkeys(players, tau0)
    pi = dict.fromkeys(players, pi0)

    groups = []  # each group of connected players, with the indexes of its games
    for members in _components(keys):
        inside = set(members)
        groups.append((members, [i for i, k in enumerate(keys) if k[0][0] in inside]))
    damping = [1.0] * len(keys)
    leaks = [0.0] * len(keys)
    residuals: list[list[float] | None] = [None] * len(keys)
    step = math.inf
    failed = False
    sweeps = 0
    while sweeps < max_sweeps:
        adapt = step > ADAPT_ABOVE
        old = {p: (tau[p] / pi[p], pi[p] ** -0.5) for p in players}
        failed = False
        for i, (key, n, message) in enumerate(zip(keys, counts, messages, strict=True)):
            cavity = [(tau[p] - t, pi[p] - q) for (p, _), (t, q) in zip(key, message, strict=True)]
            try:
                new = _messages(key, cavity, model)
            except (ArithmeticError, ValueError):
                failed = True  # TTT's tail formulas can fail far from the fixed point: leave this game for a sweep
                continue
            residual = [x for (t, q), (nt, nq) in zip(message, new, strict=True) for x in (nt - t, nq - q)]
            leaks[i] = _leak(cavity, new) if len(key) > 2 else 0.0  # two players: 0 exactly (but for rounding)
            if adapt:
                damping[i] = _damping(damping[i], residual, residuals[i])
            residuals[i] = residual
            a = damping[i]
            for j, ((p, _), (t, q), (nt, nq)) in enumerate(zip(key, message, new, strict=True)):
                dt, dq = a * (nt - t), a * (nq - q)
                tau[p] += n * dt
                pi[p] += n * dq
                message[j] = (t + dt, q + dq)
        sweeps += 1
        step = 0.0
        for p in players:
            mu, sigma = tau[p] / pi[p], pi[p] ** -0.5
            step = max(step, abs(mu - old[p][0]), abs(sigma - old[p][1]))
        # A damped sweep moves only part of the way: compare what it would have moved with the tolerance.
        if step < tolerance * min(damping, default=1.0) and not failed:
            break
        for members, indexes in groups:
            level = sum(tau[p] / pi[p] for p in members) / len(members)
            leak = sum(counts[i] * leaks[i] for i in indexes)
            gap = model.mu + leak / (len(members) * pi0) - level
            _shift(members, indexes, gap, keys, counts, messages, tau, pi, pi0)
    converged = step < tolerance * min(damping, default=1.0) and not failed
    posteriors = {p: (tau[p] / pi[p], pi[p] ** -0.5) for p in players}
    return Fit(posteriors, dict(zip(keys, messages, strict=True)), sweeps, step, converged)


def _leak(cavity: list[tuple[float, float]], new: list[tuple[float, float]]) -> float:
    """How far a game's update moves the cavity-precision-weighted sum of its players' means: 0 for an exact
    projection, as TTT's two-player formulas are; not quite 0 for its games of more players. It depends only on
    the differences of the cavity means and on the variances, not on their common level."""
    return sum((nt - nq * ct / cp) * cp / (cp + nq) for (ct, cp), (nt, nq) in zip(cavity, new, strict=True))


def _damping(damping: float, residual: list[float], previous: list[float] | None) -> float:
    """Halve a game's damping when its message swings back by more than 90% of its last swing: a lasting
    two-cycle, which many identical games updated at once can fall into (a long winning streak does).
    """
    if previous is None:
        return damping
    dot = sum(x * y for x, y in zip(residual, previous, strict=True))
    if dot < 0 and sum(x * x for x in residual) > SWING * sum(y * y for y in previous):
        return max(damping / 2, MIN_DAMPING)
    return damping


def _shift(
    members: list[Player],
    indexes: list[int],
    gap: float,
    keys: list[GameKey],
    counts: list[int],
    messages: list[list[tuple[float, float]]],
    tau: dict[Player, float],
    pi: dict[Player, float],
    pi0: float,
) -> None:
    """Move the mean of a group's posterior means by ``gap``, by shifting the means of its games' messages (a
    player's posterior mean moves by the share of its precision that comes from games)."""
    gain = sum(1.0 - pi0 / pi[p] for p in members) / len(members)
    if gap == 0.0 or gain <= 0.0:
        return
    shift = gap / gain
    for i in indexes:
        message = messages[i]
        for j, ((p, _), (t, q)) in enumerate(zip(keys[i], message, strict=True)):
            message[j] = (t + q * shift, q)
            tau[p] += counts[i] * q * shift
