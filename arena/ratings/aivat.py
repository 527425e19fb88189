"""AIVAT (Burch, Schmid, Moravčík, Morrill, Bowling, AAAI 2018) as far as a referee can apply it without trusting the
bots: a hand's payoffs minus the luck of every card the dealer turned and of every action the referee drew from a
bot's mixed action. A pure function of a hand record.

The value function (fixed here, versioned by ``ESTIMATOR``, never fitted on the hands it scores): at any point of
a hand, a seat's value is the chips it would expect to win from the pots as they stand if the hand were checked
down from there by the players still in, over every way the unknown cards could fall (a tie shares a pot in equal
fractions), less what it has put in. Every chance event the referee controls (the hole cards, the flop, the turn,
the river) is scored by ``value(after) - E[value(after)]``: the pots do not move while cards are dealt, so
``E[value(after)]`` over the event is the value with the same pots from the cards known before it (the
expectation of a check-down over the next cards is the check-down over all cards still to come). Before the hole
cards every seat's share of a pot is one over its eligible seats: the deal is exchangeable (R1.3, R4.1). The
adjusted payoff is the dealt payoff less the sum of these terms.

Why it is unbiased: each term has expectation zero given everything that happened before its chance event,
whatever the bots do before or after (the value function is fixed and the pots are set before the cards come), so
the sum has expectation zero and the adjusted payoff has the dealt payoff's expectation; a hand that ends before a
street gets no term for it. The check-down is exact from the flop on (every completion counted: at most C(45, 2)
= 990), and for a pot two players contest before the flop (all C(48, 5) = 1,712,304 boards, read from a table of
every heads-up match-up, ``arena_sdk.preflop``); a pot three players or more contest before the flop is estimated
from uniform draws of the five board cards (``PREFLOP_SAMPLES``, or ``PREFLOP_SAMPLES_BIG`` when the pots exceed
``BIG_POT_BB`` big blinds), from a generator seeded by the cards known at that point and nothing else: the mean
of uniform draws is an unbiased estimate of the exact check-down, so the terms keep their zero expectation, with a
little variance of their own (a standard deviation of at most 1.6% of the blinds' pot with 1,024 draws and 0.6% of a
big pot with 8,192, against the flop's swing of tens of percent). How many draws may depend on anything in the
record: the mean of the first N draws of a stream nobody looks at while playing is unbiased for every N. The terms
add up to zero over the seats (each pot's shares add up to one before and after), so the adjusted payoffs are
zero-sum like the dealt ones. When betting ends all-in before the river the terms of the last streets add up to the
all-in EV correction (arena.ratings.allin).

What duplicate dealing leaves to it: the halves of a duplicate set deal the same cards to the same positions, so a
chance event that every half reaches by the same actions is the same state in each, and each bot's terms for it
add up to zero over the set (they are zero-sum over the seats). That holds for any value function of the state:
on top of duplicate, the estimator takes out only the luck of cards that fell after the bots' play had diverged.
What is left is how one card moves two different bots' later betting, which a value function that does not know
the bots cannot foresee (tests/ratings/test_aivat.py checks the cancellation over a match).

Drawn actions (AIVAT's action terms): a bot may answer with a mixed action (proto ``Action.policy``), and the
referee then draws the action from the match's secret seed. Such a decision is scored like a chance event: the
term is ``value(after the drawn action) - sum of p(a) * value(after a)`` over the listed actions, where a seat's
value after an action also counts the chips it put in. Its expectation is zero because the referee drew with
exactly those probabilities, from a seed no bot sees before the match is over. Probabilities a bot merely
*reports* for an action it chose itself are never used: a bot could bias its own figure by misreporting them (the
paper's setting trusts the strategies; an arena cannot). Each drawn decision stands on its own (its term has
expectation zero whatever the other bots do), so the terms apply wherever a bot lets the referee draw, not only in
hands where every bot does.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from arena.engine import Hand
from arena.engine.pots import Pot
from arena.ratings.runouts import board_shares
from arena.referee import HandRecord

try:
    from arena.engine._core import Hand as _CompiledHand
    from arena.engine._core import aivat_terms as _core_terms
except ImportError:  # installed without the compiled engine: the reference scores every hand
    _CompiledHand = None  # type: ignore[assignment,misc]

# the name results are shown under; a change of value function is a new name (v2: a heads-up pot's check-down
# before the flop is exact, from a table, where v1 drew 1,024 or 8,192 boards)
ESTIMATOR = "aivat-v2"
PREFLOP_SAMPLES = 1_024  # board draws for a pre-flop check-down of three players or more
PREFLOP_SAMPLES_BIG = 8_192  # when the pots are big, so that the draws' own noise stays small against them
BIG_POT_BB = 20
# check-downs remembered (arena.ratings.aivat._shares): the hands of a duplicate set deal the same cards, and the
# scoring worker scores each hand as it finishes, so a hand's mirror comes a whole rotation later (a local match plays
# its rotations one after the other): at 256, a 20,000-hand match's worker spent 1.7 s more of CPU than when it met
# a session's hands together. Each is its key's cards and a share per hand: a few MB in a process when full
ORDERS_KEPT = 32_768
_STREETS = ((0, 3, "flop"), (3, 4, "turn"), (4, 5, "river"))


@dataclass(frozen=True, slots=True)
class ChanceEvent:
    """Cards the dealer turned: which (``hole``, ``flop``, ``turn``, ``river``), the board before and after them
    (``None`` before the hole cards), and the pots as they stood while they were dealt."""

    street: str
    before: tuple[int, ...] | None
    after: tuple[int, ...]
    pots: tuple[Pot, ...]


@dataclass(frozen=True, slots=True)
class Outcome:
    """Where one action leads, for the value function: the pots and each seat's chips put in, just after it."""

    pots: tuple[Pot, ...]
    committed: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class DrawnAction:
    """A decision the referee drew from a bot's mixed action: the board it was taken on, where each listed action
    would have led with its probability, and where the drawn one led."""

    seat: int
    board: tuple[int, ...]
    choices: tuple[tuple[Outcome, float], ...]
    played: Outcome


def chance_events(record: HandRecord) -> list[ChanceEvent]:
    """Every chance event of a recorded hand, in order, with the pots at the time (replayed by the engine)."""
    return [p for p in luck_points(record) if isinstance(p, ChanceEvent)]


def luck_points(record: HandRecord) -> list[ChanceEvent | DrawnAction]:
    """Every point of a hand whose luck the estimator takes out, in order: each chance event, and each action the
    referee drew from a mixed action (replayed by the engine from the record)."""
    from arena.records.phh_sink import replay_steps  # the engine's own pots, from the recorded decisions

    points: list[ChanceEvent | DrawnAction] = []
    dealt = 0
    decisions = iter(record.decisions)
    pending: tuple[int, tuple[int, ...], tuple[tuple[Outcome, float], ...]] | None = None
    for hand in replay_steps(record):
        if not points:
            points.append(ChanceEvent("hole", None, (), tuple(hand.pots())))  # the forced bets, every seat in
        if pending is not None:  # the drawn action just played
            seat, board, choices = pending
            points.append(DrawnAction(seat, board, choices, _outcome(hand)))
            pending = None
        if len(hand.board) > dealt:
            pots = tuple(hand.pots())
            for start, end, street in _STREETS:
                if dealt <= start < len(hand.board):
                    points.append(ChanceEvent(street, tuple(hand.board[:start]), tuple(hand.board[:end]), pots))
            dealt = len(hand.board)
        decision = next(decisions, None)
        if decision is not None and decision.policy:
            total = math.fsum(p for _, p in decision.policy)
            outcomes = []
            for action, probability in decision.policy:
                trial = hand.copy()
                trial.act(decision.seat, action)
                outcomes.append((_outcome(trial), probability / total))
            pending = (decision.seat, tuple(hand.board), tuple(outcomes))
    return points


def _outcome(hand: Hand) -> Outcome:
    return Outcome(tuple(hand.pots()), tuple(hand.committed))


@functools.lru_cache(maxsize=ORDERS_KEPT)
def _shares(holes: tuple[tuple[int, ...], ...], board: tuple[int, ...], samples: int) -> tuple[float, ...]:
    """Each of ``holes``' expected share of a pot by check-down from ``board``: how often each showdown order comes
    up over the runouts, a tie's count split among its winners (``board_shares``: a pure function of its arguments,
    so remembered: the hands of a duplicate set deal the same cards, and often reach the same check-downs)."""
    return board_shares(holes, board, samples, ESTIMATOR)


class _Checkdown:
    """Expected shares of pots by check-down for one hand's hole cards (each pot's by ``_shares``)."""

    def __init__(self, record: HandRecord, big_blind: int) -> None:
        self.record = record
        self.big_blind = big_blind
        self._hole = tuple(tuple(cards) for cards in record.hole)
        self._holes: dict[tuple[int, ...], tuple[tuple[int, ...], ...]] = {}  # eligible seats: their hole cards

    def value(self, pots: Sequence[Pot], board: tuple[int, ...] | None) -> list[float]:
        """Each seat's expected chips from ``pots`` by check-down from ``board`` (None: before the hole cards)."""
        won = [0.0] * len(self.record.seating)
        total = 0
        for pot in pots:  # a loop, not sum() of a generator: this runs six times a hand in the scoring worker
            total += pot.amount
        samples = PREFLOP_SAMPLES_BIG if total > BIG_POT_BB * self.big_blind and not board else PREFLOP_SAMPLES
        for pot in pots:
            eligible = pot.eligible
            if len(eligible) == 1 or board is None:
                for seat in eligible:
                    won[seat] += pot.amount / len(eligible)
                continue
            holes = self._holes.get(eligible)
            if holes is None:
                holes = self._holes[eligible] = tuple([self._hole[s] for s in eligible])
            amount = pot.amount
            for seat, share in zip(eligible, _shares(holes, board, samples), strict=True):
                won[seat] += amount * share
        return won

    def net(self, outcome: Outcome, board: tuple[int, ...]) -> list[float]:
        """Each seat's value after an action: its expected chips from the pots by check-down, less what it put in
        (an action moves chips into the pots, so what a seat put in counts, unlike across a chance event)."""
        won = self.value(outcome.pots, board)
        return [w - c for w, c in zip(won, outcome.committed, strict=True)]


def luck_terms(record: HandRecord) -> list[tuple[str, tuple[float, ...]]]:
    """Each luck term per seat, in order: a chance event's ``value(after) - value(before)``, named by its street,
    and a drawn action's ``value(drawn) - E[value]`` over its mixed action, named ``action``. Worked out by the
    compiled engine when it plays and no decision drew a mixed action (``compiled_luck_terms``), else by the
    reference (``reference_luck_terms``): the same terms to the last bit (tests/ratings/test_aivat_compiled.py)."""
    terms = compiled_luck_terms(record)
    return reference_luck_terms(record) if terms is None else terms


_CHANCE_STREETS = ("hole", "flop", "turn", "river")  # aivat_terms' street numbers


def compiled_luck_terms(record: HandRecord) -> list[tuple[str, tuple[float, ...]]] | None:
    """``reference_luck_terms`` by the compiled engine (``compiled_terms``); None where it does not apply (the
    Python engine selected, a drawn mixed action, a record the engine refuses, a pot past 2**53 chips)."""
    decisions = record.decisions
    for decision in decisions:
        if decision.policy:
            return None
    from arena.records.phh_sink import start_hand

    hand = start_hand(record)
    if _CompiledHand is None or not isinstance(hand, _CompiledHand):
        return None
    return compiled_terms(hand, [(d.seat, d.action.kind._value_, d.action.amount) for d in decisions], record.hole,
                          record.config.big_blind)


def compiled_terms(hand: _CompiledHand, decisions: list[tuple[int, int, int]], hole: Sequence[Sequence[int]],
                   big_blind: int) -> list[tuple[str, tuple[float, ...]]] | None:
    """The luck terms of a hand without drawn mixed actions from its started compiled ``hand`` (not changed), its
    decisions as (seat, kind, amount) and its hole cards: ``_core.aivat_terms`` (the replay, the pots and the sums
    in C, the check-downs' shares from ``_shares``: 24 µs a hand heads-up where the reference takes 38 with the
    same shares, tests/bench/bench_aivat.py); None if the engine refuses the replay or a pot passes 2**53 chips."""
    terms = _core_terms(hand, decisions, tuple(map(tuple, hole)), _shares, PREFLOP_SAMPLES, PREFLOP_SAMPLES_BIG,
                        BIG_POT_BB * big_blind)
    if terms is None:
        return None
    return [(_CHANCE_STREETS[street], term) for street, term in terms]


def reference_luck_terms(record: HandRecord) -> list[tuple[str, tuple[float, ...]]]:
    """``luck_terms`` in Python, from ``luck_points``: the readable definition, and the only one for drawn mixed
    actions."""
    checkdown = _Checkdown(record, record.config.big_blind)
    terms = []
    for point in luck_points(record):
        if isinstance(point, ChanceEvent):
            before = checkdown.value(point.pots, point.before)
            after = checkdown.value(point.pots, point.after)
            terms.append((point.street, tuple([a - b for a, b in zip(after, before, strict=True)])))
            continue
        played = checkdown.net(point.played, point.board)
        expected = [0.0] * len(played)
        for outcome, probability in point.choices:
            for seat, chips in enumerate(checkdown.net(outcome, point.board)):
                expected[seat] += probability * chips
        terms.append(("action", tuple(p - e for p, e in zip(played, expected, strict=True))))
    return terms


def aivat_payoffs(record: HandRecord) -> tuple[float, ...]:
    """Each seat's payoff less the luck of the cards (the chance-node terms): an unbiased, lower-variance estimate
    of the same expectation as the dealt payoffs."""
    return adjusted(record.payoffs, luck_terms(record))


def adjusted(payoffs: Sequence[int], terms: list[tuple[str, tuple[float, ...]]]) -> tuple[float, ...]:
    """The payoffs less the luck terms, each seat's in the terms' order."""
    out = [float(p) for p in payoffs]
    for _, term in terms:
        for seat, luck in enumerate(term):
            out[seat] -= luck
    return tuple(out)
