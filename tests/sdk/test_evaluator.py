"""The SDK's hand evaluator: its Python fallback gives the C core's value for every pattern of ranks and every flush,
fails as the C core does on bad cards, and is what ``arena_sdk.evaluator`` uses when the C core was not built."""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Iterator
from itertools import combinations, combinations_with_replacement

import pytest

from arena_sdk import _eval, _pyeval
from arena_sdk.evaluator import COMPILED, Category, category_of, evaluate
from tests.sdk.helpers import REPO


def rank_patterns(size: int) -> Iterator[list[int]]:
    """One hand for every multiset of ``size`` ranks (no rank more than four times), suits dealt in turn so that no
    hand holds a flush: every value a hand without a flush can take, by the ranks alone."""
    for ranks in combinations_with_replacement(range(13), size):
        if max(ranks.count(r) for r in set(ranks)) <= 4:
            yield [rank * 4 + i % 4 for i, rank in enumerate(ranks)]


def flush_patterns() -> Iterator[list[int]]:
    """One 7-card hand for every set of 5 to 7 ranks in spades, the other cards deuces and treys of other suits."""
    fillers = [0, 1, 4]  # 2c 2d 3c
    for size in (5, 6, 7):
        for ranks in combinations(range(13), size):
            yield [rank * 4 + 3 for rank in ranks] + fillers[: 7 - size]


@pytest.mark.parametrize("size", [5, 6, 7])
def test_the_python_fallback_gives_the_c_cores_value_for_every_pattern_of_ranks(size: int) -> None:
    hands = list(rank_patterns(size))
    assert len(hands) == {5: 6_175, 6: 18_395, 7: 49_205}[size]
    assert [_pyeval.evaluate(h) for h in hands] == _eval.evaluate_many(hands)


def test_the_python_fallback_gives_the_c_cores_value_for_every_flush_and_straight_flush() -> None:
    hands = list(flush_patterns())
    values = [_pyeval.evaluate(h) for h in hands]
    assert values == _eval.evaluate_many(hands)
    assert {category_of(v) for v in values} == {Category.FLUSH, Category.STRAIGHT_FLUSH}


def test_the_python_fallback_agrees_with_the_c_core_on_random_hands_in_any_order() -> None:
    rng = random.Random(26)
    hands = [rng.sample(range(52), rng.choice((5, 6, 7))) for _ in range(30_000)]
    assert [_pyeval.evaluate(tuple(h)) for h in hands] == _eval.evaluate_many(hands)


@pytest.mark.parametrize(
    "bad",
    [[0, 1, 2, 3], list(range(8)), [0, 1, 2, 3, 52], [0, 1, 2, 3, -1], [0, 1, 2, 3, 2**70], [51, 0, 1, 2, 51],
     [0, 1, 2, 3, "4"], [0, 1, 2, 3, 4.0], [0, 1, 2, 3, None], "AsKsQsJsTs", 12345, None, {0, 1, 2, 3, 4}],
    ids=repr,
)
def test_the_python_fallback_refuses_what_the_c_core_refuses(bad: object) -> None:
    with pytest.raises((TypeError, ValueError)) as c_error:
        _eval.evaluate(bad)  # type: ignore[arg-type]
    with pytest.raises(c_error.type) as py_error:
        _pyeval.evaluate(bad)  # type: ignore[arg-type]
    if "out of range" not in str(c_error.value):  # the C core cannot print an int beyond a C long
        assert str(py_error.value) == str(c_error.value)


def test_evaluate_is_the_c_core_where_it_was_built() -> None:
    assert COMPILED and evaluate is _eval.evaluate  # make install builds it; the referee needs it
    assert _pyeval.CATEGORY_SHIFT == _eval.CATEGORY_SHIFT


def test_without_the_c_core_evaluate_is_the_python_fallback_and_the_equity_bot_plays_the_same() -> None:
    """An SDK installed without a C compiler: the import falls back, and the sample equity bot (its Monte Carlo
    seeded) finds the same equities with either evaluator."""
    script = """
import random, sys
if sys.argv[1] == "python":
    sys.modules["arena_sdk._eval"] = None  # as if the extension had not been built
sys.path.insert(0, "sample_bots/python")
import arena_sdk.evaluator
from arena_sdk.cards import parse_cards
from equity_bot import equity
spots = [(h, b) for h in ("AsAd", "7c2h", "Jh9h", "KcQc") for b in ("", "Th8c3d", "Th8c3dAh", "Th8c3dAh2s")]
print(arena_sdk.evaluator.COMPILED, arena_sdk.evaluator.evaluate.__module__,
      [equity(parse_cards(h), parse_cards(b), 2, 300, random.Random(f"{h}/{b}")) for h, b in spots])
"""
    runs = {how: subprocess.run([sys.executable, "-c", script, how], cwd=REPO, capture_output=True, text=True,
                                check=True, timeout=60).stdout.split(" ", 2) for how in ("c", "python")}
    assert runs["c"][:2] == ["True", "arena_sdk._eval"]
    assert runs["python"][:2] == ["False", "arena_sdk._pyeval"]
    assert runs["python"][2] == runs["c"][2]
