"""A rating system is a plug-in: it turns rating games (arena.ratings.blocks: blocks of duplicate deals, or whole
freezeouts) into each bot's rating, says which of its numbers the leaderboard is sorted by, and which columns it
shows. The leaderboard, its JSON, the terminal table, the site's templates and plots read all of that from here,
never from one system's field names.

A system's ``rate`` must depend only on the set of games, not on the order they were played or recorded in: the
order of a leaderboard follows from the results. ``history`` is allowed to follow the order of play (it is a
history), but its last point is the rating ``rate`` gives.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol


class Ranked(Protocol):
    """A game as a rating system sees it: who took part and the places they finished in (0 first, equal places
    drawn). ``arena.ratings.blocks.RatingGame`` is one."""

    def places(self) -> Mapping[str, int]: ...


RESERVED_KEYS = frozenset({"rank", "bot", "mbb_per_hand", "ci95", "sessions", "hands", "stats"})
"""Fields of a leaderboard row that are not the rating system's: its column keys must differ from them."""


@dataclass(frozen=True, slots=True)
class Column:
    """One number a rating system shows per bot: its key (in ``Rating.values`` and in each JSON row), the header,
    a longer description (tooltips, the JSON), and how many decimals to print.
    """

    key: str
    label: str
    description: str
    digits: int = 2

    def format(self, value: float) -> str:
        """The value as the terminal prints it (the site uses its own minus sign)."""
        return f"{value:.{self.digits}f}"


@dataclass(frozen=True, slots=True)
class Rating:
    """One bot's rating: a value per column (by key), and an estimate with an uncertainty band for plots."""

    values: Mapping[str, float]
    estimate: float
    low: float
    high: float

    def __getitem__(self, key: str) -> float:
        return self.values[key]


@dataclass(frozen=True, slots=True)
class RatingPoint:
    """A bot's rating as it stood after ``games`` rating games (in play order): estimate and band."""

    games: int
    estimate: float
    low: float
    high: float


class RatingSystem(ABC):
    """What the leaderboard needs from a rating system. Subclasses set the class attributes and implement
    ``rate`` (and ``history`` if they have a better one than the default: none).
    """

    name: str
    """A short identifier (``trueskill``), for JSON and command lines."""
    title: str
    """What it is, in a few words (``TrueSkill, all sessions fitted at once``)."""
    method: str
    """How it rates, in a sentence or two of plain text (the site's "How the ranking works" and the JSON)."""
    columns: tuple[Column, ...]
    """The numbers it shows, in order."""
    sort_key: str
    """The key of the column the leaderboard is sorted by, highest first (ties: higher mbb/hand, then name)."""
    estimate_label: str
    """What the plots' estimate and band are (an axis label)."""

    @abstractmethod
    def rate(self, games: Sequence[Ranked], players: Iterable[str] = ()) -> dict[str, Rating]:
        """Each bot's rating from these games, the same whatever order they come in; ``players`` with no game get
        the prior rating."""

    def history(self, games: Sequence[Ranked], points: int = 30) -> dict[str, list[RatingPoint]]:
        """Each bot's rating after growing prefixes of ``games`` (in play order), at most ``points`` of them; the
        last point of each bot is its rating from ``rate``. The default: no history.
        """
        return {}

    @property
    def sort_column(self) -> Column:
        """The column the leaderboard is sorted by."""
        for column in self.columns:
            if column.key == self.sort_key:
                return column
        raise ValueError(f"{self.name}: sort key {self.sort_key!r} is not one of its columns")

    def sorted_by(self) -> str:
        """What a leaderboard is sorted by, for people: ``mu − 3σ (TrueSkill, ...), highest first``."""
        return f"{self.sort_column.label} ({self.title}), highest first"

    def check(self) -> None:
        """Raise ValueError if the columns cannot go on a leaderboard (a reserved or repeated key, or no sort
        column)."""
        keys = [c.key for c in self.columns]
        clash = sorted(set(keys) & RESERVED_KEYS)
        if clash or len(set(keys)) != len(keys):
            raise ValueError(f"{self.name}: column keys {keys} repeat or use reserved ones {clash}")
        _ = self.sort_column

    def describe(self) -> dict[str, Any]:
        """The system as JSON data: name, title, method, columns, and the sort."""
        return {
            "name": self.name,
            "title": self.title,
            "method": self.method,
            "columns": [{"key": c.key, "label": c.label, "description": c.description, "digits": c.digits}
                        for c in self.columns],
            "sort_key": self.sort_key,
            "parameters": dict(self.parameters()),
        }

    def parameters(self) -> Mapping[str, float]:
        """The system's parameters (priors and the like), for the JSON; none by default."""
        return {}
