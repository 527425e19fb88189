"""Read and write PHH, the Poker Hand History format (one TOML file per hand), for hold'em.

Supported: ``NT`` (no-limit) and ``FT`` (fixed-limit) hold'em with antes, blinds, unknown cards ``????``,
show/muck and board cards written after a show-down. Pot-limit hold'em has no code in the standard; arena writes
it as ``variant = "NT"`` plus the user-defined field ``_arena_structure = "pot-limit"`` (the PHH convention for
extra fields is a leading underscore), so PokerKit still loads it (every pot-limit action is a legal no-limit one)
and arena reads it back as pot-limit.
"""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomli_w

from arena.cards import CardError, format_cards, parse_cards
from arena.engine.config import MAX_SEATS, MIN_SEATS

VARIANTS = ("NT", "FT")
STRUCTURE_FIELD = "_arena_structure"
_KNOWN = (
    "variant",
    "ante_trimming_status",
    "antes",
    "blinds_or_straddles",
    "bring_in",
    "min_bet",
    "small_bet",
    "big_bet",
    "starting_stacks",
    "actions",
    "finishing_stacks",
)


class PhhError(ValueError):
    """A PHH file that cannot be read: bad TOML, a missing or ill-typed field, an action that does not parse."""


@dataclass(frozen=True, slots=True)
class PhhAction:
    """One parsed action line. ``actor`` is the 0-based player index (``p1`` is 0) or None for the dealer.

    ``verb`` is one of ``dh`` (deal hole), ``db`` (deal board), ``f``, ``cc``, ``cbr``, ``sm`` (show or muck).
    ``cards`` is None for unknown cards (``????``); ``amount`` is the raise-to total of ``cbr``.
    """

    actor: int | None
    verb: str
    cards: tuple[int, ...] | None = ()
    amount: int = 0
    text: str = ""


@dataclass(slots=True)
class PhhHand:
    """One hand history: the fields arena uses, plus every other field kept in order in ``extra``."""

    variant: str
    antes: list[int]
    blinds_or_straddles: list[int]
    starting_stacks: list[int]
    actions: list[str]
    min_bet: int | None = None
    small_bet: int | None = None
    big_bet: int | None = None
    ante_trimming_status: bool | None = None
    finishing_stacks: list[float] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def num_players(self) -> int:
        """Number of seats in the hand."""
        return len(self.starting_stacks)

    def parsed_actions(self) -> list[PhhAction]:
        """Every action line parsed; raises ``PhhError`` naming the first line that does not parse."""
        return [parse_action(text, index) for index, text in enumerate(self.actions)]


def parse_action(text: str, index: int = 0) -> PhhAction:
    """Parse one PHH action such as ``d dh p1 AcKs``, ``p2 cbr 300``, ``p3 f`` or ``p1 sm`` (comments after ``#``)."""
    body = text.split("#", 1)[0].split()
    where = f"action {index} {text!r}"
    if not body:
        raise PhhError(f"{where}: empty action")
    try:
        if body[0] == "d":
            if len(body) >= 2 and body[1] == "dh" and len(body) == 4:
                return PhhAction(_player(body[2], where), "dh", _cards(body[3]), 0, text)
            if len(body) >= 2 and body[1] == "db" and len(body) == 3:
                board = _cards(body[2])
                if board is None:
                    raise PhhError(f"{where}: board cards cannot be unknown")
                return PhhAction(None, "db", board, 0, text)
            raise PhhError(f"{where}: expected 'd dh pN CARDS' or 'd db CARDS'")
        actor = _player(body[0], where)
        verb = body[1] if len(body) > 1 else ""
        if verb in ("f", "cc") and len(body) == 2:
            return PhhAction(actor, verb, (), 0, text)
        if verb == "cbr" and len(body) == 3:
            try:
                amount = int(body[2])
            except ValueError:
                raise PhhError(f"{where}: amount {body[2]!r} is not a whole number of chips") from None
            return PhhAction(actor, "cbr", (), amount, text)
        if verb == "sm" and len(body) in (2, 3):
            return PhhAction(actor, "sm", _cards(body[2]) if len(body) == 3 else (), 0, text)
        raise PhhError(f"{where}: unknown or malformed action (hold'em uses f, cc, cbr AMOUNT, sm [CARDS])")
    except CardError as exc:
        raise PhhError(f"{where}: {exc}") from None


def _player(token: str, where: str) -> int:
    """``p3`` -> 2."""
    if len(token) >= 2 and token[0] == "p" and token[1:].isdigit() and int(token[1:]) >= 1:
        return int(token[1:]) - 1
    raise PhhError(f"{where}: {token!r} is not a player (p1, p2, ...)")


def _cards(token: str) -> tuple[int, ...] | None:
    """Cards of an action; None when any is unknown (``??``)."""
    if "?" in token:
        return None
    return tuple(parse_cards(token))


def _int_list(data: dict[str, Any], key: str, where: str, required: bool = True) -> list[int]:
    value = data.get(key)
    if value is None and not required:
        return []
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise PhhError(f"{where}: field {key!r} must be a list of whole numbers")
    return list(value)


def _opt_int(data: dict[str, Any], key: str, where: str) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise PhhError(f"{where}: field {key!r} must be a whole number")
    return value


def loads(text: str, where: str = "<string>") -> PhhHand:
    """Parse PHH text; ``where`` names the source in error messages."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PhhError(f"{where}: not valid TOML: {exc}") from None
    except RecursionError:
        raise PhhError(f"{where}: not a hand history: nested too deeply to read") from None
    variant = data.get("variant")
    if variant not in VARIANTS:
        raise PhhError(f"{where}: variant {variant!r} is not Texas hold'em (arena reads {', '.join(VARIANTS)})")
    actions = data.get("actions")
    if not isinstance(actions, list) or not all(isinstance(a, str) for a in actions):
        raise PhhError(f"{where}: field 'actions' must be a list of strings")
    stacks = _int_list(data, "starting_stacks", where)
    n = len(stacks)
    if not MIN_SEATS <= n <= MAX_SEATS:
        raise PhhError(f"{where}: {n} players: a table has {MIN_SEATS} to {MAX_SEATS} seats (R2.1)")
    antes = _int_list(data, "antes", where, required=False) or [0] * n
    blinds = _int_list(data, "blinds_or_straddles", where, required=False) or [0] * n
    for key, values in (("antes", antes), ("blinds_or_straddles", blinds)):
        if len(values) != n:
            raise PhhError(f"{where}: field {key!r} has {len(values)} entries for {n} players")
    finishing = data.get("finishing_stacks")
    if finishing is not None and (
        not isinstance(finishing, list)
        or len(finishing) != n
        or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in finishing)
    ):
        raise PhhError(f"{where}: field 'finishing_stacks' must be {n} numbers")
    trimming = data.get("ante_trimming_status")
    return PhhHand(
        variant=variant,
        antes=antes,
        blinds_or_straddles=blinds,
        starting_stacks=stacks,
        actions=list(actions),
        min_bet=_opt_int(data, "min_bet", where),
        small_bet=_opt_int(data, "small_bet", where),
        big_bet=_opt_int(data, "big_bet", where),
        ante_trimming_status=bool(trimming) if trimming is not None else None,
        finishing_stacks=list(finishing) if finishing is not None else None,
        extra={k: v for k, v in data.items() if k not in _KNOWN},
    )


def load(path: str | Path) -> PhhHand:
    """Read one PHH file; raises ``PhhError`` (with the path) when it cannot be read or parsed."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PhhError(f"{path}: cannot read: {exc}") from None
    return loads(text, str(path))


def dumps(hand: PhhHand) -> str:
    """PHH text of a hand, fields in the conventional order, extra fields after the actions."""
    data: dict[str, Any] = {"variant": hand.variant}
    if hand.ante_trimming_status is not None:
        data["ante_trimming_status"] = hand.ante_trimming_status
    data["antes"] = hand.antes
    data["blinds_or_straddles"] = hand.blinds_or_straddles
    for key in ("min_bet", "small_bet", "big_bet"):
        value = getattr(hand, key)
        if value is not None:
            data[key] = value
    data["starting_stacks"] = hand.starting_stacks
    data["actions"] = hand.actions
    data.update(hand.extra)
    if hand.finishing_stacks is not None:
        data["finishing_stacks"] = hand.finishing_stacks
    return tomli_w.dumps(data, multiline_strings=False)


def dump(hand: PhhHand, path: str | Path) -> None:
    """Write one PHH file."""
    Path(path).write_text(dumps(hand), encoding="utf-8")


def format_action(actor: int | None, verb: str, cards: Sequence[int] | None = (), amount: int = 0) -> str:
    """One PHH action line from its parts (``cards=None`` writes unknown cards)."""
    if verb == "dh":
        shown = "????" if cards is None else format_cards(cards)
        return f"d dh p{(actor or 0) + 1} {shown}"
    if verb == "db":
        return f"d db {format_cards(cards or ())}"
    who = f"p{(actor or 0) + 1}"
    if verb == "cbr":
        return f"{who} cbr {amount}"
    if verb == "sm":
        return f"{who} sm {format_cards(cards)}".rstrip() if cards else f"{who} sm"
    return f"{who} {verb}"
