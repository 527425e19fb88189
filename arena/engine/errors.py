"""Typed errors of the rules engine. Each names the rule of RULES.md it enforces, so a bot author reads why."""

from __future__ import annotations


class RuleError(Exception):
    """Something a rule of RULES.md forbids; ``rule`` is its number (e.g. ``R7.4``)."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(f"{rule}: {message}")
        self.rule = rule
        self.message = message


class ConfigError(RuleError):
    """A table or hand that cannot be set up as given (seat count, stakes, stacks, button)."""


class DeckError(RuleError):
    """A deck that is not part of one 52-card deck or has too few cards for the table (R1.1, R2.1)."""


class IllegalActionError(RuleError):
    """An action the rules refuse (R6.3); the hand's state is left exactly as it was."""

    def __init__(self, seat: int, action: str, rule: str, message: str) -> None:
        super().__init__(rule, f"seat {seat} {action}: {message}")
        self.seat = seat
        self.action = action
