"""MATCHSTATE lines from the arena's public history of a hand: every state the ACPC dealer sends a seat, in order.

``MATCHSTATE:<position>:<handNumber>:<betting>:<cards>``: ``position`` counts from the first player after the button
(heads-up the big blind is 0, the button 1); ``betting`` is one string of actions per round, rounds separated by
``/`` (blinds are not written): ``f``, ``c`` (check or call), ``r`` (bet or raise; in no-limit ``r<N>`` with N the
chips the player has put in over the whole hand, every round); ``cards`` are the hole cards per position separated
by ``|`` (the viewer's own, and at a showdown those of every player who reached it), then ``/flop/turn/river`` as
dealt. A round that ends opens the next at once (``rrc/``), so one state follows each action; an all-in before the
river is followed by the whole board (``r20000c///``). The dealer sends the initial state and the state after every
action to every seat; the arena tells a seat about others' actions only when it next asks it or ends the hand, so
the bridge sends the states it has not sent yet then, in order: the same lines, later.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from arena.adapters.acpc.gamedef import Betting
from arena_sdk.cards import format_card
from arena_sdk.types import Event, EventKind

_POSTS = (EventKind.POST_SMALL_BLIND, EventKind.POST_BIG_BLIND, EventKind.POST_ENTRY_BLIND)
_ACTIONS = (EventKind.FOLD, EventKind.CHECK, EventKind.CALL, EventKind.BET, EventKind.RAISE, EventKind.ALL_IN)


def position(seat: int, button: int, players: int) -> int:
    """The ACPC position of arena ``seat``: 0 for the first seat after the button, ``players - 1`` the button."""
    return (seat - button - 1) % players


def seat_of(position_: int, button: int, players: int) -> int:
    """The arena seat at ACPC position ``position_``."""
    return (button + 1 + position_) % players


def cards_text(cards: Iterable[int]) -> str:
    """Cards as the ACPC writes them, e.g. ``TdAs`` (the arena's card text is the ACPC's)."""
    return "".join(format_card(c) for c in cards)


class HandStates:
    """The MATCHSTATE lines of one hand as one seat sees them: ``states(history)`` is every state so far, the
    initial one first, one more after each action."""

    __slots__ = ("betting", "button", "hand_number", "hole", "players", "seat")

    def __init__(self, betting: Betting, players: int, button: int, seat: int, hand_number: int,
                 hole: Sequence[int]) -> None:
        self.betting = betting
        self.players = players
        self.button = button
        self.seat = seat
        self.hand_number = hand_number
        self.hole = tuple(hole)

    @property
    def position(self) -> int:
        """The viewer's ACPC position in this hand."""
        return position(self.seat, self.button, self.players)

    def initial(self) -> str:
        """The state before anyone acts."""
        return self._line([[]], [[]], {})

    def states(self, history: Sequence[Event], final: bool = False) -> list[str]:
        """Every state of the hand so far, from its public ``history`` (an ActionRequest's or a HandEnd's); with
        ``final``, the last one shows the hole cards of every player who reached the showdown (SHOW events)."""
        nolimit = self.betting is Betting.NO_LIMIT
        rounds: list[list[str]] = [[]]
        boards: list[list[int]] = [[]]
        bets: dict[int, int] = {}  # chips put in on this round, by seat
        before: dict[int, int] = {}  # chips put in on earlier rounds, by seat
        shown: dict[int, tuple[int, ...]] = {}
        out: list[str] = []
        for event in history:
            kind = event.kind
            if kind in _ACTIONS:
                out.append(self._line(rounds, boards, {}))  # the state this action answers
                seat = event.seat
                if kind is EventKind.FOLD:
                    token = "f"
                elif kind is EventKind.CHECK:
                    token = "c"
                elif kind is EventKind.CALL:
                    bets[seat] = bets.get(seat, 0) + event.amount
                    token = "c"
                else:  # BET, RAISE: the street's raise-to total; ALL_IN: the same, a raise only above the bet
                    raised = kind is not EventKind.ALL_IN or event.amount > max(bets.values(), default=0)
                    bets[seat] = event.amount
                    token = ("r" + str(before.get(seat, 0) + event.amount) if nolimit else "r") if raised else "c"
                rounds[-1].append(token)
            elif kind is EventKind.DEAL_BOARD:
                for seat, chips in bets.items():
                    before[seat] = before.get(seat, 0) + chips
                bets.clear()
                rounds.append([])
                boards.append(list(event.cards))
            elif kind in _POSTS:
                bets[event.seat] = bets.get(event.seat, 0) + event.amount
            elif kind is EventKind.POST_ANTE:
                before[event.seat] = before.get(event.seat, 0) + event.amount
            elif kind is EventKind.SHOW:
                shown[event.seat] = event.cards
        out.append(self._line(rounds, boards, shown if final else {}))
        return out

    def _line(self, rounds: list[list[str]], boards: list[list[int]], shown: dict[int, tuple[int, ...]]) -> str:
        hole = []
        for p in range(self.players):
            seat = seat_of(p, self.button, self.players)
            hole.append(cards_text(self.hole if seat == self.seat else shown.get(seat, ())))
        board = "".join("/" + cards_text(cards) for cards in boards[1:])
        betting = "/".join("".join(r) for r in rounds)
        return f"MATCHSTATE:{self.position}:{self.hand_number}:{betting}:{'|'.join(hole)}{board}"


__all__ = ["HandStates", "cards_text", "position", "seat_of"]
