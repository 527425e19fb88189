"""Heads-up duplicate matches between SDK bots, played in-process on the rules engine (no network).

Each deck is dealt twice with the bots in swapped seats, so the cards' luck cancels out (duplicate poker); stacks
reset every hand. The requests are built here from the engine's state the way the referee builds them.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from arena.cards import format_card
from arena.engine import Action as EngineAction
from arena.engine import ActionKind, Hand, TableConfig
from arena.sdk import Bot, Request
from arena.transport.pb import bot_pb2, poker_pb2

STACK = 10_000
CONFIG = TableConfig(small_blind=50, big_blind=100)


def request_from_hand(hand: Hand, hand_id: str, request_id: int) -> bot_pb2.ActionRequest:
    """The ActionRequest of the seat to act, from the engine's state."""
    seat = hand.to_act
    assert seat is not None
    legal = hand.legal_actions()
    seats = []
    for s in range(hand.num_seats):
        if hand.folded[s]:
            status = poker_pb2.SEAT_STATUS_FOLDED
        elif hand.stacks[s] == 0:
            status = poker_pb2.SEAT_STATUS_ALL_IN
        else:
            status = poker_pb2.SEAT_STATUS_ACTIVE
        seats.append(
            poker_pb2.SeatState(
                seat=s,
                name=f"seat{s}",
                stack=hand.stacks[s],
                bet=hand.bets[s],
                committed=hand.committed[s],
                status=status,
            )
        )
    return bot_pb2.ActionRequest(
        table_id="t0",
        hand_id=hand_id,
        request_id=request_id,
        seat=seat,
        hole_cards=[format_card(c) for c in hand.hole[seat]],
        board=[format_card(c) for c in hand.board],
        button=hand.button,
        street=poker_pb2.Street.ValueType(int(hand.street) + 1),
        seats=seats,
        pots=[poker_pb2.Pot(amount=p.amount, eligible_seats=p.eligible) for p in hand.pots()],
        legal=poker_pb2.LegalActions(
            can_fold=legal.can_fold,
            can_check=legal.can_check,
            can_call=legal.can_call,
            call_amount=legal.call_amount,
            can_raise=legal.can_raise,
            min_raise_to=legal.min_raise_to,
            max_raise_to=legal.max_raise_to,
        ),
        clock=poker_pb2.Clock(action_ms_left=1000, bank_ms_left=30_000),
        config=poker_pb2.TableConfig(
            num_seats=hand.num_seats,
            structure=poker_pb2.STRUCTURE_NO_LIMIT,
            small_blind=CONFIG.small_blind,
            big_blind=CONFIG.big_blind,
            starting_stack=STACK,
        ),
    )


def play_hand(bots: list[Bot], deck: list[int], hand_id: str) -> list[int]:
    """One hand, ``bots[s]`` in seat s, button on seat 0; returns each seat's net chips. Illegal actions raise."""
    hand = Hand(CONFIG, [STACK] * len(bots), deck, button=0)
    request_id = 0
    while not hand.is_over:
        seat = hand.to_act
        assert seat is not None
        request_id += 1
        request = Request(request_from_hand(hand, hand_id, request_id))
        action = bots[seat].act(request)
        assert request.legal.allows(action.kind, action.amount), f"{action} is illegal for {request}"
        hand.act(seat, EngineAction(ActionKind(int(action.kind)), action.amount))
    assert hand.payoffs is not None
    return list(hand.payoffs)


@dataclass(frozen=True)
class DuplicateResult:
    """Hero's net chips per deal (both seatings summed) and summary statistics in milli-big-blinds per hand."""

    nets: list[int]

    @property
    def hands(self) -> int:
        return 2 * len(self.nets)

    @property
    def mbb_per_hand(self) -> float:
        return 1000 * sum(self.nets) / CONFIG.big_blind / self.hands

    @property
    def stderr_mbb(self) -> float:
        """Standard error of ``mbb_per_hand`` (deals are independent; the two seatings of a deal are not)."""
        n = len(self.nets)
        mean = sum(self.nets) / n
        var = sum((x - mean) ** 2 for x in self.nets) / (n - 1)
        return 1000 * math.sqrt(var / n) / 2 / CONFIG.big_blind


def duplicate_match(hero: Bot, villain: Bot, deals: int, seed: int) -> DuplicateResult:
    """``deals`` decks, each played with hero on the button and then in the big blind."""
    rng = random.Random(seed)
    nets = []
    for d in range(deals):
        deck = rng.sample(range(52), 52)
        first = play_hand([hero, villain], deck, f"d{d}a")[0]
        second = play_hand([villain, hero], deck, f"d{d}b")[1]
        nets.append(first + second)
    return DuplicateResult(nets)
