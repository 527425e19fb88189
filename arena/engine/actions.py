"""What a player may do (R6) and what happened (events), as small immutable values."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import NamedTuple


class ActionKind(enum.IntEnum):
    """A player's action (R6.1). RAISE covers bet and raise; its amount is a raise-to total (R6.2).

    ALL_IN is the largest commitment the rules allow at that moment: a raise to ``max_raise_to`` when raising is
    open (the whole stack in no-limit), else a call, else a check. It is never refused when the seat is to act.
    """

    FOLD = 1
    CHECK = 2
    CALL = 3
    RAISE = 4
    ALL_IN = 5


class Street(enum.IntEnum):
    """Betting rounds (R5.1); SHOWDOWN marks a hand whose betting is over."""

    PREFLOP = 0
    FLOP = 1
    TURN = 2
    RIVER = 3
    SHOWDOWN = 4


@dataclass(frozen=True, slots=True)
class Action:
    """One action as a bot sends it: kind, and for RAISE the raise-to total for the street (R6.2)."""

    kind: ActionKind
    amount: int = 0

    def __str__(self) -> str:
        if self.kind is ActionKind.RAISE:
            return f"raise to {self.amount}"
        return self.kind.name.lower().replace("_", "-")


@dataclass(slots=True)  # not frozen: built for every decision, and a frozen __init__ costs ten times more
class LegalActions:
    """The exact choices of the seat to act.

    ``call_amount`` is what a call puts in (an all-in for less when the stack is short, R6.2), 0 when there is
    nothing to call. ``min_raise_to``/``max_raise_to`` bound a RAISE (both 0 when raising is not allowed); when the
    stack cannot reach a full raise they both equal the all-in total (R7.3).
    """

    seat: int
    can_fold: bool
    can_check: bool
    call_amount: int
    min_raise_to: int
    max_raise_to: int

    @property
    def can_call(self) -> bool:
        """Whether there is a bet to call."""
        return self.call_amount > 0

    @property
    def can_raise(self) -> bool:
        """Whether a bet or raise is allowed."""
        return self.max_raise_to > 0

    def allows(self, action: Action) -> bool:
        """Whether ``action`` is one of these choices (the engine is the authority; this mirrors it)."""
        kind = action.kind
        if kind is ActionKind.FOLD:
            return self.can_fold
        if kind is ActionKind.CHECK:
            return self.can_check
        if kind is ActionKind.CALL:
            return self.call_amount > 0
        if kind is ActionKind.RAISE:
            return self.max_raise_to > 0 and self.min_raise_to <= action.amount <= self.max_raise_to
        return True  # ALL_IN: the top raise, else a call, else a check

    def concrete(self, action: Action) -> Action:
        """``action`` as the engine plays it: ALL_IN becomes the top raise, else a call, else a check."""
        if action.kind is not ActionKind.ALL_IN:
            return action if action.kind is ActionKind.RAISE else Action(action.kind)
        if self.max_raise_to > 0:
            return Action(ActionKind.RAISE, self.max_raise_to)
        return Action(ActionKind.CALL) if self.call_amount > 0 else Action(ActionKind.CHECK)


class EventKind(enum.IntEnum):
    """Kinds of events a hand produces, in the order they happen."""

    POST_ANTE = 1
    POST_SMALL_BLIND = 2
    POST_BIG_BLIND = 3
    POST_ENTRY_BLIND = 4
    DEAL_HOLE = 5
    DEAL_BOARD = 6
    FOLD = 7
    CHECK = 8
    CALL = 9
    BET = 10
    RAISE = 11
    UNCALLED_RETURN = 12
    SHOW = 13
    MUCK = 14
    WIN_POT = 15


class Event(NamedTuple):
    """One thing that happened. ``seat`` is -1 for the dealer; ``amount`` is the raise-to total for BET/RAISE,
    the chips moved for posts, calls, returns and wins, and the pot index for WIN_POT is in ``pot``.
    ``all_in`` marks an action or post that left the seat without chips.
    """

    kind: EventKind
    seat: int
    street: int
    amount: int = 0
    cards: tuple[int, ...] = ()
    all_in: bool = False
    pot: int = -1
