"""Win rates with confidence intervals over duplicate sessions, a head-to-head table, and play statistics."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from arena.ratings.sessions import Session

# Two-sided 95% quantiles of Student's t for 1..30 degrees of freedom; past 30 the normal 1.96 is within 2%.
_T95 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def t95(df: int) -> float:
    """Two-sided 95% quantile of Student's t with ``df`` degrees of freedom."""
    return _T95[df - 1] if 1 <= df <= len(_T95) else 1.96


@dataclass(frozen=True, slots=True)
class WinRate:
    """mbb/hand over duplicate sessions: the mean, its 95% confidence interval, and what it rests on."""

    mean: float
    low: float
    high: float
    sessions: int
    hands: int
    sd: float

    @property
    def significant(self) -> bool:
        """Whether the interval excludes zero."""
        return self.low > 0 or self.high < 0


def win_rate(samples: Sequence[float], hands: int = 0) -> WinRate:
    """Mean and 95% t-interval of per-session win rates (each session one sample). The sums are exactly rounded
    (``math.fsum``), so the result does not depend on the order of the samples, to the last bit."""
    n = len(samples)
    if n == 0:
        return t_interval(0.0, 0.0, 0, hands)
    mean = math.fsum(samples) / n
    sd = math.sqrt(math.fsum((x - mean) ** 2 for x in samples) / (n - 1)) if n > 1 else 0.0
    return t_interval(mean, sd, n, hands)


def t_interval(mean: float, sd: float, n: int, hands: int = 0) -> WinRate:
    """The 95% t-interval of the mean of ``n`` samples whose standard deviation is ``sd`` (unbounded for one)."""
    if n == 0:
        return WinRate(0.0, 0.0, 0.0, 0, hands, 0.0)
    if n == 1:
        return WinRate(mean, -math.inf, math.inf, 1, hands, 0.0)
    half = t95(n - 1) * sd / math.sqrt(n)
    return WinRate(mean, mean - half, mean + half, n, hands, sd)


class RunningRate:
    """``win_rate`` kept up to date one sample at a time (Welford's update): constant work a sample, for live
    lines redrawn as a long match goes (``win_rate`` reads every sample, for results that must not depend on the
    order of the samples)."""

    __slots__ = ("hands", "m2", "mean", "n")

    def __init__(self) -> None:
        self.n = 0
        self.hands = 0
        self.mean = 0.0
        self.m2 = 0.0  # the sum of squared deviations from the mean

    def add(self, sample: float, hands: int = 0) -> None:
        """Count one session's sample, which took ``hands`` hands."""
        self.n += 1
        self.hands += hands
        delta = sample - self.mean
        self.mean += delta / self.n
        self.m2 += delta * (sample - self.mean)

    def rate(self) -> WinRate:
        """The mean and 95% t-interval so far."""
        sd = math.sqrt(max(self.m2, 0.0) / (self.n - 1)) if self.n > 1 else 0.0
        return t_interval(self.mean, sd, self.n, self.hands)


def win_rates(sessions: Sequence[Session]) -> dict[str, WinRate]:
    """Each bot's mbb/hand with its 95% CI, over the sessions it played."""
    samples: dict[str, list[float]] = defaultdict(list)
    hands: dict[str, int] = defaultdict(int)
    for session in sessions:
        for bot in session.chips:
            samples[bot].append(session.mbb_per_hand(bot))
            hands[bot] += session.hands[bot]
    return {bot: win_rate(values, hands[bot]) for bot, values in samples.items()}


def crosstable(sessions: Sequence[Session]) -> dict[str, dict[str, WinRate]]:
    """``table[a][b]``: a's mbb/hand with 95% CI over the sessions where a and b sat together."""
    samples: dict[tuple[str, str], list[float]] = defaultdict(list)
    hands: dict[tuple[str, str], int] = defaultdict(int)
    for session in sessions:
        for a in session.chips:
            for b in session.chips:
                if a != b:
                    samples[a, b].append(session.mbb_per_hand(a))
                    hands[a, b] += session.hands[a]
    table: dict[str, dict[str, WinRate]] = defaultdict(dict)
    for (a, b), values in samples.items():
        table[a][b] = win_rate(values, hands[a, b])
    return dict(table)
