"""Seeded decks (R1.3): the same seed and hand number give the same cards on every machine and Python version.

The shuffle is Fisher-Yates driven by HMAC-SHA256(seed, "arena-deck-v1:<hand>:<block>") as a stream of 32-bit
words, with rejection sampling so every index is exactly uniform. Only the standard library's HMAC and SHA-256
are involved, so anyone can re-deal a published seed (``arena verify``). ``reference_deck`` is the definition;
the referee deals with the same function compiled (``arena.deals._deck``, about five times faster), unless
``ARENA_ENGINE=python`` selects the Python reference for the engine and the deck alike.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import struct
from collections.abc import Callable, Iterator

from arena.engine import engine_name

_DECK_TAG = b"arena-deck-v1"
_POLICY_TAG = b"arena-policy-v1"
_COMMIT_TAG = b"arena-seed-commitment-v1:"


def new_seed() -> str:
    """A fresh secret seed from the operating system's strong generator (R1.3), as 64 hex digits."""
    return secrets.token_hex(32)


def commitment(seed: str) -> str:
    """The hash to publish before a match; publishing the seed afterwards lets anyone check it (and every deck)."""
    return hashlib.sha256(_COMMIT_TAG + seed.encode("utf-8")).hexdigest()


def verify_commitment(seed: str, published: str) -> bool:
    """Whether ``seed`` is the one behind a published commitment."""
    return hmac.compare_digest(commitment(seed), published.strip().lower())


def derive_seed(seed: str, label: str) -> str:
    """A seed for one part of a larger event (a tournament's match), fixed by the event's seed and the label."""
    return hmac.new(seed.encode("utf-8"), b"arena-derive-v1:" + label.encode("utf-8"), hashlib.sha256).hexdigest()


def policy_draw(seed: str, hand_number: int, step: int) -> float:
    """A uniform number in [0, 1) for the mixed action at ``step`` (events so far) of hand ``hand_number``: the
    referee draws a bot's mixed action with it (arena.referee.table), and anyone re-draws it from the published seed."""
    digest = hmac.digest(seed.encode("utf-8"), b"%s:%d:%d" % (_POLICY_TAG, hand_number, step), "sha256")
    return (int.from_bytes(digest[:8], "big") >> 11) / float(1 << 53)


_EIGHT_WORDS = struct.Struct(">8I")  # a SHA-256 digest as eight big-endian 32-bit words


def _words(seed: str, hand_number: int) -> Iterator[int]:
    """An endless stream of 32-bit words from HMAC-SHA256 in counter mode."""
    key = seed.encode("utf-8")
    block = 0
    while True:  # hmac.digest is the one-shot form of hmac.new(...).digest(): the same bytes, several times faster
        digest = hmac.digest(key, b"%s:%d:%d" % (_DECK_TAG, hand_number, block), "sha256")
        yield from _EIGHT_WORDS.unpack(digest)
        block += 1


def _compiled_deck() -> Callable[[bytes, int], list[int]] | None:
    """The compiled ``reference_deck`` (taking the seed's UTF-8 bytes), unless ``ARENA_ENGINE=python`` or it was
    not built."""
    if engine_name() == "python":
        return None
    try:
        from arena.deals import _deck
    except ImportError:  # installed without a C compiler: the reference deals
        return None
    return _deck.deck_for_hand


_COMPILED_DECK = _compiled_deck()
_LARGEST_COMPILED = (1 << 63) - 1  # hand numbers the compiled deck takes (a C long long)


def deck_for_hand(seed: str, hand_number: int) -> list[int]:
    """The 52 cards of deal ``hand_number`` in the order the dealer takes them (R1.3, R4.1): ``reference_deck``'s,
    from the compiled copy when there is one."""
    if _COMPILED_DECK is not None and 0 <= hand_number <= _LARGEST_COMPILED:
        return _COMPILED_DECK(seed.encode("utf-8"), hand_number)
    return reference_deck(seed, hand_number)


def reference_deck(seed: str, hand_number: int) -> list[int]:
    """The 52 cards of deal ``hand_number`` in the order the dealer takes them (R1.3, R4.1): the definition."""
    if hand_number < 0:
        raise ValueError(f"hand number must not be negative, got {hand_number}")
    deck = list(range(52))
    words = _words(seed, hand_number)
    for i in range(51, 0, -1):
        bound = i + 1
        limit = (1 << 32) - (1 << 32) % bound  # reject the biased top of the range
        word = next(words)
        while word >= limit:
            word = next(words)
        j = word % bound
        deck[i], deck[j] = deck[j], deck[i]
    return deck
