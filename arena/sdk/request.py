"""``Request``: a typed, read-only view of an ActionRequest, with the numbers a bot usually wants ready to use."""

from __future__ import annotations

from functools import cached_property
from typing import Any, NoReturn

from arena.cards import card_rank, format_cards
from arena.sdk.types import (
    Clock,
    Event,
    LegalActions,
    Pot,
    SeatStatus,
    Street,
    TableConfig,
    parse_card_list,
)
from arena.transport.pb import bot_pb2

__all__ = ["Request"]

_IN_HAND = (SeatStatus.ACTIVE, SeatStatus.ALL_IN)
_STREET_BY_BOARD = {0: Street.PREFLOP, 3: Street.FLOP, 4: Street.TURN, 5: Street.RIVER}


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
    street: Street
    button: int
    stacks: tuple[int, ...]
    bets: tuple[int, ...]
    committed: tuple[int, ...]
    statuses: tuple[SeatStatus, ...]
    names: tuple[str, ...]
    pots: tuple[Pot, ...]
    legal: LegalActions
    clock: Clock
    config: TableConfig

    def __init__(self, pb: bot_pb2.ActionRequest) -> None:
        seats = list(pb.seats)
        size = max([pb.config.num_seats, len(seats), pb.seat + 1, *(s.seat + 1 for s in seats)])
        stacks, bets, committed = [0] * size, [0] * size, [0] * size
        statuses = [SeatStatus.SITTING_OUT] * size
        names = [""] * size
        for s in seats:
            if 0 <= s.seat < size:
                stacks[s.seat], bets[s.seat], committed[s.seat] = int(s.stack), int(s.bet), int(s.committed)
                statuses[s.seat] = SeatStatus(s.status)
                names[s.seat] = s.name
        board = parse_card_list(pb.board)
        street = Street(pb.street)
        if street is Street.UNSPECIFIED:
            street = _STREET_BY_BOARD.get(len(board), Street.UNSPECIFIED)
        config = TableConfig.from_pb(pb.config)
        if config.num_seats <= 0:
            config = TableConfig(
                num_seats=size, structure=config.structure, small_blind=config.small_blind, big_blind=config.big_blind
            )
        values: dict[str, Any] = {
            "pb": pb,
            "table_id": pb.table_id,
            "hand_id": pb.hand_id,
            "request_id": int(pb.request_id),
            "seat": pb.seat,
            "hole_cards": parse_card_list(pb.hole_cards),
            "board": board,
            "street": street,
            "button": pb.button,
            "stacks": tuple(stacks),
            "bets": tuple(bets),
            "committed": tuple(committed),
            "statuses": tuple(statuses),
            "names": tuple(names),
            "pots": tuple(Pot(int(p.amount), tuple(p.eligible_seats)) for p in pb.pots),
            "legal": LegalActions.from_pb(pb.legal),
            "clock": Clock(int(pb.clock.action_ms_left), int(pb.clock.bank_ms_left)),
            "config": config,
        }
        for key, value in values.items():
            object.__setattr__(self, key, value)

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

    @cached_property
    def history(self) -> tuple[Event, ...]:
        """Everything public that happened in this hand so far, in order, as this seat sees it (R4.2)."""
        return tuple(Event.from_pb(e) for e in self.pb.history)

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
