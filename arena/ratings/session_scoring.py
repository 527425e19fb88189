"""One finished duplicate session's variance-reduced figures: by how much each adjusted estimator (all-in EV, AIVAT:
arena.ratings.estimators) moves each participant's mbb/hand sample. A pure function of the session's hands, the same
wherever it runs (in the referee's process or in the scoring worker, arena.ratings.scoring_worker), so the two give
the same figures to the last bit."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from arena.deals.fold import fold_session, mbb_per_hand
from arena.ratings.estimators import ADJUSTED, per_hand
from arena.referee import HandRecord

Changes = tuple[tuple[float, ...], ...]  # per adjusted estimator (ADJUSTED's order), per participant with hands


@dataclass(frozen=True, slots=True)
class SessionJob:
    """A finished session to score: its hands' numbers, and how many of them each participant played (0: not in
    the session)."""

    numbers: tuple[int, ...]
    hands: tuple[int, ...]

    @property
    def players(self) -> tuple[int, ...]:
        """The participants that played in the session, in order (``Changes`` has one figure for each)."""
        return tuple(p for p, n in enumerate(self.hands) if n)


HandDeltas = tuple[tuple[float, ...], ...]  # per adjusted estimator (ADJUSTED's order): each seat's change


def hand_deltas(record: HandRecord) -> HandDeltas:
    """How much each adjusted estimator changes each seat's payoff in one hand (its estimate minus the chips): a
    hand's part of its session's changes, worked out as soon as the hand is over (``fold_changes`` adds them up)."""
    return tuple(tuple(e - r for e, r in zip(per_hand(estimator)(record), record.payoffs, strict=True))
                 for estimator in ADJUSTED)


def fold_changes(hands: Iterable[tuple[int, Sequence[int], HandDeltas]], job: SessionJob, big_blind: int,
                 cross_table: bool) -> Changes:
    """A session's changes from its hands' deltas (each hand's number, seating and ``hand_deltas``): a session's
    chips (and a cross-table score) are sums of its hands' payoffs, so the adjusted sample is the raw one plus the
    changes of its rescored hands, added up in hand-number order, one order however many tables the match was
    played on."""
    ordered = sorted(hands, key=lambda hand: hand[0])
    out = []
    for index in range(len(ADJUSTED)):
        by_player, _ = fold_session(((seating, deltas[index]) for _, seating, deltas in ordered), cross_table)
        out.append(tuple(mbb_per_hand(by_player.get(p, 0.0), big_blind, job.hands[p]) for p in job.players))
    return tuple(out)


def session_changes(records: Iterable[HandRecord], job: SessionJob, big_blind: int, cross_table: bool) -> Changes:
    """How much each adjusted estimator changes each player's mbb/hand sample of the session ``job`` (its hands are
    ``records``): ``fold_changes`` of each hand's ``hand_deltas``."""
    return fold_changes(((r.hand_number, r.seating, hand_deltas(r)) for r in records), job, big_blind, cross_table)
