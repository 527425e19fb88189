"""Layer 2: the pure rules engine of one hand (RULES.md R2-R10).

``Hand`` is the compiled engine (``arena.engine._core``) unless ``ARENA_ENGINE=python`` selects the Python reference
(``arena.engine.hand``, which type checkers see: both have its API).
"""

from typing import TYPE_CHECKING

from arena.engine.actions import Action, ActionKind, Event, EventKind, LegalActions, Street
from arena.engine.config import MAX_SEATS, MIN_SEATS, AnteMode, Structure, TableConfig
from arena.engine.deck import build_deck
from arena.engine.engines import ENGINE_VARIABLE, engine_name, hand_class
from arena.engine.errors import ConfigError, DeckError, IllegalActionError, RuleError
from arena.engine.pots import Pot, build_pots, split_pot
from arena.engine.view import SeatView, public_history, seat_view

if TYPE_CHECKING:
    from arena.engine.hand import Hand
else:
    Hand = hand_class()

__all__ = [
    "ENGINE_VARIABLE",
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
    "engine_name",
    "hand_class",
    "public_history",
    "seat_view",
    "split_pot",
]
