"""An ACPC client's action as an arena Action, treated as the ACPC dealer treats it (``readPlayerResponse`` and
``isValidAction`` of the ACPC server, version 2.0.0).

The action is read from its first character: ``f``/``F`` fold, ``c``/``C``/``k``/``K`` check or call, ``r``/``R``/
``b``/``B`` bet or raise (in no-limit followed by the whole-hand total ``N``); what follows it is ignored. The dealer
never tells a client it erred, it fixes the action:

* an action it cannot read (``x``, a no-limit ``r`` without a number) is a call (a check when nothing is owed), and
  counts as an invalid action;
* a raise that is not allowed (the cap of a limit round is reached, nobody is left to call it) is a call, and counts;
* a fold when checking is free is a check, and counts;
* a no-limit raise below the minimum or above the stack is raised or lowered to it, and does not count (the dealer
  only warns).

Here the same, against the arena's legal actions (which under the mapping of ``gamedef`` are the ACPC's).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from arena.adapters.acpc.gamedef import Betting, for_message
from arena_sdk.actions import Action, call, check, fold, raise_to
from arena_sdk.types import ActionKind, LegalActions

_SIZE = re.compile(r"\s*([+-]?\d+)")  # sscanf's %d: leading white space and a sign allowed


@dataclass(frozen=True, slots=True)
class Reply:
    """What an ACPC action comes to: the arena ``action``, ``invalid`` when the dealer would count it as an
    invalid action, ``note`` saying what was changed (empty when nothing was), and ``as_sent``: an invalid action
    as the client sent it, in the arena's terms (None when it has none: an unreadable action), for the referee to
    refuse and record."""

    action: Action
    invalid: bool = False
    note: str = ""
    as_sent: Action | None = None


def _call(legal: LegalActions) -> Action:
    return check() if legal.can_check else call()


def decode(text: str, betting: Betting, legal: LegalActions, spent_before_round: int) -> Reply:
    """The arena action for ACPC action ``text``; ``spent_before_round`` is the chips the player put in on earlier
    rounds (a no-limit ``r<N>`` is a whole-hand total; the arena's raise-to is the round's)."""
    head = text[:1]
    if head in ("f", "F"):
        if legal.can_fold:
            return Reply(fold())
        return Reply(check(), True, f"invalid action {for_message(text)!r}: a fold when checking is free; "
                                    "changed to check (the ACPC dealer's call)", fold())
    if head in ("c", "C", "k", "K"):
        return Reply(_call(legal))
    if head not in ("r", "R", "b", "B"):
        what = "an empty action" if not text else f"bad action format {for_message(text)!r}"
        return Reply(_call(legal), True, f"{what}: changed to call")
    if betting is Betting.LIMIT:
        if not legal.can_raise:
            return Reply(_call(legal), True, f"invalid action {for_message(text)!r}: no raise is allowed here (the "
                                         "round's cap is reached, or nobody is left to call it); changed to call",
                     Action(ActionKind.RAISE, legal.max_raise_to))
        return Reply(raise_to(legal.max_raise_to))
    size = _SIZE.match(text, 1)
    if size is None:
        return Reply(_call(legal), True, f"bad action format {for_message(text)!r}: a no-limit raise needs its "
                                         "size (r<N>); changed to call")
    total = int(size.group(1))
    if not legal.can_raise:
        return Reply(_call(legal), True, f"invalid action {for_message(text)!r}: no raise is allowed here; changed "
                                         "to call", Action(ActionKind.RAISE, total - spent_before_round))
    low, high = spent_before_round + legal.min_raise_to, spent_before_round + legal.max_raise_to
    if total < low:
        return Reply(raise_to(legal.min_raise_to), False, f"raise of {total} increased to {low}")
    if total > high:
        return Reply(raise_to(legal.max_raise_to), False, f"raise of {total} decreased to {high}")
    return Reply(raise_to(total - spent_before_round))


__all__ = ["Reply", "decode"]
