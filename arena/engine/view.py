"""What one seat may see of a hand (R4.2, R8.4): its own hole cards, public cards and actions, nothing else."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from arena.engine.actions import Event, EventKind, LegalActions, Street
from arena.engine.config import TableConfig
from arena.engine.hand import Hand
from arena.engine.pots import Pot


@dataclass(slots=True)  # not frozen: built for every decision, and a frozen __init__ costs ten times more
class SeatView:
    """A seat's picture of the table: enough for a stateless bot to act (see proto ActionRequest)."""

    seat: int
    num_seats: int
    button: int
    street: Street
    hole_cards: tuple[int, ...]
    board: tuple[int, ...]
    stacks: tuple[int, ...]
    bets: tuple[int, ...]
    committed: tuple[int, ...]
    folded: tuple[bool, ...]
    pots: tuple[Pot, ...]
    to_act: int | None
    legal: LegalActions | None
    history: tuple[Event, ...]
    config: TableConfig


def public_history(events: list[Event], seat: int) -> tuple[Event, ...]:
    """The events with every hole card hidden except ``seat``'s own; cards shown at showdown stay (R8.4)."""
    hidden = EventKind.DEAL_HOLE
    return tuple(
        e._replace(cards=()) if e.kind is hidden and e.seat != seat else e for e in events
    )


class PublicHistories:
    """``public_history`` of one hand for every seat, kept up to date as the hand goes on rather than filtered
    from its start for every decision: the engine only appends events, so each seat's history is extended with
    the events it has not seen yet. Use one per hand; ``of`` equals ``public_history(events, seat)``.
    """

    __slots__ = ("_seen",)

    def __init__(self) -> None:
        self._seen: dict[int, list[Event]] = {}

    def of(self, events: Sequence[Event], seat: int) -> tuple[Event, ...]:
        """``public_history(events, seat)`` for the hand's events so far."""
        seen = self._seen.setdefault(seat, [])
        start = len(seen)
        if start > len(events):  # not the events of this hand
            raise ValueError("PublicHistories is for one hand, whose events only grow")
        hidden = EventKind.DEAL_HOLE
        for e in events[start:]:
            seen.append(e._replace(cards=()) if e.kind is hidden and e.seat != seat else e)
        return tuple(seen)


def seat_view(
    hand: Hand,
    seat: int,
    history: tuple[Event, ...] | None = None,
    legal: LegalActions | None = None,
) -> SeatView:
    """Build ``seat``'s view of ``hand``; legal actions are included only when it is that seat's turn.
    A caller that already has them may pass ``history`` (``public_history(hand.events, seat)``, e.g. from
    ``PublicHistories``) and, on the seat's turn, ``legal`` (``hand.legal_actions()``) to save their cost.
    """
    if not 0 <= seat < hand.num_seats:
        raise ValueError(f"seat {seat} is not at this {hand.num_seats}-seat table")
    return SeatView(
        seat=seat,
        num_seats=hand.num_seats,
        button=hand.button,
        street=hand.street,
        hole_cards=hand.hole[seat],
        board=tuple(hand.board),
        stacks=tuple(hand.stacks),
        bets=tuple(hand.bets),
        committed=tuple(hand.committed),
        folded=tuple(hand.folded),
        pots=tuple(hand.pots()),
        to_act=hand.to_act,
        legal=(hand.legal_actions() if legal is None else legal) if hand.to_act == seat else None,
        history=public_history(hand.events, seat) if history is None else history,
        config=hand.config,
    )
