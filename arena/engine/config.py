"""Table settings that one hand needs: betting structure, stakes, antes and table policies (R3, R7, R8.4)."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from arena.engine.errors import ConfigError

MIN_SEATS = 2
MAX_SEATS = 22  # R2.1: 22 x 2 hole cards + 3 burns + 5 board = 52


class Structure(enum.Enum):
    """Betting structure (R7)."""

    NO_LIMIT = "nl"
    POT_LIMIT = "pl"
    FIXED_LIMIT = "fl"


class AnteMode(enum.Enum):
    """Who posts the ante (R3.2): nobody, every seat, or the big blind for the whole table."""

    NONE = "none"
    EACH = "each"
    BIG_BLIND = "bb"


@dataclass(frozen=True, slots=True)
class TableConfig:
    """Everything about a table that stays fixed from hand to hand.

    ``small_bet``/``big_bet`` are the fixed-limit units (R7.6; default one and two big blinds);
    ``raise_cap`` is the number of bets a fixed-limit street allows (the bet and three raises);
    ``chip`` is the smallest chip, the unit in which split pots are divided (R10.4).
    """

    small_blind: int = 50
    big_blind: int = 100
    structure: Structure = Structure.NO_LIMIT
    ante: int = 0
    ante_mode: AnteMode = AnteMode.NONE
    small_bet: int = 0
    big_bet: int = 0
    raise_cap: int = 4
    uncapped_heads_up: bool = False
    reveal_all: bool = True
    chip: int = 1

    def __post_init__(self) -> None:
        if self.big_blind <= 0 or self.small_blind < 0:
            raise ConfigError("R3.1", f"blinds must be positive, got {self.small_blind}/{self.big_blind}")
        if self.small_blind > self.big_blind:
            raise ConfigError("R3.1", f"small blind {self.small_blind} exceeds big blind {self.big_blind}")
        if self.ante < 0:
            raise ConfigError("R3.2", f"ante must not be negative, got {self.ante}")
        if self.ante and self.ante_mode is AnteMode.NONE:
            raise ConfigError("R3.2", "an ante was given but ante_mode is NONE (choose EACH or BIG_BLIND)")
        if self.structure is Structure.FIXED_LIMIT:
            if self.small_bet == 0:
                object.__setattr__(self, "small_bet", self.big_blind)
            if self.big_bet == 0:
                object.__setattr__(self, "big_bet", 2 * self.small_bet)
            if self.small_bet <= 0 or self.big_bet <= 0:
                raise ConfigError("R7.6", "fixed-limit bet units must be positive")
            if self.raise_cap < 1:
                raise ConfigError("R7.6", f"raise cap must allow at least one bet, got {self.raise_cap}")
        if self.chip < 1:
            raise ConfigError("R10.4", f"the smallest chip must be at least 1, got {self.chip}")

    @property
    def antes_posted(self) -> bool:
        """Whether any ante is posted at this table."""
        return self.ante > 0 and self.ante_mode is not AnteMode.NONE
