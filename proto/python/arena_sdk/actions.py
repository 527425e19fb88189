"""The answer a bot gives: a small frozen ``Action`` and one constructor per kind (``fold()``, ``raise_to(300)``...),
or a ``Mixed`` action (``mixed({call(): 0.7, raise_to(300): 0.3})``) that the referee draws from; either may carry a
decision comment (``call().with_comment("pot odds 4:1")``) that the records keep and no other bot ever sees."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from arena_sdk.types import ActionKind

if TYPE_CHECKING:
    from arena_sdk.request import Request

__all__ = ["COMMENT_MAX", "Action", "Mixed", "all_in", "call", "check", "fold", "mixed", "raise_to", "safe_action"]


COMMENT_MAX = 280  # characters of a decision comment (proto Action.comment); the referee keeps no more


def _comment(text: object) -> str:
    if not isinstance(text, str):
        raise ValueError(f"a comment is text, got {text!r}")
    return text[:COMMENT_MAX]


@dataclass(frozen=True, slots=True)
class Action:
    """One action: its kind and, for RAISE only, the raise-to total for the street (R6.2), in whole chips; and,
    optionally, a decision comment (why the bot acted: at most ``COMMENT_MAX`` characters, the rest cut off). The
    comment is stored with the action and shown with the finished hand (its page, its PHH), never sent to any bot;
    it takes no part in comparing actions (``call().with_comment("x") == call()``)."""

    kind: ActionKind
    amount: int = 0
    comment: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.kind, ActionKind) or self.kind is ActionKind.UNSPECIFIED:
            raise ValueError(f"Action kind must be FOLD, CHECK, CALL, RAISE or ALL_IN, got {self.kind!r}")
        if not isinstance(self.amount, int) or isinstance(self.amount, bool) or self.amount < 0:
            raise ValueError(f"Action amount must be a whole number of chips >= 0, got {self.amount!r}")
        if self.comment:
            object.__setattr__(self, "comment", _comment(self.comment))

    def with_comment(self, comment: str) -> Action:
        """This action with a decision comment (``raise_to(300).with_comment("top pair, value")``)."""
        return replace(self, comment=comment)

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


@dataclass(frozen=True, slots=True)
class Mixed:
    """A mixed action: the actions a bot would play here with their probabilities; the referee draws one from its
    secret seed (proto ``Action.policy``). A bot that randomizes anyway loses nothing by letting the referee draw,
    and its results can then be scored with the luck of the draw taken out (the AIVAT estimator)."""

    choices: tuple[tuple[Action, float], ...]
    comment: str = field(default="", compare=False)  # as Action.comment: for the records, never for other bots

    def __post_init__(self) -> None:
        if self.comment:
            object.__setattr__(self, "comment", _comment(self.comment))
        for action, probability in self.choices:
            if not isinstance(action, Action):
                raise ValueError(f"a mixed action lists Actions, got {action!r}")
            if not (isinstance(probability, (int, float)) and math.isfinite(probability) and probability > 0):
                raise ValueError(f"the probability of {action} must be a number > 0, got {probability!r}")

    def with_comment(self, comment: str) -> Mixed:
        """This mixed action with a decision comment (as ``Action.with_comment``)."""
        return replace(self, comment=comment)

    def __str__(self) -> str:
        return "mixed(" + ", ".join(f"{a}: {p:.3g}" for a, p in self.choices) + ")"


def mixed(choices: Mapping[Action, float] | Iterable[tuple[Action, float]], comment: str = "") -> Mixed:
    """A mixed action from ``{action: probability}`` (or pairs); probabilities are scaled to add up to 1, and
    actions of probability 0 are left out; ``comment`` as ``Action.comment``."""
    pairs = list(choices.items()) if isinstance(choices, Mapping) else list(choices)
    kept = [(a, float(p)) for a, p in pairs if p]
    total = math.fsum(p for _, p in kept)
    if not kept or not math.isfinite(total) or total <= 0:
        raise ValueError(f"a mixed action needs at least one action of positive probability, got {pairs!r}")
    return Mixed(tuple((a, p / total) for a, p in kept), comment)
