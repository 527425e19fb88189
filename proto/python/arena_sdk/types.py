"""Plain Python values for what the referee sends: enums that mirror the protocol's, small frozen dataclasses.

The enums use the protocol's numbers (``Street.FLOP == poker_pb2.STREET_FLOP``), so converting is ``Street(n)``.
A number this version does not know becomes ``UNSPECIFIED`` instead of an error: the protocol only grows, and a bot
must keep working when it does (proto/README.md, "Compatibility").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import IntEnum
from typing import TypeVar

from arena_sdk.cards import format_card, format_cards, parse_card
from arena_sdk.pb import poker_pb2

__all__ = [
    "ActionKind",
    "Clock",
    "Event",
    "EventKind",
    "LegalActions",
    "Pot",
    "SeatStatus",
    "Street",
    "Structure",
    "TableConfig",
    "parse_card_list",
]


class _ProtoEnum(IntEnum):
    """An IntEnum that maps numbers it does not know to its ``UNSPECIFIED`` (0) member."""

    @classmethod
    def _missing_(cls, value: object) -> _ProtoEnum:
        return cls(0)


class Street(_ProtoEnum):
    """A betting round (arena.v1.Street); compare with ``<``: PREFLOP < FLOP < TURN < RIVER."""

    UNSPECIFIED = 0
    PREFLOP = 1
    FLOP = 2
    TURN = 3
    RIVER = 4
    SHOWDOWN = 5


class ActionKind(_ProtoEnum):
    """What a bot does (arena.v1.ActionKind). RAISE is a bet or a raise, with a raise-to total (R6.2)."""

    UNSPECIFIED = 0
    FOLD = 1
    CHECK = 2
    CALL = 3
    RAISE = 4
    ALL_IN = 5


class SeatStatus(_ProtoEnum):
    """A seat's state within the hand (arena.v1.SeatStatus)."""

    UNSPECIFIED = 0
    ACTIVE = 1
    FOLDED = 2
    ALL_IN = 3
    SITTING_OUT = 4


class Structure(_ProtoEnum):
    """Betting structure of the table (arena.v1.Structure)."""

    UNSPECIFIED = 0
    NO_LIMIT = 1
    POT_LIMIT = 2
    FIXED_LIMIT = 3


class EventKind(_ProtoEnum):
    """Kind of a public event of the hand's history (arena.v1.EventKind)."""

    UNSPECIFIED = 0
    POST_SMALL_BLIND = 1
    POST_BIG_BLIND = 2
    POST_ANTE = 3
    POST_ENTRY_BLIND = 4
    DEAL_HOLE = 5
    DEAL_BOARD = 6
    FOLD = 7
    CHECK = 8
    CALL = 9
    BET = 10
    RAISE = 11
    ALL_IN = 12
    UNCALLED_RETURN = 13
    SHOW = 14
    MUCK = 15
    WIN_POT = 16


_E = TypeVar("_E", bound=_ProtoEnum)


def _converter(cls: type[_E]) -> Callable[[int], _E]:
    """``cls(n)`` as a dict lookup (a tenth of the cost of calling the enum class), unknown numbers UNSPECIFIED."""
    members = {int(member): member for member in cls}
    unknown = cls(0)
    get = members.get

    def convert(value: int) -> _E:
        return get(value, unknown)

    return convert


_street_of = _converter(Street)
_seat_status_of = _converter(SeatStatus)
_structure_of = _converter(Structure)
_event_kind_of = _converter(EventKind)

_CARD_BY_TEXT = {format_card(card): card for card in range(52)}  # the referee sends canonical text: "As", "Td"


_card_of_text = _CARD_BY_TEXT.__getitem__


def parse_card_list(texts: Iterable[str]) -> tuple[int, ...]:
    """Cards sent as text (``["As", "Kd"]``) as card ints 0..51 (see ``arena.cards``)."""
    if iter(texts) is texts:  # a one-shot iterator: kept, for the full parser should the quick read stop
        texts = list(texts)
    try:
        return tuple(map(_card_of_text, texts))  # the canonical text the referee sends, read in C
    except (KeyError, TypeError):  # anything else ("as", "10d", not a card): the full parser says what it is
        return tuple([_CARD_BY_TEXT[t] if t in _CARD_BY_TEXT else parse_card(t) for t in texts])


@dataclass(frozen=True, slots=True)
class LegalActions:
    """Exactly what the seat may do now (arena.v1.LegalActions): pick from this and no rule is ever broken.

    ``call_amount`` is the chips a call adds (0 when there is nothing to call); a raise is a raise-to total
    in ``[min_raise_to, max_raise_to]`` (both 0 when ``can_raise`` is false).
    """

    can_fold: bool
    can_check: bool
    can_call: bool
    call_amount: int
    can_raise: bool
    min_raise_to: int
    max_raise_to: int

    @classmethod
    def from_pb(cls, pb: poker_pb2.LegalActions) -> LegalActions:
        """Read the protocol message."""
        # positional, and no int() around int64 fields, which protobuf reads as ints: a request's most-read field
        return cls(pb.can_fold, pb.can_check, pb.can_call, pb.call_amount, pb.can_raise, pb.min_raise_to,
                   pb.max_raise_to)

    def clamp(self, amount: int) -> int:
        """``amount`` moved into ``[min_raise_to, max_raise_to]``, so a sized bet is always a legal raise-to total."""
        return max(self.min_raise_to, min(self.max_raise_to, int(amount)))

    def allows(self, kind: ActionKind, amount: int = 0) -> bool:
        """Whether an action of ``kind`` (with raise-to ``amount`` for RAISE) is accepted now."""
        if kind is ActionKind.FOLD:
            return self.can_fold
        if kind is ActionKind.CHECK:
            return self.can_check
        if kind is ActionKind.CALL:
            return self.can_call
        if kind is ActionKind.RAISE:
            return self.can_raise and self.min_raise_to <= amount <= self.max_raise_to
        return kind is ActionKind.ALL_IN


@dataclass(frozen=True, slots=True)
class Clock:
    """Time left to answer (arena.v1.Clock): this action's allowance, then the match's time bank."""

    action_ms_left: int
    bank_ms_left: int


@dataclass(frozen=True, slots=True)
class TableConfig:
    """The table's rules (arena.v1.TableConfig), repeated in every request so a stateless bot needs nothing else."""

    num_seats: int
    structure: Structure
    small_blind: int
    big_blind: int
    ante: int = 0
    big_blind_ante: bool = False
    starting_stack: int = 0
    small_bet: int = 0
    big_bet: int = 0
    raise_cap: int = 0
    reveal_all_at_showdown: bool = True
    uncapped_heads_up: bool = False

    @classmethod
    def from_pb(cls, pb: poker_pb2.TableConfig) -> TableConfig:
        """Read the protocol message."""
        return cls(
            num_seats=pb.num_seats,
            structure=_structure_of(pb.structure),
            small_blind=int(pb.small_blind),
            big_blind=int(pb.big_blind),
            ante=int(pb.ante),
            big_blind_ante=pb.big_blind_ante,
            starting_stack=int(pb.starting_stack),
            small_bet=int(pb.small_bet),
            big_bet=int(pb.big_bet),
            raise_cap=pb.raise_cap,
            reveal_all_at_showdown=pb.reveal_all_at_showdown,
            uncapped_heads_up=pb.uncapped_heads_up,
        )


@dataclass(frozen=True, slots=True)
class Pot:
    """A main or side pot (R10.1): its chips and the seats that can win it."""

    amount: int
    eligible_seats: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Event:
    """One public thing that happened in the hand (arena.v1.PublicEvent); ``seat`` is -1 for the dealer.

    ``amount`` is the raise-to total for BET, RAISE and ALL_IN, the chips for posts, calls, returns and wins.
    """

    kind: EventKind
    seat: int
    street: Street
    amount: int = 0
    cards: tuple[int, ...] = ()
    by_timeout: bool = False
    pot_index: int = 0

    @classmethod
    def from_pb(cls, pb: poker_pb2.PublicEvent) -> Event:
        """Read the protocol message."""
        return cls(
            kind=_event_kind_of(pb.kind),
            seat=pb.seat,
            street=_street_of(pb.street),
            amount=int(pb.amount),
            cards=parse_card_list(pb.cards),
            by_timeout=pb.by_timeout,
            pot_index=pb.pot_index,
        )

    def __str__(self) -> str:
        text = f"{self.kind.name.lower()} seat {self.seat}"
        if self.amount:
            text += f" {self.amount}"
        if self.cards:
            text += f" [{format_cards(self.cards, ' ')}]"
        return text
