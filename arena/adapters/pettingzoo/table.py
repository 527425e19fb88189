"""What a seat sees and may do, the same in training and in competition: one ``SeatState`` read from the engine's
``Hand`` (the PettingZoo environment) or from an ``arena_sdk.Request`` (a policy served as an arena bot), then the
one observation vector, action mask and action table made from it. A policy trained on the environment therefore
sees exactly the same numbers when it plays a real match.

The observation (``observation_size(seats)`` float32 numbers; chips in big blinds):

* 52: the seat's hole cards, one-hot by card number (``arena_sdk.cards``: rank * 4 + suit);
* 52: the board cards, one-hot;
* 4: the street, one-hot (pre-flop, flop, turn, river);
* 6 per seat, starting with the observer's own seat and going clockwise: stack behind, bet on this street, chips
  committed this hand, folded, all-in, holds the button (each 0 or 1);
* 4: the pot (every chip committed), the chips a call adds, the smallest and the largest raise-to total (both 0
  when raising is not allowed).

The actions (``ACTIONS``, a ``Discrete(7)`` space): 0 fold, 1 check or call, 2 the minimum raise, 3 a raise of half
the pot, 4 of three quarters of the pot, 5 of the pot, 6 all-in. A pot-sized raise is to ``bet + call +
fraction * (pot + call)`` (the pot after the call), rounded down; the sized raises are offered only when that total
lies strictly between the minimum raise and the all-in (otherwise one of those is the same action). The mask allows
fold only when a bet is owed (R6.1a: a free check is never folded), check or call and all-in always, the raises when
raising is allowed (R7).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from arena.engine import Action, ActionKind, Hand
from arena_sdk import Request, SeatStatus

ACTIONS = ("fold", "check/call", "raise min", "raise 1/2 pot", "raise 3/4 pot", "raise pot", "all-in")
"""The discrete actions, by index."""
FOLD, CHECK_CALL, RAISE_MIN, ALL_IN = 0, 1, 2, 6
POT_FRACTIONS = {3: 0.5, 4: 0.75, 5: 1.0}
"""The pot-sized raises: action index -> fraction of the pot after the call."""
CARDS = 52
STREETS = 4
PER_SEAT = 6
SCALARS = 4


def observation_size(seats: int) -> int:
    """How many numbers the observation of a table of ``seats`` seats has."""
    return 2 * CARDS + STREETS + PER_SEAT * seats + SCALARS


@dataclass(frozen=True, slots=True)
class SeatState:
    """One seat's picture of a hand when it is to act (or not), in chips, from either source."""

    seat: int
    button: int
    street: int  # 0 pre-flop .. 3 river
    hole: tuple[int, ...]
    board: tuple[int, ...]
    stacks: tuple[int, ...]
    bets: tuple[int, ...]
    committed: tuple[int, ...]
    folded: tuple[bool, ...]
    big_blind: int
    to_act: bool
    can_fold: bool = False
    call_amount: int = 0
    min_raise_to: int = 0
    max_raise_to: int = 0

    @property
    def seats(self) -> int:
        """Seats at the table."""
        return len(self.stacks)

    @property
    def pot(self) -> int:
        """Every chip committed this hand, this street's bets included."""
        return sum(self.committed)

    @property
    def can_raise(self) -> bool:
        """Whether a bet or raise is allowed."""
        return self.max_raise_to > 0


def from_hand(hand: Hand, seat: int) -> SeatState:
    """``seat``'s state in an engine hand (its legal actions when it is the seat to act)."""
    to_act = hand.to_act == seat
    legal = hand.legal_actions() if to_act else None
    return SeatState(seat, hand.button, min(int(hand.street), 3), tuple(hand.hole[seat]), tuple(hand.board),
                     tuple(hand.stacks), tuple(hand.bets), tuple(hand.committed), tuple(hand.folded),
                     hand.config.big_blind, to_act, legal is not None and legal.can_fold,
                     legal.call_amount if legal else 0, legal.min_raise_to if legal else 0,
                     legal.max_raise_to if legal else 0)


def from_request(request: Request) -> SeatState:
    """The state an ActionRequest describes (the seat to act is the requester)."""
    legal = request.legal
    street = max(0, min(int(request.street) - 1, 3))  # the protocol's streets start at 1 (UNSPECIFIED is 0)
    folded = tuple(status is SeatStatus.FOLDED or status is SeatStatus.SITTING_OUT for status in request.statuses)
    return SeatState(request.seat, request.button, street, tuple(request.hole_cards), tuple(request.board),
                     tuple(request.stacks), tuple(request.bets), tuple(request.committed), folded,
                     max(request.config.big_blind, 1), True, legal.can_fold, legal.call_amount,
                     legal.min_raise_to if legal.can_raise else 0, legal.max_raise_to if legal.can_raise else 0)


def observation(state: SeatState) -> npt.NDArray[np.float32]:
    """The observation vector of ``state`` (see the module's documentation)."""
    n = state.seats
    out = np.zeros(observation_size(n), dtype=np.float32)
    for card in state.hole:
        out[card] = 1.0
    for card in state.board:
        out[CARDS + card] = 1.0
    out[2 * CARDS + state.street] = 1.0
    bb = float(state.big_blind)
    base = 2 * CARDS + STREETS
    for k in range(n):
        seat = (state.seat + k) % n
        at = base + PER_SEAT * k
        out[at] = state.stacks[seat] / bb
        out[at + 1] = state.bets[seat] / bb
        out[at + 2] = state.committed[seat] / bb
        out[at + 3] = float(state.folded[seat])
        out[at + 4] = float(not state.folded[seat] and state.stacks[seat] == 0)
        out[at + 5] = float(seat == state.button)
    at = base + PER_SEAT * n
    out[at:at + SCALARS] = (state.pot / bb, state.call_amount / bb, state.min_raise_to / bb, state.max_raise_to / bb)
    return out


def raise_to(state: SeatState, index: int) -> int:
    """The raise-to total of a raise action (2 to 5) for ``state`` (0 for the others)."""
    if index == RAISE_MIN:
        return state.min_raise_to
    fraction = POT_FRACTIONS.get(index)
    if fraction is None:
        return 0
    bet = state.bets[state.seat]
    call = state.call_amount
    return bet + call + int(fraction * (state.pot + call))


def action_mask(state: SeatState) -> npt.NDArray[np.int8]:
    """1 for every action ``state`` allows, 0 for the others (all 0 when the seat is not to act)."""
    mask = np.zeros(len(ACTIONS), dtype=np.int8)
    if not state.to_act:
        return mask
    mask[FOLD] = state.can_fold
    mask[CHECK_CALL] = 1
    mask[ALL_IN] = 1
    if state.can_raise:
        mask[RAISE_MIN] = 1
        for index in POT_FRACTIONS:
            mask[index] = state.min_raise_to < raise_to(state, index) < state.max_raise_to
    return mask


class MaskedActionError(ValueError):
    """An action index the mask does not allow (or no action index at all), refused with the rule it breaks."""


def engine_action(state: SeatState, index: int) -> Action:
    """The engine action of ``index`` in ``state``; ``MaskedActionError`` when the mask does not allow it."""
    if not (isinstance(index, int | np.integer) and 0 <= int(index) < len(ACTIONS)):
        raise MaskedActionError(f"R6.1: {index!r} is not an action index (0 to {len(ACTIONS) - 1}: "
                                f"{', '.join(ACTIONS)})")
    index = int(index)
    if not action_mask(state)[index]:
        rule = "R6.1" if index in (FOLD, CHECK_CALL) else "R7"
        raise MaskedActionError(f"{rule}: {ACTIONS[index]} (action {index}) is not allowed now; the mask allows "
                                f"{[ACTIONS[i] for i, ok in enumerate(action_mask(state)) if ok]}")
    if index == FOLD:
        return Action(ActionKind.FOLD)
    if index == CHECK_CALL:
        return Action(ActionKind.CALL if state.call_amount > 0 else ActionKind.CHECK)
    if index == ALL_IN:
        return Action(ActionKind.ALL_IN)
    return Action(ActionKind.RAISE, raise_to(state, index))


def legal_indexes(mask: Sequence[int] | npt.NDArray[np.int8]) -> list[int]:
    """The indexes a mask allows."""
    return [i for i, ok in enumerate(mask) if ok]
