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


def session_changes(records: Iterable[HandRecord], job: SessionJob, big_blind: int, cross_table: bool) -> Changes:
    """How much each adjusted estimator changes each player's mbb/hand sample of the session ``job`` (its hands are
    ``records``): a session's chips (and a cross-table score) are sums of its hands' payoffs, so the adjusted
    sample is the raw one plus the change its rescored hands make. The changes are added up in hand-number order,
    one order however many tables the match was played on."""
    ordered = sorted(records, key=lambda r: r.hand_number)
    players = job.players
    out = []
    for estimator in ADJUSTED:
        scored = per_hand(estimator)
        deltas: list[tuple[Sequence[int], Sequence[float]]] = []
        for hand in ordered:
            expected = scored(hand)
            deltas.append((hand.seating, [e - r for e, r in zip(expected, hand.payoffs, strict=True)]))
        by_player, _ = fold_session(deltas, cross_table)
        out.append(tuple(mbb_per_hand(by_player.get(p, 0.0), big_blind, job.hands[p]) for p in players))
    return tuple(out)
