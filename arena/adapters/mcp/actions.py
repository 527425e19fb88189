"""What an agent says it does, read leniently and checked strictly: ``fold``, ``check``, ``call``, ``bet``,
``raise``, ``all-in`` in any case, with soft forms (``"raise to 600"``, ``"Bet 1,200"``, ``"all in"``, ``"allin"``)
and the amount in the text or apart; then checked against the request's exact legal actions, so that what goes to
the referee is legal and a refusal names the rule (RULES.md) and what is allowed instead."""

from __future__ import annotations

import re
from dataclasses import dataclass

from arena_sdk import Action, LegalActions, Request, Structure, all_in, call, check, fold, raise_to

VERBS = {"fold": "fold", "check": "check", "call": "call", "bet": "raise", "raise": "raise", "allin": "all-in",
         "shove": "all-in"}
"""The words an agent may use (spaces and hyphens taken out: "all in", "all-in") and the action each means."""
_SHAPE = re.compile(r"^(?P<verb>fold|check|call|bet|raise|all[ -]?in|shove)"
                    r"(?:\s+(?:to\s+)?(?P<amount>\d[\d,_]*(?:\.0+)?)(?:\s+chips?)?)?$")


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why an action cannot be played now: the rule (``R7.2``), the reason, and what is allowed instead."""

    rule: str
    reason: str
    legal_actions: tuple[str, ...]

    def to_json(self) -> dict[str, object]:
        """The refusal as the ``act`` tool returns it."""
        return {"accepted": False, "rule": self.rule, "reason": f"{self.rule}: {self.reason}",
                "legal_actions": list(self.legal_actions)}


def legal_actions(legal: LegalActions) -> list[str]:
    """What the seat may do, in words the ``act`` tool reads back (``"call 100"``, ``"raise to 200..10000"``)."""
    out = []
    if legal.can_fold:
        out.append("fold")
    if legal.can_check:
        out.append("check")
    if legal.can_call:
        out.append(f"call {legal.call_amount}")
    if legal.can_raise:
        if legal.min_raise_to == legal.max_raise_to:
            out.append(f"raise to {legal.min_raise_to}")
        else:
            out.append(f"raise to {legal.min_raise_to}..{legal.max_raise_to}")
    out.append("all-in")
    return out


def read(action: str, amount: int | None = None) -> tuple[str, int | None] | str:
    """``(verb, amount)`` from the agent's words (verb one of fold, check, call, raise, all-in); or, when the words
    are not an action, the reason why."""
    text = " ".join(str(action).lower().replace("_", " ").split()).rstrip(".!")
    found = _SHAPE.match(text)
    if found is None:
        return (f"{str(action)[:60]!r} is not an action: say fold, check, call, bet AMOUNT, raise AMOUNT (a raise-to "
                "total) or all-in")
    verb = VERBS[found.group("verb").replace("-", "").replace(" ", "")]
    said = found.group("amount")
    written = int(float(said.replace(",", "").replace("_", ""))) if said else None
    if written is not None and amount is not None and written != amount:
        return f"two different amounts: {written} in the action and {amount} in amount"
    return verb, written if written is not None else amount


def choose(request: Request, action: str, amount: int | None = None, comment: str = "") -> Action | Refusal:
    """The SDK action the agent's words mean for ``request``, with its comment, or why it cannot be played."""
    legal = request.legal
    allowed = tuple(legal_actions(legal))
    parsed = read(action, amount)
    if isinstance(parsed, str):
        return Refusal("R6.1", parsed, allowed)
    verb, size = parsed
    chosen: Action
    if verb == "fold":
        if not legal.can_fold:
            return Refusal("R6.1", "there is nothing to call: check instead of folding", allowed)
        chosen = fold()
    elif verb == "check":
        if not legal.can_check:
            return Refusal("R6.1", f"you cannot check facing a bet: call {legal.call_amount}, raise or fold", allowed)
        chosen = check()
    elif verb == "call":
        if not legal.can_call:
            return Refusal("R6.1", "there is no bet to call: check instead", allowed)
        chosen = call()
    elif verb == "all-in":
        chosen = all_in()
    else:
        refusal = _raise_refusal(request, size, allowed)
        if refusal is not None:
            return refusal
        assert size is not None
        chosen = raise_to(size)
    return chosen.with_comment(comment) if comment else chosen


def _raise_refusal(request: Request, size: int | None, allowed: tuple[str, ...]) -> Refusal | None:
    legal = request.legal
    if not legal.can_raise:
        rule = "R7.6" if request.config.structure is Structure.FIXED_LIMIT else "R7.4"
        return Refusal(rule, "you may not bet or raise now (the betting was not reopened, or it is capped): "
                             "call, check or fold", allowed)
    if size is None:
        return Refusal("R6.2", f"say how much: a raise-to total for this street from {legal.min_raise_to} to "
                               f"{legal.max_raise_to}", allowed)
    if size < legal.min_raise_to:
        return Refusal("R7.2", f"raise to {size} is below the minimum raise-to {legal.min_raise_to}", allowed)
    if size > legal.max_raise_to:
        rule = {Structure.POT_LIMIT: "R7.5", Structure.FIXED_LIMIT: "R7.6"}.get(request.config.structure, "R7.1")
        return Refusal(rule, f"raise to {size} is above the maximum raise-to {legal.max_raise_to}", allowed)
    return None
