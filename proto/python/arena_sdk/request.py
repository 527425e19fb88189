"""``Request``: a typed, read-only view of an ActionRequest, with the numbers a bot usually wants ready to use.

A bot answers thousands of requests and most read a handful of fields, so only the ids, the seat, the button and
the cards are read up front; everything else is read from the message the first time it is asked for, then kept.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, NoReturn, TypeVar, overload

from arena_sdk.cards import card_rank, format_cards
from arena_sdk.pb import bot_pb2
from arena_sdk.types import (
    Clock,
    Event,
    LegalActions,
    Pot,
    SeatStatus,
    Street,
    TableConfig,
    _seat_status_of,
    _street_of,
    parse_card_list,
)

__all__ = ["Request"]

_T = TypeVar("_T")

_IN_HAND = (SeatStatus.ACTIVE, SeatStatus.ALL_IN)
_STREET_BY_BOARD = {0: Street.PREFLOP, 3: Street.FLOP, 4: Street.TURN, 5: Street.RIVER}


class _lazy(Generic[_T]):  # lower case: it is used as a decorator, like functools.cached_property
    """``functools.cached_property`` without its lock (Python 3.11 takes one on every first access): the value is
    computed on the first access and stored in the instance's ``__dict__``, where later reads find it directly.
    """

    def __init__(self, func: Callable[[Any], _T]) -> None:
        self.func = func
        self.name = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> _lazy[_T]: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> _T: ...

    def __get__(self, instance: object, owner: type | None = None) -> _T | _lazy[_T]:
        if instance is None:
            return self
        value: _T = self.func(instance)
        instance.__dict__[self.name] = value
        return value


class Request:
    """It is your turn: everything the referee said in one ActionRequest, as plain Python values.

    Cards are ints 0..51 (``arena.cards.format_card`` prints them); per-seat tuples (``stacks``, ``bets``,
    ``committed``, ``statuses``, ``names``) are indexed by seat number. ``pb`` is the raw protobuf message.
    """

    pb: bot_pb2.ActionRequest
    table_id: str
    hand_id: str
    request_id: int
    seat: int
    hole_cards: tuple[int, ...]
    board: tuple[int, ...]
    button: int

    def __init__(self, pb: bot_pb2.ActionRequest) -> None:
        # Read up front: what every answer echoes, and the cards (a malformed card fails here, not inside ``act``).
        values = self.__dict__
        values["pb"] = pb
        values["table_id"] = pb.table_id
        values["hand_id"] = pb.hand_id
        values["request_id"] = int(pb.request_id)
        values["seat"] = pb.seat
        values["hole_cards"] = parse_card_list(pb.hole_cards)
        values["board"] = parse_card_list(pb.board)
        values["button"] = pb.button

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"Request is read-only (tried to set {name!r})")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"Request is read-only (tried to delete {name!r})")

    def __repr__(self) -> str:
        return (
            f"Request(hand={self.hand_id!r}, request_id={self.request_id}, seat={self.seat}, "
            f"hole={format_cards(self.hole_cards)!r}, board={format_cards(self.board)!r}, "
            f"street={self.street.name}, pot={self.pot}, to_call={self.to_call}, legal={self.legal})"
        )

    # ------------------------------------------------------------------ read on first access

    @_lazy
    def street(self) -> Street:
        """The betting round; from the number of board cards if the referee left it out."""
        street = _street_of(self.pb.street)
        if street is Street.UNSPECIFIED:
            street = _STREET_BY_BOARD.get(len(self.board), Street.UNSPECIFIED)
        return street

    @_lazy
    def legal(self) -> LegalActions:
        """Exactly what you may do now."""
        return LegalActions.from_pb(self.pb.legal)

    @_lazy
    def clock(self) -> Clock:
        """Time left for this action, then in the time bank."""
        clock = self.pb.clock
        return Clock(int(clock.action_ms_left), int(clock.bank_ms_left))

    @_lazy
    def config(self) -> TableConfig:
        """The table's rules; ``num_seats`` is never 0 (if the referee left it out, the seats sent say it)."""
        config = TableConfig.from_pb(self.pb.config)
        if config.num_seats <= 0:
            config = TableConfig(
                num_seats=self._size,
                structure=config.structure,
                small_blind=config.small_blind,
                big_blind=config.big_blind,
            )
        return config

    @_lazy
    def pots(self) -> tuple[Pot, ...]:
        """The main pot, then the side pots."""
        return tuple([Pot(int(p.amount), tuple(p.eligible_seats)) for p in self.pb.pots])

    @_lazy
    def stacks(self) -> tuple[int, ...]:
        """Chips behind, per seat."""
        return self._per_seat[0]

    @_lazy
    def bets(self) -> tuple[int, ...]:
        """Chips put in on this street, per seat."""
        return self._per_seat[1]

    @_lazy
    def committed(self) -> tuple[int, ...]:
        """Chips put in during the whole hand, per seat."""
        return self._per_seat[2]

    @_lazy
    def statuses(self) -> tuple[SeatStatus, ...]:
        """Each seat's state in the hand (SITTING_OUT for a seat the referee did not describe)."""
        return self._per_seat[3]

    @_lazy
    def names(self) -> tuple[str, ...]:
        """The names the bots are registered under (not what their Joins say), per seat ("" for an empty seat)."""
        return self._per_seat[4]

    @_lazy
    def history(self) -> tuple[Event, ...]:
        """Everything public that happened in this hand so far, in order, as this seat sees it (R4.2)."""
        return tuple([Event.from_pb(e) for e in self.pb.history])

    @_lazy
    def _size(self) -> int:
        """Length of the per-seat tuples: the table's size, stretched to cover every seat the request names."""
        pb = self.pb
        return max([pb.config.num_seats, len(pb.seats), pb.seat + 1, *[s.seat + 1 for s in pb.seats]])

    @_lazy
    def _per_seat(
        self,
    ) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[SeatStatus, ...], tuple[str, ...]]:
        size = self._size
        stacks, bets, committed = [0] * size, [0] * size, [0] * size
        statuses = [SeatStatus.SITTING_OUT] * size
        names = [""] * size
        for s in self.pb.seats:
            i = s.seat
            if 0 <= i < size:
                stacks[i], bets[i], committed[i] = int(s.stack), int(s.bet), int(s.committed)
                statuses[i] = _seat_status_of(s.status)
                names[i] = s.name
        return tuple(stacks), tuple(bets), tuple(committed), tuple(statuses), tuple(names)

    # ------------------------------------------------------------------ derived numbers

    @property
    def my_stack(self) -> int:
        """Chips you have behind (not yet put in this hand)."""
        return self.stacks[self.seat]

    @property
    def my_bet(self) -> int:
        """Chips you have put in on this street (your raise-to total so far)."""
        return self.bets[self.seat]

    @property
    def pot(self) -> int:
        """All chips in the middle: every pot, this street's bets included (the sum of ``committed``)."""
        if self.pots:
            return sum(p.amount for p in self.pots)
        return sum(self.committed)

    @property
    def to_call(self) -> int:
        """Chips a call adds (``legal.call_amount``); 0 when you can check."""
        return self.legal.call_amount

    @property
    def pot_odds(self) -> float:
        """The share of the pot after your call that the call costs: call equity needed to break even (0 if free)."""
        if self.to_call <= 0:
            return 0.0
        return self.to_call / (self.pot + self.to_call)

    @property
    def num_seats(self) -> int:
        """Seats at the table."""
        return len(self.stacks)

    @property
    def num_active_opponents(self) -> int:
        """Opponents still in the hand (not folded, dealt in), all-in ones included: who you must beat."""
        return sum(1 for s, status in enumerate(self.statuses) if s != self.seat and status in _IN_HAND)

    @property
    def hole_ranks(self) -> tuple[int, ...]:
        """Ranks of your hole cards, highest first: 0 for a deuce up to 12 for an ace."""
        return tuple(sorted((card_rank(c) for c in self.hole_cards), reverse=True))

    @property
    def is_pocket_pair(self) -> bool:
        """Whether your two hole cards have the same rank."""
        ranks = self.hole_ranks
        return len(ranks) == 2 and ranks[0] == ranks[1]
