"""The answer a bot gives: a small frozen ``Action`` and one constructor per kind (``fold()``, ``raise_to(300)``...)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from arena.sdk.types import ActionKind

if TYPE_CHECKING:
    from arena.sdk.request import Request

__all__ = ["Action", "all_in", "call", "check", "fold", "raise_to", "safe_action"]


@dataclass(frozen=True, slots=True)
class Action:
    """One action: its kind and, for RAISE only, the raise-to total for the street (R6.2), in whole chips."""

    kind: ActionKind
    amount: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.kind, ActionKind) or self.kind is ActionKind.UNSPECIFIED:
            raise ValueError(f"Action kind must be FOLD, CHECK, CALL, RAISE or ALL_IN, got {self.kind!r}")
        if not isinstance(self.amount, int) or isinstance(self.amount, bool) or self.amount < 0:
            raise ValueError(f"Action amount must be a whole number of chips >= 0, got {self.amount!r}")

    def __str__(self) -> str:
        if self.kind is ActionKind.RAISE:
            return f"raise to {self.amount}"
        return self.kind.name.lower().replace("_", "-")


_FOLD = Action(ActionKind.FOLD)
_CHECK = Action(ActionKind.CHECK)
_CALL = Action(ActionKind.CALL)
_ALL_IN = Action(ActionKind.ALL_IN)


def fold() -> Action:
    """Give up the hand."""
    return _FOLD


def check() -> Action:
    """Pass without putting chips in; legal only when nothing is owed (``request.legal.can_check``)."""
    return _CHECK


def call() -> Action:
    """Put in what is owed (``request.to_call``); a call for more than the stack is an all-in for less."""
    return _CALL


def raise_to(amount: int | float) -> Action:
    """Bet or raise to ``amount`` chips in total for this street (R6.2: a raise-to total, not an increment).

    A float is rounded down to whole chips. Keep it in ``[legal.min_raise_to, legal.max_raise_to]``
    (``request.legal.clamp(amount)`` does that).
    """
    return Action(ActionKind.RAISE, int(amount))


def all_in() -> Action:
    """Commit as much as the rules allow: a raise to ``max_raise_to`` if possible, else a call, else a check."""
    return _ALL_IN


def safe_action(request: Request) -> Action:
    """The action that can never be illegal: check if that is free, else fold (the referee's timeout policy)."""
    return _CHECK if request.legal.can_check else _FOLD
