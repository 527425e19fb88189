"""Heads-up pre-flop equity, exact: how two hands of hole cards end over all 1,712,304 boards, read from a table of
the 47,008 match-ups that differ other than by their suits' names (``preflop_headsup.bin``, counted once by
``tools/preflop_table.py``), in about a microsecond where counting the boards takes 40 ms.

``headsup_preflop(a, b)`` gives the boards ``a`` wins, ``b`` wins and they tie; ``headsup_orders`` the same in
``runout_orders``' form. The table is read from the package the first time either is called. Both need the
compiled evaluator (``arena_sdk.evaluator.COMPILED``).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from importlib import resources

from arena_sdk import _eval

BOARDS = 1_712_304  # C(48, 5): the boards of a heads-up pre-flop match-up
TABLE = "preflop_headsup.bin"

__all__ = ["BOARDS", "headsup_orders", "headsup_preflop"]

_loaded = False


def _load() -> None:
    global _loaded
    _eval.load_preflop_table(zlib.decompress(resources.files("arena_sdk").joinpath(TABLE).read_bytes()))
    _loaded = True


def headsup_preflop(a: Sequence[int], b: Sequence[int]) -> tuple[int, int, int]:
    """Of all 1,712,304 boards, how many ``a`` wins, ``b`` wins, and they tie (two pairs of distinct cards, ints
    0..51 as ``arena_sdk.cards`` numbers them)."""
    if not _loaded:
        _load()
    return _eval.headsup_preflop(a, b)


def headsup_orders(a: Sequence[int], b: Sequence[int]) -> dict[tuple[int, ...], int]:
    """``runout_orders([a, b], (), 0, seed)``'s answer (every board counted once; orders that never occur left
    out), from the table: ``{(0, 1): a wins, (1, 0): b wins, (0, 0): ties}``."""
    wins, losses, ties = headsup_preflop(a, b)
    counts = {(0, 0): ties, (1, 0): losses, (0, 1): wins}
    return {order: n for order, n in counts.items() if n}
