"""``Hand.copy``: a copy plays on without touching the original, and plays exactly as the original would."""

from __future__ import annotations

import random

from arena.engine import Action, ActionKind, Hand, TableConfig
from arena.engine.pots import Pot


def random_action(hand: Hand, rng: random.Random) -> Action:
    legal = hand.legal_actions()
    choices = [Action(ActionKind.CHECK) if legal.can_check else Action(ActionKind.CALL)]
    if legal.can_fold:
        choices.append(Action(ActionKind.FOLD))
    if legal.max_raise_to:
        choices.append(Action(ActionKind.RAISE, rng.randint(legal.min_raise_to, legal.max_raise_to)))
    return rng.choice(choices)


def snapshot(hand: Hand) -> tuple[object, ...]:
    pots: list[Pot] = hand.pots()
    return (list(hand.stacks), list(hand.committed), list(hand.folded), list(hand.board), list(hand.events),
            hand.to_act, hand.payoffs, pots, dict(hand.shown))


def test_a_copy_is_independent_and_plays_like_the_original() -> None:
    rng = random.Random(5)
    for k in range(120):
        seats = rng.randint(2, 6)
        deck = list(range(52))
        rng.shuffle(deck)
        hand = Hand(TableConfig(), [rng.randint(200, 20_000) for _ in range(seats)], deck, button=k % seats)
        while not hand.is_over:
            twin = hand.copy()
            before = snapshot(hand)
            trial = random_action(twin, random.Random(k))
            assert hand.to_act is not None
            seat = hand.to_act
            twin.act(seat, trial)
            assert snapshot(hand) == before  # the original is untouched
            hand.act(seat, trial)
            assert snapshot(hand) == snapshot(twin)  # and the copy played exactly as it does
