"""Fast in-process players (plain functions of a referee ``Decision``) for the statistical tests of ``compare``.

``calling_station`` never folds and never raises; ``RandomPlayer`` picks a uniform legal kind of action;
``HeuristicPlayer`` bets its made hand and its preflop cards, with a seeded tremble: a copy with another seed is
the same bot, playing the same strategy with different luck in its random choices.
"""

from __future__ import annotations

import random

from arena.cards import card_rank, card_suit
from arena.cards.evaluator import CATEGORY_SHIFT, evaluate
from arena.engine import Action, ActionKind
from arena.referee import Decision

CHECK = Action(ActionKind.CHECK)
CALL = Action(ActionKind.CALL)
FOLD = Action(ActionKind.FOLD)


def calling_station(decision: Decision) -> Action:
    """Check when free, else call."""
    legal = decision.view.legal
    assert legal is not None
    return CHECK if legal.can_check else CALL


class RandomPlayer:
    """Uniformly one of the legal kinds; a raise goes to a uniform legal amount (like sample_bots' random bot)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def __call__(self, decision: Decision) -> Action:
        legal = decision.view.legal
        assert legal is not None
        choices = []
        if legal.can_fold:
            choices.append(FOLD)
        if legal.can_check:
            choices.append(CHECK)
        if legal.can_call:
            choices.append(CALL)
        if legal.can_raise:
            choices.append(Action(ActionKind.RAISE, self.rng.randint(legal.min_raise_to, legal.max_raise_to)))
        return self.rng.choice(choices)


def preflop_strength(hole: tuple[int, ...]) -> float:
    """A rough 0..1 score of two hole cards: pairs, high cards, suited and connected cards score higher."""
    a, b = sorted((card_rank(hole[0]), card_rank(hole[1])), reverse=True)
    if a == b:
        return 0.55 + 0.45 * a / 12
    score = (a + b) / 24 * 0.6 + (0.08 if card_suit(hole[0]) == card_suit(hole[1]) else 0.0)
    return score + (0.06 if a - b == 1 else 0.0)


def postflop_strength(hole: tuple[int, ...], board: tuple[int, ...]) -> float:
    """0..1 from the made hand's category (a pair 0.35, two pair 0.6, trips and better 0.8 and up)."""
    category = evaluate([*hole, *board]) >> CATEGORY_SHIFT
    return (0.1, 0.35, 0.6, 0.8, 0.85, 0.9, 0.95, 0.99, 1.0)[category]


class HeuristicPlayer:
    """Raise about the pot with a strong hand, call a medium one, else check or fold; ``tremble`` is the chance
    of replacing that choice with a random one among check/call/fold/min-raise."""

    def __init__(self, seed: int, tremble: float = 0.1) -> None:
        self.rng = random.Random(seed)
        self.tremble = tremble

    def __call__(self, decision: Decision) -> Action:
        view = decision.view
        legal = view.legal
        assert legal is not None
        if self.rng.random() < self.tremble:
            options = [CHECK if legal.can_check else CALL]
            if legal.can_fold and legal.can_call:
                options.append(FOLD)
            if legal.can_raise:
                options.append(Action(ActionKind.RAISE, legal.min_raise_to))
            return self.rng.choice(options)
        hole = view.hole_cards
        strength = postflop_strength(hole, view.board) if view.board else preflop_strength(hole)
        pot = sum(view.committed)
        if strength >= 0.6 and legal.can_raise:
            target = max(view.bets) + pot
            return Action(ActionKind.RAISE, min(max(target, legal.min_raise_to), legal.max_raise_to))
        if legal.can_check:
            return CHECK
        owed = legal.call_amount
        if strength >= 0.35 and owed <= pot:
            return CALL
        return FOLD
