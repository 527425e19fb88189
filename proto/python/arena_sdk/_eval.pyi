"""Type stub for the C hand evaluator core (proto/python/arena_sdk/_eval.c)."""

from collections.abc import Iterable, Sequence

CATEGORY_SHIFT: int
MAX_VALUE: int

def evaluate(cards: Sequence[int], /) -> int:
    """Value of the best five-card hand among 5, 6 or 7 distinct cards: higher is stronger, equal ties."""

def evaluate_many(hands: Iterable[Sequence[int]], /) -> list[int]:
    """List of ``evaluate(hand)`` for each hand, in one C call."""

def category_counts(n: int, /) -> tuple[int, ...]:
    """Counts by category (9 entries) of all n-card hands, n = 5, 6 or 7, enumerated in C."""

def category_counts_7() -> tuple[int, ...]:
    """Counts by category (9 entries) of all 133,784,560 seven-card hands, enumerated in C."""

def value_histogram(n: int, /) -> dict[int, int]:
    """Number of n-card hands (n = 5, 6 or 7) for each hand value that occurs."""

def runout_orders(holes: Sequence[Sequence[int]], board: Sequence[int], samples: int, seed: int, /
                  ) -> dict[tuple[int, ...], int]:
    """How often each order of finish (per player: players with a strictly better hand) occurs over the ways to
    complete the board: all of them, or ``samples`` uniform draws seeded by ``seed`` when there are more."""

def runout_shares(holes: Sequence[Sequence[int]], board: Sequence[int], samples: int, seed: int, /
                  ) -> tuple[float, ...]:
    """Each player's expected share of a pot they all contest, from ``runout_orders``' counts (same arguments): over
    its orders in order, ``count / total / winners`` to each of an order's winners."""

def runout_strengths_wrong() -> int:
    """How many seven-card hands runout_orders' strength tables order differently from ``evaluate`` (0: none)."""

def load_preflop_table(data: bytes, /) -> None:
    """Keep ``data`` (arena_sdk/preflop_headsup.bin, decompressed) for ``headsup_preflop``; ValueError if malformed."""

def headsup_preflop(a: Sequence[int], b: Sequence[int], /) -> tuple[int, int, int]:
    """Of all 1,712,304 boards, how many ``a`` wins, ``b`` wins and they tie, from the loaded table."""
