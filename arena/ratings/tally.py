"""A match's duplicate sessions as its hands finish: each bot's mbb/hand with a 95% CI, for live lines and
result tables (the same per-session samples as ``arena.ratings.sessions`` reads from the database)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Iterable
from typing import NamedTuple

from arena.ratings.allin import runout_point
from arena.ratings.cross import cross_table_scores
from arena.ratings.estimators import ADJUSTED, Estimator, per_hand
from arena.ratings.stats import RunningRate, WinRate, win_rate
from arena.referee import HandRecord

Reader = Callable[[Collection[int]], Iterable[HandRecord]]  # hand numbers -> their records (a database's)


class _Played(NamedTuple):
    """What an open session keeps of a hand a reader can read back: its number, seats and payoffs."""

    hand_number: int
    seating: tuple[int, ...]
    payoffs: tuple[int, ...]


class SessionTally:
    """Chips per participant per deal; a deal counts as a session once all its ``rotations`` hands are in (its
    tables, with ``cross_table``: then each bot's chips are its cross-table score, arena.ratings.cross). The
    variance-reduced figures (arena.ratings.estimators) are worked out only when asked for, for the sessions not
    done yet: a session's adjusted sample is its raw one plus the change its rescored hands make, since a session's
    chips (and a cross-table score) are sums of its hands' payoffs. The hands of finished sessions are kept for that
    without their events (an all-in hand with them: all-in EV reads them), unless a ``reader`` can read them back
    (a database holding the match): then a finished session keeps only its hands' numbers. Holding every hand of
    a long match would cost more than memory: the garbage collector's full passes over them, in the referee's loop,
    grew with the match (1.2 s each after 60,000 hands at 64 tables) and took 30% of its speed."""

    def __init__(self, participants: int, rotations: int, big_blind: int, cross_table: bool = False,
                 reader: Reader | None = None) -> None:
        self.participants = participants
        self.rotations = rotations
        self.big_blind = big_blind
        self.cross_table = cross_table
        self.hands = 0
        self._open: dict[int, tuple[list[float], list[int]]] = {}  # deal -> (chips, hands) per participant
        self._hands_of: dict[int, list[HandRecord | _Played]] = {}  # deal -> its hands so far (across tables)
        self._samples: list[list[float]] = [[] for _ in range(participants)]
        self._session_hands = [0] * participants
        self._running = [RunningRate() for _ in range(participants)]  # the raw figures, for live lines
        self.reader = reader
        self._kept: dict[int, HandRecord] = {}  # hand number -> finished hand, when there is no reader
        self._finished: list[tuple[tuple[int, ...], tuple[int, ...], dict[int, int]]] = []  # sessions: numbers,
        # hands and sample indices per participant, in order
        self._delta: dict[Estimator, list[dict[int, float]]] = {
            e: [{} for _ in range(participants)] for e in ADJUSTED}  # sample index -> change

    def add(self, record: HandRecord) -> None:
        """One finished hand."""
        self.hands += 1
        chips, hands = self._open.setdefault(record.deal, ([0.0] * self.participants, [0] * self.participants))
        for seat, participant in enumerate(record.seating):
            chips[participant] += record.payoffs[seat]
            hands[participant] += 1
        # a deal waits here for its other rotations, played after all of this one's deals (a local match plays
        # its rotations one after the other): keep only what its session needs of each hand. With a reader, its
        # number, seats and payoffs; without one, the hand for the estimators (its events only if all-in EV reads
        # them)
        kept: HandRecord | _Played
        if self.reader is not None:
            kept = _Played(record.hand_number, record.seating, record.payoffs)
        elif runout_point(record) is not None:
            kept = record
        else:
            kept = dataclasses.replace(record, events=())
        played = self._hands_of.setdefault(record.deal, [])
        played.append(kept)
        if self.cross_table:
            if len(played) < self.rotations:
                return
            for participant, score in cross_table_scores((h.seating, h.payoffs) for h in played).items():
                chips[participant] = score
        if sum(hands) >= self.rotations * len(record.seating):
            del self._open[record.deal]
            del self._hands_of[record.deal]
            indices = {}
            for p in range(self.participants):
                if hands[p]:
                    indices[p] = len(self._samples[p])
                    sample = 1000.0 * chips[p] / self.big_blind / hands[p]
                    self._samples[p].append(sample)
                    self._session_hands[p] += hands[p]
                    self._running[p].add(sample, hands[p])
            if self.reader is None:
                self._kept.update((h.hand_number, h) for h in played if isinstance(h, HandRecord))
            self._finished.append((tuple(h.hand_number for h in played), tuple(hands), indices))

    def _rescore(self) -> None:
        """Work out every adjusted estimator's change of each finished session not done yet, in one pass over
        their hands (read back once, when a reader holds them)."""
        pending = self._finished
        records = self._records([n for numbers, _, _ in pending for n in numbers])
        for estimator in ADJUSTED:
            scored = per_hand(estimator)
            for numbers, hands, indices in pending:
                deltas = []
                for number in sorted(numbers):  # one order of adding up, however many tables
                    hand = records[number]
                    expected = scored(hand)
                    change = [e - r for e, r in zip(expected, hand.payoffs, strict=True)]
                    deltas.append((hand.seating, change))
                if self.cross_table:
                    by_participant = cross_table_scores(deltas)
                else:
                    by_participant = dict.fromkeys(indices, 0.0)
                    for seating, change in deltas:
                        for seat, participant in enumerate(seating):
                            by_participant[participant] += change[seat]
                for p, index in indices.items():
                    self._delta[estimator][p][index] = (
                        1000.0 * by_participant.get(p, 0.0) / self.big_blind / hands[p])
        self._finished = []
        self._kept.clear()

    def _records(self, numbers: list[int]) -> dict[int, HandRecord]:
        """The finished hands of ``numbers``, by number: kept here, or read back."""
        if self.reader is None:
            return {n: self._kept[n] for n in numbers}
        return {r.hand_number: r for r in self.reader(numbers)} if numbers else {}

    def add_all(self, records: Iterable[HandRecord]) -> SessionTally:
        """Hands recorded before (a resumed match); returns the tally."""
        for record in records:
            self.add(record)
        return self

    @property
    def sessions(self) -> int:
        """Complete duplicate sessions so far."""
        return max((len(s) for s in self._samples), default=0)

    def live_rate(self, participant: int) -> WinRate:
        """``win_rate(participant)`` as far as a live line needs it, in constant time however long the match (the
        same figures but for the last bits of rounding: results use ``win_rate``)."""
        return self._running[participant].rate()

    def win_rate(self, participant: int, estimator: Estimator = Estimator.RAW) -> WinRate:
        """A participant's mbb/hand over the complete sessions, with its 95% CI, by ``estimator``."""
        samples = self._samples[participant]
        if estimator is not Estimator.RAW:
            self._rescore()
            delta = self._delta[estimator][participant]
            samples = [sample + delta.get(i, 0.0) for i, sample in enumerate(samples)]
        return win_rate(samples, self._session_hands[participant])
