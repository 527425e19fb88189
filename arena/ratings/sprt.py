"""A sequential probability ratio test (SPRT) for "is the candidate better than the baseline?", over duplicate
sessions, stopping as soon as the data allow.

The sample
----------
One duplicate session (one deal, played once with each bot in each seat, RULES.md R11.2) is one sample: the
candidate's chips over the session's hands, divided by the hands and the big blind, times 1000, i.e. its win rate
in mbb/hand. The hands of a session are not independent (they share the cards) but the sessions are: this is what
fishtest does with game pairs (the same opening played with the colours swapped). When reference bots take part,
a *round* (one deal) holds the head-to-head session and, for each reference bot R, a session candidate vs R and a
session baseline vs R on the same cards; the round's sample is the mean of the head-to-head win rate and of each
difference ``(candidate vs R) - (baseline vs R)`` (``round_sample``). Under an additive model of strength (the
expected win rate of X against Y is s_X - s_Y, as with Elo) every one of these terms has the same expectation
s_candidate - s_baseline, so they measure one number; averaging them within the round keeps the rounds
independent.

The test
--------
H0: mean <= M0 against H1: mean >= M1 (M0 < M1; by default M0 = 0 and M1 = 500 mbb/hand). For normal samples of
variance s², the log-likelihood ratio of mean M1 against mean M0 after n samples with average x̄ is

    LLR = sum_i [(x_i - M0)² - (x_i - M1)²] / (2 s²) = n (M1 - M0) (2 x̄ - M0 - M1) / (2 s²)

and the *generalized* SPRT plugs in the sample variance for the unknown s². This is the normal approximation
fishtest (the Stockfish testing framework) uses for its game pairs: function ``LLR_alt2`` in
``server/fishtest/stats/LLRcalc.py``, whose docstring cites Michel Van den Bergh's derivation,
http://hardy.uhasselt.be/Fishtest/GSPRT_approximation.pdf. Wald's bounds (A. Wald, "Sequential Tests of
Statistical Hypotheses", Ann. Math. Statist. 16 (1945)) decide:

    LLR <= ln(beta / (1 - alpha))   accept H0 (the candidate is not better)
    LLR >= ln((1 - beta) / alpha)   accept H1 (the candidate is better)

so that a candidate whose true mean is <= M0 is declared better with probability about alpha or less, and one
whose mean is >= M1 is declared not better with probability about beta or less. "About": Wald's bounds are exact
only for a continuous random walk with a known variance; the discrete steps make the test a little more cautious,
the estimated variance a little bolder (see the guards).

Three guards
------------
* The variance estimate. The LLR is proportional to 1/s², and for normal samples 1/s² (s² the unbiased variance)
  overestimates 1/σ² by the factor (n - 1)/(n - 3), the mean of an inverse chi-square: a test that has just seen
  a run of similar sessions is bolder than it should be. So s² here is the sum of squared deviations divided by
  n - 3 (by 1 while n <= 4), whose inverse is unbiased. (fishtest divides by n; over its tens of thousands of game
  pairs the difference is nothing, over the few dozen sessions a clear poker result needs it is not.)
* The variance floor. Two deterministic bots that play alike give exactly 0 every session, so s² = 0 and the
  formula divides by zero; more generally a short run of near-equal sessions makes s² tiny and the LLR huge. The
  variance used is ``max(s², sd_floor²)`` with ``sd_floor`` = 1000 mbb/hand (one big blind per hand). That is the
  limit the LLR takes when the spread is "at most one big blind per hand": all-equal samples then move the LLR
  by n (M1 - M0)(2 x̄ - M0 - M1) / (2 * 1000²), -0.125 per session for x̄ = 0 with the defaults: the LLR of
  identical deterministic bots passes the lower bound after 24 sessions, and H0 is accepted at ``min_sessions``
  (30 sessions, 60 hands). The floor is far below any spread measured between two different bots (4,000 to 70,000
  mbb/hand per session for the sample bots at 200-big-blind stacks), so it never speeds a real test up; it only
  slows down decisions resting on too little variation.
* A minimum of ``min_sessions`` (default 30) sessions before any decision. Poker sessions are heavy-tailed (a
  few all-in swings carry most of the variance), so over a handful of sessions the sample variance is usually far
  too small and the normal approximation overconfident. The price is 60 hands before any verdict.

With these guards, simulated tests with the true mean exactly at M0 (the hardest case of H0: two equal bots)
accepted H1 in 3.7% to 5.6% of 3,000 runs each, for normal sessions and for sessions resampled from real
equal-strength bot pairs (random against random, the heaviest tails; equity against calling station), with sd / M1
from 3 to 10: alpha within the simulations' precision, where the plain plug-in (variance over n, no minimum) gave
up to 12%. Bot-against-itself results, mostly exact zeros, are far safer (under 2.5%).

Why M1 = 500 mbb/hand by default
--------------------------------
The expected number of sessions at mean M1 is about 5.3 (sd / (M1 - M0))² for alpha = beta = 0.05 (Wald's
approximation, ``expected_sessions``): the cost grows with the square of sd / M1. The per-session spread of heads-up
duplicate poker with 200-big-blind stacks is large: measured 4,000 mbb/hand for the equity bot against the calling
station, 13,000 for two equity bots of different Monte Carlo depth, 60,000 against the random bot. With M1 = 100
(10bb/100, a big edge by human standards) the test would need ~17,000 hands at sd 4,000 and ~180,000 at sd 13,000:
no CI job waits for that. M1 = 500 (half a big blind per hand) decides in ~700 and ~7,000 hands respectively. Bots
whose sessions vary less (or authors with more time) should lower ``--mbb1``; the indifference zone between M0 and
M1 is where either verdict is acceptable, and its width is the price of a short test.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import NormalDist

from arena.ratings.estimators import Estimator
from arena.ratings.sessions import bot_key, load_sessions
from arena.ratings.stats import RunningRate, WinRate, win_rate
from arena.records.comparisons import ComparisonRole, comparison
from arena.records.db import Database
from arena.records.queries import participants

DEFAULT_MBB0 = 0.0
DEFAULT_MBB1 = 500.0
DEFAULT_ALPHA = 0.05
DEFAULT_BETA = 0.05
SD_FLOOR_MBB = 1000.0
MIN_SESSIONS = 30


class Verdict(enum.StrEnum):
    """Where the test stands: still running, or which hypothesis it accepted."""

    CONTINUE = "continue"
    H0 = "H0"
    H1 = "H1"


@dataclass(frozen=True, slots=True)
class SprtParams:
    """The hypotheses (mbb/hand), the error rates, and the two guards (see the module's documentation)."""

    mbb0: float = DEFAULT_MBB0
    mbb1: float = DEFAULT_MBB1
    alpha: float = DEFAULT_ALPHA
    beta: float = DEFAULT_BETA
    sd_floor: float = SD_FLOOR_MBB
    min_sessions: int = MIN_SESSIONS

    def __post_init__(self) -> None:
        if not (math.isfinite(self.mbb0) and math.isfinite(self.mbb1)) or self.mbb1 <= self.mbb0:
            raise ValueError(f"need M0 < M1, got M0 = {self.mbb0}, M1 = {self.mbb1}")
        if not (0 < self.alpha < 1 and 0 < self.beta < 1 and self.alpha + self.beta < 1):
            raise ValueError(f"need 0 < alpha, beta and alpha + beta < 1, got {self.alpha}, {self.beta}")
        if not self.sd_floor > 0:
            raise ValueError(f"the standard-deviation floor must be positive, got {self.sd_floor}")
        if self.min_sessions < 4:
            raise ValueError(f"at least four sessions are needed before a decision, got {self.min_sessions}")

    @property
    def lower(self) -> float:
        """ln(beta / (1 - alpha)): at or below it, H0 is accepted."""
        return bounds(self.alpha, self.beta)[0]

    @property
    def upper(self) -> float:
        """ln((1 - beta) / alpha): at or above it, H1 is accepted."""
        return bounds(self.alpha, self.beta)[1]


def bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Wald's decision bounds on the LLR: (ln(beta / (1 - alpha)), ln((1 - beta) / alpha))."""
    return math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)


def llr(n: int, mean: float, variance: float, mbb0: float, mbb1: float) -> float:
    """n (M1 - M0)(2 x̄ - M0 - M1) / (2 s²): the normal-approximation GSPRT log-likelihood ratio of H1 over H0."""
    if n == 0:
        return 0.0
    if variance <= 0:
        raise ValueError("the variance must be positive (apply the floor first)")
    return n * (mbb1 - mbb0) * (2 * mean - mbb0 - mbb1) / (2 * variance)


def round_sample(head_to_head: float, references: Sequence[tuple[float, float]] = ()) -> float:
    """One round's sample: the mean of the head-to-head win rate and of each reference bot's
    (candidate vs R) - (baseline vs R) difference, all in mbb/hand (see the module's documentation)."""
    terms = [head_to_head, *(candidate - baseline for candidate, baseline in references)]
    return sum(terms) / len(terms)


@dataclass(frozen=True, slots=True)
class SprtState:
    """A snapshot of the test: samples so far, their mean and variance (the floored one the LLR used), the LLR and
    its bounds, the verdict, and the 95% t-interval of the mean."""

    sessions: int
    hands: int
    mean: float
    variance: float
    llr: float
    lower: float
    upper: float
    verdict: Verdict
    estimate: WinRate


class Sprt:
    """The running test: ``add`` one sample per duplicate session (or round), read the verdict.

    Once the LLR has crossed a bound the verdict is final: later samples are still counted in the estimate (they
    may arrive from hands already in play) but change neither the verdict nor the LLR it was decided on.
    """

    def __init__(self, params: SprtParams | None = None) -> None:
        self.params = params if params is not None else SprtParams()
        self.samples: list[float] = []
        self.verdict = Verdict.CONTINUE
        self.llr = 0.0
        self.decided_at = 0  # sessions when the verdict was reached
        self._running = RunningRate()  # Welford's running mean and sum of squared deviations

    @property
    def decided(self) -> bool:
        """Whether a hypothesis has been accepted."""
        return self.verdict is not Verdict.CONTINUE

    @property
    def hands(self) -> int:
        """Hands the samples so far took."""
        return self._running.hands

    @property
    def sessions(self) -> int:
        """Samples so far."""
        return len(self.samples)

    @property
    def mean(self) -> float:
        """The mean sample (mbb/hand)."""
        return self._running.mean

    @property
    def variance(self) -> float:
        """The s² of the LLR: the sum of squared deviations over n - 3 (over 1 while n <= 4), then floored."""
        n = len(self.samples)
        raw = self._running.m2 / max(n - 3, 1) if n > 1 else 0.0
        return max(raw, self.params.sd_floor**2)

    def add(self, sample: float, hands: int = 0) -> Verdict:
        """Count one session's sample (mbb/hand) that took ``hands`` hands; return the verdict."""
        if not math.isfinite(sample):
            raise ValueError(f"a sample must be a finite number, got {sample}")
        self.samples.append(sample)
        self._running.add(sample, hands)
        n = len(self.samples)
        if self.decided:
            return self.verdict
        p = self.params
        self.llr = llr(n, self._running.mean, self.variance, p.mbb0, p.mbb1)
        if n >= p.min_sessions:
            if self.llr >= p.upper:
                self.verdict = Verdict.H1
            elif self.llr <= p.lower:
                self.verdict = Verdict.H0
            if self.decided:
                self.decided_at = n
        return self.verdict

    def add_round(self, head_to_head: float, references: Sequence[tuple[float, float]] = (), hands: int = 0) -> Verdict:
        """Count one round (see ``round_sample``) that took ``hands`` hands; return the verdict."""
        return self.add(round_sample(head_to_head, references), hands)

    def running_estimate(self) -> WinRate:
        """The estimate of ``state`` from the running mean and spread: constant time, for a live line (``state``
        sums every sample exactly, for the report)."""
        return self._running.rate()

    def state(self) -> SprtState:
        """Where the test stands."""
        return SprtState(
            self.sessions, self.hands, self.mean, self.variance, self.llr, self.params.lower, self.params.upper,
            self.verdict, win_rate(self.samples, self.hands),
        )


def run_sprt(samples: Iterable[float], params: SprtParams | None = None, stop: bool = True) -> Sprt:
    """Feed ``samples`` in order (stopping at the decision when ``stop``); the test as it ends."""
    test = Sprt(params)
    for sample in samples:
        if test.add(sample) is not Verdict.CONTINUE and stop:
            break
    return test


_Z = NormalDist()


def fixed_sessions(params: SprtParams, sd: float) -> float:
    """Sessions a fixed-length test needs for the same job: a one-sided z-test of M0 against M1 with the same
    alpha and beta, n = ((z_(1-alpha) + z_(1-beta)) sd / (M1 - M0))²."""
    z = _Z.inv_cdf(1 - params.alpha) + _Z.inv_cdf(1 - params.beta)
    return (z * sd / (params.mbb1 - params.mbb0)) ** 2


def expected_sessions(params: SprtParams, mean: float, sd: float) -> float:
    """Wald's approximation of the SPRT's average length when the true mean is ``mean`` and the spread ``sd``
    (known variance, no overshoot, no minimum): E[N] = E[LLR at the end] / (drift per session)."""
    a, b = params.lower, params.upper
    delta = params.mbb1 - params.mbb0
    drift = delta * (2 * mean - params.mbb0 - params.mbb1) / (2 * sd * sd)
    if abs(drift) < 1e-12:  # at the midpoint: E[N] = -a b / (variance of one step)
        return -a * b / (delta * delta / (sd * sd))
    # probability of ending at the upper bound for a Brownian motion with this drift and step variance
    step_var = delta * delta / (sd * sd)
    h = -2 * drift / step_var
    p_upper = (1 - math.exp(h * a)) / (math.exp(h * b) - math.exp(h * a))
    return (p_upper * b + (1 - p_upper) * a) / drift


# ------------------------------------------------------------------------------- re-verifying from the database


@dataclass(frozen=True, slots=True)
class RecordedComparison:
    """A comparison as the database holds it: who played, and every complete round in deal order
    (head-to-head mbb/hand, then (candidate, baseline) mbb/hand against each reference bot, and the hands)."""

    comparison_id: str
    candidate: str
    baseline: str
    references: tuple[str, ...]
    rounds: tuple[tuple[float, tuple[tuple[float, float], ...], int], ...]
    match_ids: tuple[str, ...]


def recorded_comparison(db: Database, comparison_id: str, estimator: Estimator = Estimator.RAW) -> RecordedComparison:
    """Rebuild a comparison's rounds from its recorded hands (its matches, by the role each was recorded with:
    arena.records.comparisons); a round counts only if its deal was recorded complete in every match, as the live
    test counted it; with ``estimator``'s payoffs."""
    recorded = comparison(db, comparison_id)
    h2h = recorded.role(ComparisonRole.HEAD_TO_HEAD) if recorded is not None else None
    if recorded is None or h2h is None:
        raise KeyError(f"no comparison {comparison_id!r} in {db.path}")
    numbers = sorted({m.reference for m in recorded.matches if m.reference})
    pairs = {k: (recorded.role(ComparisonRole.CANDIDATE, k), recorded.role(ComparisonRole.BASELINE, k))
             for k in numbers}
    if numbers != list(range(1, len(numbers) + 1)) or any(None in pair for pair in pairs.values()):
        raise ValueError(f"comparison {comparison_id!r}: incomplete set of reference matches "
                         f"{sorted(m.match_id for m in recorded.matches)}")
    ordered = [h2h] + [str(match_id) for k in numbers for match_id in pairs[k]]
    keys = {m: [bot_key(n, v) for n, v in participants(db, m)] for m in ordered}
    candidate, baseline = keys[h2h]
    references = tuple(keys[ordered[2 * k - 1]][1] for k in numbers)
    firsts = [candidate] + [who for _ in numbers for who in (candidate, baseline)]
    sessions = [{s.deal: s for s in load_sessions(db, [m], estimator=estimator)} for m in ordered]
    rounds = []
    deal = 0
    while all(deal in by_deal for by_deal in sessions):
        found_sessions = [by_deal[deal] for by_deal in sessions]
        rates = [s.mbb_per_hand(first) for s, first in zip(found_sessions, firsts, strict=True)]
        against = tuple((rates[1 + 2 * k], rates[2 + 2 * k]) for k in range(len(numbers)))
        rounds.append((rates[0], against, sum(s.hands[first] for s, first in zip(found_sessions, firsts, strict=True))))
        deal += 1
    return RecordedComparison(comparison_id, candidate, baseline, references, tuple(rounds), tuple(ordered))


def replay_comparison(recorded: RecordedComparison, params: SprtParams | None = None) -> Sprt:
    """The test run again over the recorded rounds, stopping where the live test stopped: the same samples in the
    same order give the same LLR to the last bit, so the same verdict after the same number of rounds."""
    test = Sprt(params)
    for head_to_head, references, hands in recorded.rounds:
        if test.add_round(head_to_head, references, hands) is not Verdict.CONTINUE:
            break
    return test
