"""Layer 2: the pure rules engine of one hand (RULES.md R2-R10)."""

from arena.engine.actions import Action, ActionKind, Event, EventKind, LegalActions, Street
from arena.engine.config import MAX_SEATS, MIN_SEATS, AnteMode, Structure, TableConfig
from arena.engine.deck import build_deck
from arena.engine.errors import ConfigError, DeckError, IllegalActionError, RuleError
from arena.engine.hand import Hand
from arena.engine.pots import Pot, build_pots, split_pot
from arena.engine.view import SeatView, public_history, seat_view

__all__ = [
    "MAX_SEATS",
    "MIN_SEATS",
    "Action",
    "ActionKind",
    "AnteMode",
    "ConfigError",
    "DeckError",
    "Event",
    "EventKind",
    "Hand",
    "IllegalActionError",
    "LegalActions",
    "Pot",
    "RuleError",
    "SeatView",
    "Street",
    "Structure",
    "TableConfig",
    "build_deck",
    "build_pots",
    "public_history",
    "seat_view",
    "split_pot",
]
