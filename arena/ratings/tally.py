"""A match's duplicate sessions as its hands finish: each bot's mbb/hand with a 95% CI, for live lines and
result tables (the same per-session samples as ``arena.ratings.sessions`` reads from the database)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from arena.ratings.cross import cross_table_scores
from arena.ratings.estimators import Estimator, estimate
from arena.ratings.stats import WinRate, win_rate
from arena.referee import HandRecord

ESTIMATES = {estimator: estimate(estimator) for estimator in Estimator}


class SessionTally:
    """Chips per participant per deal; a deal counts as a session once all its ``rotations`` hands are in (its
    tables, with ``cross_table``: then each bot's chips are its cross-table score, arena.ratings.cross). Each
    estimator's samples are kept side by side: the chips as dealt and all-in EV (arena.ratings.estimators)."""

    def __init__(self, participants: int, rotations: int, big_blind: int, cross_table: bool = False) -> None:
        self.participants = participants
        self.rotations = rotations
        self.big_blind = big_blind
        self.cross_table = cross_table
        self.hands = 0
        self._open: dict[int, tuple[dict[Estimator, list[float]], list[int]]] = {}  # deal -> (chips, hands)
        self._hands_of: dict[int, list[tuple[tuple[int, ...], dict[Estimator, Sequence[float]]]]] = {}
        self._samples: dict[Estimator, list[list[float]]] = {e: [[] for _ in range(participants)] for e in Estimator}
        self._session_hands = [0] * participants

    def add(self, record: HandRecord) -> None:
        """One finished hand."""
        self.hands += 1
        estimates = {estimator: ESTIMATES[estimator](record) for estimator in Estimator}
        chips, hands = self._open.setdefault(
            record.deal, ({e: [0.0] * self.participants for e in Estimator}, [0] * self.participants))
        for seat, participant in enumerate(record.seating):
            for estimator, payoffs in estimates.items():
                chips[estimator][participant] += payoffs[seat]
            hands[participant] += 1
        if self.cross_table:
            played = self._hands_of.setdefault(record.deal, [])
            played.append((record.seating, estimates))
            if len(played) < self.rotations:
                return
            played = self._hands_of.pop(record.deal)
            for estimator in Estimator:
                scores = cross_table_scores((seating, est[estimator]) for seating, est in played)
                for participant, score in scores.items():
                    chips[estimator][participant] = score
        if sum(hands) >= self.rotations * len(record.seating):
            del self._open[record.deal]
            for p in range(self.participants):
                if hands[p]:
                    for estimator in Estimator:
                        self._samples[estimator][p].append(1000.0 * chips[estimator][p] / self.big_blind / hands[p])
                    self._session_hands[p] += hands[p]

    def add_all(self, records: Iterable[HandRecord]) -> SessionTally:
        """Hands recorded before (a resumed match); returns the tally."""
        for record in records:
            self.add(record)
        return self

    @property
    def sessions(self) -> int:
        """Complete duplicate sessions so far."""
        return max((len(s) for s in self._samples[Estimator.RAW]), default=0)

    def win_rate(self, participant: int, estimator: Estimator = Estimator.RAW) -> WinRate:
        """A participant's mbb/hand over the complete sessions, with its 95% CI, by ``estimator``."""
        return win_rate(self._samples[estimator][participant], self._session_hands[participant])
