"""Make ``arena_sdk/preflop_headsup.bin``: how every heads-up match-up of hole cards ends over all 1,712,304 boards,
counted exactly, one entry per match-up up to the suits' symmetry (47,008 of them).

Run from ``proto/python``: ``python tools/preflop_table.py`` (about 30 CPU-minutes, on every core). The file is
committed, so nothing builds it at install time; ``tests/sdk/test_preflop.py`` checks entries against a count of
the boards made afresh.

Format (zlib-compressed): for each match-up in ascending key order, three little-endian uint32: the key
(``preflop_key``: the canonical cards, six bits each), the boards the key's first hand wins, the boards it ties.
"""

from __future__ import annotations

import itertools
import multiprocessing
import struct
import sys
import time
import zlib
from pathlib import Path

from arena_sdk._eval import runout_orders

BOARDS = 1_712_304  # C(48, 5)
PERMUTATIONS = tuple(itertools.permutations(range(4)))  # suit maps, in the order arena_sdk/_eval.c tries them
OUT = Path(__file__).resolve().parent.parent / "arena_sdk" / "preflop_headsup.bin"


def preflop_key(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, bool]:
    """The canonical key of the match-up ``a`` against ``b`` (cards 0-51: rank * 4 + suit) and whether its first
    hand is ``b``: the smallest packing (first hand's higher card, its lower, the second's higher, its lower; six
    bits each) over the 24 relabellings of the suits and both orders of the hands (``preflop_key`` in _eval.c)."""
    best = -1
    swapped = False
    for perm in PERMUTATIONS:
        x = sorted(((c & ~3) | perm[c & 3] for c in a), reverse=True)
        y = sorted(((c & ~3) | perm[c & 3] for c in b), reverse=True)
        for first, second, flipped in ((x, y, False), (y, x, True)):
            key = first[0] << 18 | first[1] << 12 | second[0] << 6 | second[1]
            if best < 0 or key < best:
                best, swapped = key, flipped
    return best, swapped


def keys() -> list[int]:
    """Every match-up's key, ascending."""
    found = set()
    hands = list(itertools.combinations(range(52), 2))
    for i, a in enumerate(hands):
        for b in hands[i + 1:]:
            if a[0] not in b and a[1] not in b:
                found.add(preflop_key(a, b)[0])
    return sorted(found)


def count(key: int) -> tuple[int, int, int]:
    """The key, and the boards its first hand wins and ties, counted over all of them."""
    a = ((key >> 18) & 63, (key >> 12) & 63)
    b = ((key >> 6) & 63, key & 63)
    orders = runout_orders([a, b], (), 0, 0)  # samples 0: every completion counted
    assert sum(orders.values()) == BOARDS
    return key, orders.get((0, 1), 0), orders.get((0, 0), 0)


def main() -> None:
    started = time.monotonic()
    todo = keys()
    print(f"{len(todo):,} match-ups ({time.monotonic() - started:.0f} s)", file=sys.stderr)
    out = bytearray()
    with multiprocessing.Pool() as pool:
        for n, entry in enumerate(pool.imap(count, todo, chunksize=64), 1):
            out += struct.pack("<3I", *entry)
            if n % 2000 == 0:
                print(f"{n:,} ({time.monotonic() - started:.0f} s)", file=sys.stderr)
    OUT.write_bytes(zlib.compress(bytes(out), 9))
    print(f"wrote {OUT} ({OUT.stat().st_size:,} bytes) in {time.monotonic() - started:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
