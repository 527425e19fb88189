"""The compiled deck (arena/deals/_deck.c) against its definition, ``reference_deck`` (Python's hmac and hashlib):
the same 52 cards for every seed and hand, and its SHA-256/HMAC equal to the standard library's."""

from __future__ import annotations

import hmac
import os
import random
import subprocess
import sys
from collections.abc import Iterator

import pytest

from arena.deals import deck_for_hand, seed

_deck = pytest.importorskip("arena.deals._deck")


@pytest.fixture(params=[True, False], ids=["sha-ni", "portable"])
def block_function(request: pytest.FixtureRequest) -> Iterator[bool]:
    """Each way the compiled SHA-256 compresses a block: the CPU's SHA extensions (skipped where it has none) and
    the portable rounds; the module's choice is put back after."""
    chosen = _deck._sha_ni
    if _deck._use_sha_ni(request.param) != request.param:
        _deck._use_sha_ni(chosen)
        pytest.skip("this CPU has no SHA extensions")
    yield request.param
    _deck._use_sha_ni(chosen)


@pytest.mark.usefixtures("block_function")
def test_R1_3_compiled_hmac_is_hmac_sha256() -> None:
    rng = random.Random(20261204)
    # keys and messages of every length around SHA-256's 64-byte block and its padding limit (55/56 bytes)
    for key_size in (*range(0, 70), 100, 127, 128, 129, 200):
        for message_size in (0, 1, 20, 55, 56, 57, 63, 64, 65, 119, 120, 130, 300):
            key = rng.randbytes(key_size)
            message = rng.randbytes(message_size)
            assert _deck.hmac_sha256(key, message) == hmac.digest(key, message, "sha256"), (key_size, message_size)


@pytest.mark.usefixtures("block_function")
def test_R1_3_compiled_deck_is_the_reference_deck() -> None:
    rng = random.Random(7)
    seeds = ["", "arena", "é♠🂡", "x" * 64, "y" * 65, "z" * 300, *(rng.randbytes(32).hex() for _ in range(40))]
    hands = [*range(60), 999, 10**6 + 7, 2**31, 2**32 + 5, 2**62, 2**63 - 1]
    for s in seeds:
        for hand in hands:
            expected = seed.reference_deck(s, hand)
            assert _deck.deck_for_hand(s.encode(), hand) == expected, (s, hand)
            assert deck_for_hand(s, hand) == expected
    assert deck_for_hand("arena", 2**64) == seed.reference_deck("arena", 2**64)  # past a C long long: the reference
    with pytest.raises(ValueError, match="must not be negative"):
        deck_for_hand("arena", -1)
    with pytest.raises(ValueError, match="must not be negative"):
        _deck.deck_for_hand(b"arena", -1)


def test_ARENA_ENGINE_python_deals_with_the_reference() -> None:
    code = "from arena.deals import seed; print(seed._COMPILED_DECK is None)"
    for engine, reference in (("python", "True"), ("compiled", "False")):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             env={**os.environ, "ARENA_ENGINE": engine}).stdout
        assert out.strip() == reference
