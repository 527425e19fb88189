"""Seeded decks (R1.3), commitments and duplicate schedules."""

from __future__ import annotations

import hashlib
import hmac
import subprocess
import sys
from collections import Counter

import pytest

from arena.cards import format_cards
from arena.deals import (
    commitment,
    deck_for_hand,
    derive_seed,
    duplicate_plan,
    duplicate_plan_length,
    new_seed,
    rotations,
    verify_commitment,
)

# Pinned vectors: any change to the shuffle, the commitment or the derivation breaks every published seed, so it must
# be deliberate (and show here).
DECK_ARENA_0 = ("2d7c5dTh4cKcAhTcJs6d2c2h4d2sQd8dAd6cAs8s5c3s7d5sJcKhKs3c3h5hAc4sQh6s9dQc4hKdJhJd7s8h9s3dTdQs9c6h7hTs8c"
                "9h")
COMMITMENT_ARENA = "2222c469de04cddc66400aa6bf9145ed8bd42c25bc6349d14c437d7172f5113e"  # sha256sum of the README's form
DERIVED_ARENA = "f85b212c40ca701a0cb03f4b846a6fd7624611ca33edffded8597944befbc4a0"


def test_R1_3_same_seed_same_deck_on_every_machine() -> None:
    assert format_cards(deck_for_hand("arena", 0)) == DECK_ARENA_0
    assert format_cards(deck_for_hand("arena", 7)[:10]) == "7c6h9cQhQc7s8c4cJsKh"
    code = "from arena.deals import deck_for_hand; print(deck_for_hand('arena', 7))"
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": "123"}).stdout
    assert other.strip() == str(deck_for_hand("arena", 7))


def test_the_commitment_is_what_the_readme_says_sha256sum_gives() -> None:
    assert commitment("arena") == COMMITMENT_ARENA
    assert hashlib.sha256(b"arena-seed-commitment-v1:arena").hexdigest() == COMMITMENT_ARENA
    assert derive_seed("arena", "cup/000-a-b") == DERIVED_ARENA


def test_R1_3_the_shuffle_is_hmac_sha256_driven_and_documented() -> None:
    # Re-derive deal 0 of seed "s" independently from the documented construction.
    words = []
    block = 0
    while len(words) < 200:
        digest = hmac.new(b"s", b"arena-deck-v1:0:%d" % block, hashlib.sha256).digest()
        words += [int.from_bytes(digest[i : i + 4], "big") for i in range(0, 32, 4)]
        block += 1
    deck = list(range(52))
    it = iter(words)
    for i in range(51, 0, -1):
        limit = (1 << 32) - (1 << 32) % (i + 1)
        w = next(it)
        while w >= limit:
            w = next(it)
        j = w % (i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    assert deck_for_hand("s", 0) == deck


def test_decks_are_permutations_and_differ_by_hand_and_seed() -> None:
    decks = [deck_for_hand("seed", n) for n in range(50)]
    assert all(sorted(d) == list(range(52)) for d in decks)
    assert len({tuple(d) for d in decks}) == 50
    assert deck_for_hand("seed", 0) != deck_for_hand("seed2", 0)
    with pytest.raises(ValueError):
        deck_for_hand("seed", -1)


def test_first_card_is_roughly_uniform() -> None:
    counts = Counter(deck_for_hand("uniform", n)[0] for n in range(5200))
    assert len(counts) == 52
    # 100 expected per card; a chi-square with 51 degrees of freedom stays far below 110 unless the shuffle is biased
    chi2 = sum((c - 100) ** 2 / 100 for c in counts.values())
    assert chi2 < 110


def test_commitment_hides_the_seed_and_checks_it() -> None:
    seed = new_seed()
    assert len(seed) == 64 and seed != new_seed()
    published = commitment(seed)
    assert seed not in published and len(published) == 64
    assert verify_commitment(seed, published) and verify_commitment(seed, published.upper())
    assert not verify_commitment(seed + "x", published)


def test_derived_seeds_are_fixed_and_distinct() -> None:
    assert derive_seed("t", "a") == derive_seed("t", "a") != derive_seed("t", "b")


def test_rotations_put_every_bot_in_every_seat() -> None:
    assert rotations(2) == [(0, 1), (1, 0)]
    six = rotations(6)
    assert len(six) == 6 and all(sorted(col) == list(range(6)) for col in zip(*six, strict=True))
    assert len(rotations(3, all_orders=True)) == 6


@pytest.mark.parametrize("seats", [2, 3, 4])
@pytest.mark.parametrize("all_orders, duplicate", [(False, True), (True, True), (False, False)])
def test_a_plans_length_is_known_without_making_it(seats: int, all_orders: bool, duplicate: bool) -> None:
    for hands in (0, 1, 2, 5, 7, 24, 25, 101):
        assert duplicate_plan_length(seats, hands, all_orders, duplicate) == len(
            list(duplicate_plan(seats, hands, all_orders, duplicate)))


def test_duplicate_plan_replays_each_deal_in_every_rotation_with_the_button_fixed() -> None:
    plan = list(duplicate_plan(3, 7))
    assert len(plan) == 9  # rounded up to whole duplicate sets
    for deal in range(3):
        hands = [p for p in plan if p.deal == deal]
        assert [p.rotation for p in hands] == [0, 1, 2]
        assert len({p.button for p in hands}) == 1
    assert [p.hand_number for p in plan] == list(range(9))
    assert [p.hand_number for p in duplicate_plan(3, 7, start=4)] == [4, 5, 6, 7, 8]
    assert all(p.seating == (0, 1, 2) for p in duplicate_plan(3, 4, duplicate=False))
