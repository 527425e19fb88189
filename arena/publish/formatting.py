"""How numbers, intervals, cards and times read on the site (Jinja2 filters; also used by the tests)."""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass

from markupsafe import Markup

from arena.cards import RANKS, SUITS
from arena.ratings.stats import WinRate

MINUS = "\u2212"  # a real minus sign: as wide as the plus, and not broken across lines
DASH = "\u2014"


def _minus(text: str) -> str:
    return text.replace("-", MINUS)


def fixed(x: float | None, digits: int = 2) -> str:
    """``x`` with ``digits`` decimals (``25.00``, ``−3.14``); a dash for an undefined value."""
    return "–" if x is None else _minus(f"{x:,.{digits}f}")


def signed(x: float, digits: int = 1) -> str:
    """``x`` with its sign always shown (``+12.3``, ``−4.0``)."""
    return _minus(f"{x:+,.{digits}f}")


def chips(n: int) -> str:
    """A chip amount with its sign and thousands separators (``+1,250``, ``−300``, ``0``)."""
    return _minus(f"{n:+,}") if n else "0"


def count(n: int) -> str:
    """A count with thousands separators."""
    return f"{n:,}"


def percent(x: float) -> str:
    """A share as a percentage with one decimal (``23.5%``)."""
    return f"{100 * x:.1f}%"


def ci(w: WinRate, digits: int = 1) -> str:
    """The 95% confidence interval of a win rate, ``[−4.0, +28.6]``; a dash when one session gives none."""
    if w.sessions == 0 or not (math.isfinite(w.low) and math.isfinite(w.high)):
        return DASH
    return f"[{signed(w.low, digits)}, {signed(w.high, digits)}]"


def timestamp(t: float | None) -> str:
    """A Unix time as ``2025-01-31 14:05 UTC``."""
    if t is None:
        return DASH
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(t))


@dataclass(frozen=True, slots=True)
class Card:
    """A card as the site shows it: rank, suit symbol, and the suit's letter (for colour)."""

    rank: str
    symbol: str
    suit: str

    def __str__(self) -> str:
        return f"{self.rank}{self.symbol}"


_SYMBOLS = dict(zip(SUITS, "\u2663\u2666\u2665\u2660", strict=True))


def cards(text: str) -> list[Card]:
    """Cards as stored (``AsKd7h``) for display (``A♠ K♦ 7♥``)."""
    out = []
    for i in range(0, len(text) - 1, 2):
        rank, suit = text[i], text[i + 1]
        if rank in RANKS and suit in _SYMBOLS:
            out.append(Card(rank, _SYMBOLS[suit], suit))
    return out


@functools.lru_cache(maxsize=64)
def _card_html(text: str) -> str:
    card = cards(text)
    return f'<span class="card {card[0].suit}">{card[0]}</span>' if card else ""


def cards_html(text: str | None) -> Markup:
    """Stored cards as the site's card spans (the ``cards`` macro of the templates, for rows rendered by the
    thousand: the hand tables of the match pages)."""
    if not text:
        return Markup("")
    return Markup("".join(_card_html(text[i:i + 2]) for i in range(0, len(text) - 1, 2)))
