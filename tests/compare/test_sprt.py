"""The SPRT itself (arena.ratings.sprt): its formula, its bounds, its guards, and its error rates on simulated
sessions, with fixed seeds."""

from __future__ import annotations

import math
import random

import pytest

from arena.ratings.sprt import (
    DEFAULT_MBB1,
    MIN_SESSIONS,
    SD_FLOOR_MBB,
    Sprt,
    SprtParams,
    Verdict,
    bounds,
    expected_sessions,
    fixed_sessions,
    llr,
    round_sample,
    run_sprt,
)


def test_bounds_are_walds() -> None:
    lower, upper = bounds(0.05, 0.05)
    assert lower == pytest.approx(math.log(0.05 / 0.95))
    assert upper == pytest.approx(math.log(0.95 / 0.05))
    assert bounds(0.01, 0.1) == pytest.approx((math.log(0.1 / 0.99), math.log(0.9 / 0.01)))


def test_llr_is_the_normal_log_likelihood_ratio() -> None:
    """n (M1 - M0)(2 x̄ - M0 - M1) / (2 s²) equals the sum of log N(x; M1, s²) - log N(x; M0, s²)."""
    rng = random.Random(3)
    xs = [rng.gauss(120, 900) for _ in range(37)]
    n, mean, var, m0, m1 = len(xs), sum(xs) / len(xs), 800.0**2, -50.0, 200.0
    direct = sum(((x - m0) ** 2 - (x - m1) ** 2) / (2 * var) for x in xs)
    assert llr(n, mean, var, m0, m1) == pytest.approx(direct)
    assert llr(0, 0.0, var, m0, m1) == 0.0
    with pytest.raises(ValueError):
        llr(3, 1.0, 0.0, m0, m1)


def test_running_test_uses_the_corrected_variance_and_the_formula() -> None:
    rng = random.Random(5)
    test = Sprt(SprtParams(mbb1=DEFAULT_MBB1))
    xs = []
    for _ in range(15):
        x = rng.gauss(300, 4000)
        xs.append(x)
        test.add(x, hands=2)
    mean = sum(xs) / len(xs)
    var = sum((x - mean) ** 2 for x in xs) / (len(xs) - 3)  # 1/s² unbiased for 1/σ² (normal samples)
    assert test.mean == pytest.approx(mean)
    assert test.variance == pytest.approx(var)
    assert test.llr == pytest.approx(llr(len(xs), mean, var, 0.0, DEFAULT_MBB1))
    state = test.state()
    assert state.hands == 30 and state.sessions == 15
    assert state.estimate.low < mean < state.estimate.high


def test_identical_sessions_use_the_variance_floor() -> None:
    """All-zero sessions (identical deterministic bots): the LLR falls by M1² / (2 floor²) a session, past the lower
    bound after 24 sessions with the defaults, so H0 comes at the minimum of 30, never H1."""
    params = SprtParams()
    step = params.mbb1**2 / (2 * SD_FLOOR_MBB**2)
    assert math.ceil(-params.lower / step) == 24
    expected = max(params.min_sessions, 24)
    assert expected == MIN_SESSIONS == 30
    test = run_sprt([0.0] * 1000, params)
    assert test.verdict is Verdict.H0
    assert test.sessions == test.decided_at == expected
    assert test.llr == pytest.approx(-expected * step)


def test_no_decision_before_the_minimum_of_sessions() -> None:
    params = SprtParams(mbb1=100)
    test = Sprt(params)
    for i in range(MIN_SESSIONS - 1):
        assert test.add(5000.0 + i) is Verdict.CONTINUE  # huge and steady: the LLR is far past the upper bound
    assert test.llr > params.upper
    assert test.add(5000.0) is Verdict.H1
    assert test.decided_at == MIN_SESSIONS


def test_the_verdict_is_final() -> None:
    test = run_sprt([2000.0 + 10 * i for i in range(40)], SprtParams(), stop=True)
    assert test.verdict is Verdict.H1
    decided_llr, decided_at = test.llr, test.decided_at
    for _ in range(50):
        test.add(-100000.0)
    assert test.verdict is Verdict.H1 and test.llr == decided_llr and test.decided_at == decided_at
    assert test.sessions == decided_at + 50  # still counted in the estimate


@pytest.mark.parametrize(
    "kwargs",
    [dict(mbb0=10, mbb1=10), dict(mbb0=10, mbb1=5), dict(alpha=0), dict(beta=1), dict(alpha=0.6, beta=0.5),
     dict(sd_floor=0), dict(min_sessions=3), dict(mbb1=math.inf)],
)
def test_bad_parameters(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        SprtParams(**kwargs)  # type: ignore[arg-type]


def test_round_sample() -> None:
    assert round_sample(300.0) == 300.0
    assert round_sample(300.0, [(1000.0, 400.0), (-200.0, -500.0)]) == pytest.approx((300 + 600 + 300) / 3)
    test = Sprt()
    test.add_round(300.0, [(1000.0, 400.0)], hands=6)
    assert test.mean == pytest.approx(450.0) and test.hands == 6
    with pytest.raises(ValueError):
        test.add(math.nan)


def test_fixed_and_expected_lengths() -> None:
    params = SprtParams()
    z = 2 * 1.6448536269514722
    assert fixed_sessions(params, 5000.0) == pytest.approx((z * 5000 / 500) ** 2)
    # Wald: about 5.3 (sd / (M1 - M0))² sessions at mean M1 with alpha = beta = 0.05, and less when far above
    assert expected_sessions(params, 500.0, 5000.0) == pytest.approx(5.3 * 100, rel=0.01)
    assert expected_sessions(params, 2000.0, 5000.0) < expected_sessions(params, 500.0, 5000.0) / 3
    assert expected_sessions(params, 250.0, 5000.0) == pytest.approx(-params.lower * params.upper * 100)


def _simulated_rates(mean: float, sd: float, runs: int, seed: int, heavy: bool) -> tuple[float, float, float]:
    """Rates of H1 and H0 and the mean length, on normal or heavy-tailed sessions of the given mean and standard
    deviation (heavy: 90% of sessions small, 10% of all-in size, the same standard deviation overall)."""
    rng = random.Random(seed)
    params = SprtParams()
    big = sd * math.sqrt((1 - 0.9 * 0.3**2) / 0.1)
    h1 = h0 = sessions = 0
    for _ in range(runs):
        test = Sprt(params)
        while not test.decided and test.sessions < 20000:
            small = not heavy or rng.random() < 0.9
            test.add(mean + rng.gauss(0, (sd * 0.3 if heavy else sd) if small else big))
        h1 += test.verdict is Verdict.H1
        h0 += test.verdict is Verdict.H0
        sessions += test.sessions
    return h1 / runs, h0 / runs, sessions / runs


@pytest.mark.parametrize("heavy", [False, True])
def test_error_rates_on_simulated_sessions(heavy: bool) -> None:
    """Equal bots (mean exactly M0, the hardest case of H0): H1 at most alpha; a candidate better by M1: H0 at
    most beta; and on average far fewer sessions than a fixed-length test with the same alpha and beta needs.
    2,000 runs each with a fixed seed (the rates' standard error is 0.5%)."""
    sd = 1500.0  # sd / (M1 - M0) = 3: about 55 sessions per test
    params = SprtParams()
    h1, _, n_equal = _simulated_rates(0.0, sd, 2000, seed=11, heavy=heavy)
    assert h1 <= params.alpha
    _, h0, n_better = _simulated_rates(params.mbb1, sd, 2000, seed=12, heavy=heavy)
    assert h0 <= params.beta
    fixed = fixed_sessions(params, sd)
    assert n_equal < 0.7 * fixed and n_better < 0.7 * fixed
