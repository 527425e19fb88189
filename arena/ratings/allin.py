"""All-in EV: a hand whose betting ended with the board still to come (two or more players all-in, or all but one)
is scored by each player's expected payoff over every way the rest of the board could fall, instead of the one
that was dealt (the Annual Computer Poker Competition's all-in adjustment). A pure function of a hand record.

Why it is unbiased: once betting is over, the players' chips committed and who can win which pot are fixed, and
the rest of the board is a uniformly random completion from the cards not dealt to anyone's hand (R1.3). The dealt
payoff is the payoff of one such random completion, so its expectation over the deck is exactly the average payoff
over all completions: replacing the dealt payoff by that average keeps every expected win rate and removes the
variance of the last cards. The average is exact whenever it can be had cheaply: from the flop on every completion
is counted (at most C(45, 2) = 990), and two players all in before the flop read theirs over all C(48, 5) =
1,712,304 boards from a table of every heads-up match-up (``arena_sdk.preflop``). Three players or more all in
before the flop draw a fixed number of completions uniformly, from a generator seeded by what is known when the
betting ends (never by the cards to come): the average of uniform draws is itself an unbiased estimate of the exact
average, so the estimator stays unbiased, with a little variance of its own (about 0.4% of the pot with
``SAMPLES`` draws against the dealt card's 50%).
"""

from __future__ import annotations

import functools

from arena.cards.evaluator import evaluate
from arena.engine import EventKind, Hand
from arena.engine.pots import Pot, split_pot
from arena.ratings.runouts import board_orders
from arena.referee import HandRecord

# the name results are stored and shown under; a change of method is a new name (v2: two players all in before the
# flop get the exact average, from a table, where v1 drew 20,000 boards)
ESTIMATOR = "allin-v2"
SAMPLES = 20_000  # draws when the completions are more (three players or more all in before the flop): 0.5 ms
ORDERS_KEPT = 8_192  # all-ins remembered (``_orders``): a hand's mirror comes a whole rotation later
_ACTIONS = frozenset({EventKind.FOLD, EventKind.CHECK, EventKind.CALL, EventKind.BET, EventKind.RAISE})


def runout_point(record: HandRecord) -> int | None:
    """How many board cards were out when the betting ended, if the hand then went to a showdown with board cards
    still to come (an all-in); None otherwise."""
    board = known = 0
    showdown = False
    for event in record.events:  # one pass (this runs for every hand the scoring worker scores)
        kind = event.kind
        if kind is EventKind.DEAL_BOARD:
            board += len(event.cards) or 1
        elif kind in _ACTIONS:
            known = board  # the board when the last action so far was taken
        elif kind is EventKind.SHOW or kind is EventKind.MUCK:
            showdown = True
    if not showdown:
        return None
    return known if known < len(record.board) else None


@functools.lru_cache(maxsize=ORDERS_KEPT)
def _orders(holes: tuple[tuple[int, ...], ...], board: tuple[int, ...], samples: int) -> dict[tuple[int, ...], int]:
    """``board_orders`` for these cards, seeded by this estimator's name: a pure function of its arguments, so
    remembered (read only): a deal's two halves deal each seat the same cards (the bots change seats), and when the
    deal goes all-in in both halves the draws (20,000 of them when three or more are all in before the flop) are the
    same."""
    return board_orders(holes, board, samples, ESTIMATOR)


def _winnings(pots: list[Pot], places: dict[int, int], record: HandRecord) -> dict[int, int]:
    """What each seat wins from the pots when the showdown places are ``places`` (0 best, equal split)."""
    won: dict[int, int] = {}
    n = len(record.seating)
    for pot in pots:
        best = min(places[s] for s in pot.eligible)
        winners = [s for s in pot.eligible if places[s] == best]
        for seat, share in split_pot(pot.amount, winners, record.button, n, record.config.chip).items():
            won[seat] = won.get(seat, 0) + share
    return won


def allin_payoffs(record: HandRecord, hand: Hand | None = None, samples: int = SAMPLES) -> tuple[float, ...] | None:
    """Each seat's expected payoff over the rest of the board, for a hand that ended all-in before the river; None
    for any other hand (its dealt payoffs stand). ``hand``: the record replayed (arena.records.phh_sink), if the
    caller has it."""
    known = runout_point(record)
    if known is None:
        return None
    if hand is None:
        from arena.records.phh_sink import rebuild_hand  # the engine's own pots, from the recorded decisions

        hand = rebuild_hand(record)
    live = [s for s in range(len(record.seating)) if not hand.folded[s]]
    pots = hand.pots()
    holes = tuple([tuple(record.hole[s]) for s in live])
    orders = _orders(holes, tuple(record.board[:known]), samples)
    total = sum(orders.values())
    expected = dict.fromkeys(live, 0.0)
    for order, count in orders.items():
        for seat, chips in _winnings(pots, dict(zip(live, order, strict=True)), record).items():
            expected[seat] += chips * count / total
    values = {s: evaluate([*record.hole[s], *record.board]) for s in live}
    dealt_places = {s: sum(values[o] > values[s] for o in live) for s in live}
    dealt = _winnings(pots, dealt_places, record)
    return tuple(record.payoffs[s] - dealt.get(s, 0) + expected.get(s, 0.0) for s in range(len(record.seating)))
