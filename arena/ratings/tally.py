"""A match's duplicate sessions as its hands finish: each bot's mbb/hand with a 95% CI, for live lines and
result tables (the same per-session samples as ``arena.ratings.sessions`` reads from the database)."""

from __future__ import annotations

import math
from array import array
from collections import deque
from collections.abc import Iterable, Sequence
from typing import NamedTuple, Protocol, cast

from arena.deals.fold import fold_session, mbb_per_hand
from arena.ratings.estimators import ADJUSTED, Estimator
from arena.ratings.session_scoring import Changes, HandDeltas, SessionJob, fold_changes, hand_deltas
from arena.ratings.stats import RunningRate, WinRate, win_rate
from arena.referee import HandRecord


class Scorer(Protocol):
    """Works out the adjusted estimators' changes of finished sessions (arena.ratings.session_scoring), here or
    elsewhere (arena.ratings.scoring_worker)."""

    @property
    def pending_hands(self) -> int:
        """Hands finished (given to ``keep``) and not scored back yet."""
        ...

    def keep(self, record: HandRecord) -> object:
        """A hand that just finished: what its session, until complete, must hold of it for ``submit`` (its deltas,
        or nothing when the scorer keeps them itself: the worker's are in its processes). Every object an open
        session holds is walked by each pass of the garbage collector, so the less the better."""
        ...

    def submit(self, job: SessionJob, kept: Sequence[object]) -> None:
        """A finished session and what ``keep`` gave of each of its hands."""
        ...

    def results(self, wait: bool = False) -> list[Changes]:
        """The changes of the sessions scored since the last call, in submission order; every one with ``wait``."""
        ...

    def close(self) -> None:
        """Let go of whatever scores (a worker process)."""
        ...


class InlineScorer:
    """Scores each session in this process as it finishes (tests, small matches: a long match's referee uses
    arena.ratings.scoring_worker, which keeps AIVAT's milliseconds a hand out of its event loop)."""

    pending_hands = 0

    def __init__(self, big_blind: int, cross_table: bool) -> None:
        self.big_blind = big_blind
        self.cross_table = cross_table
        self._done: list[Changes] = []

    def keep(self, record: HandRecord) -> object:
        """The hand scored now: its number, seats and deltas (``hand_deltas``), a few numbers where the hand is a
        few dozen objects; the worker does the same, elsewhere."""
        return record.hand_number, record.seating, hand_deltas(record)

    def submit(self, job: SessionJob, kept: Sequence[object]) -> None:
        hands = cast(Sequence[tuple[int, Sequence[int], HandDeltas]], kept)
        self._done.append(fold_changes(hands, job, self.big_blind, self.cross_table))

    def results(self, wait: bool = False) -> list[Changes]:
        done, self._done = self._done, []
        return done

    def close(self) -> None:
        """Nothing to let go of."""


class _Played(NamedTuple):
    """What an open session keeps of a hand: its number, seats and payoffs, and what its scorer keeps of it
    (``Scorer.keep``)."""

    hand_number: int
    seating: tuple[int, ...]
    payoffs: tuple[int, ...]
    kept: object


class SessionTally:
    """Chips per participant per deal; a deal counts as a session once all its ``rotations`` hands are in (its
    tables, with ``cross_table``: then each bot's chips are its cross-table score, arena.deals.fold). Each
    finished session is handed to the ``scorer`` for the variance-reduced figures (arena.ratings.estimators), whose
    changes to its raw samples come back as they are worked out; the tally keeps only a few numbers a session (each
    player's raw and adjusted samples), never the hands of finished sessions: a long match's memory stays flat, and
    the garbage collector's full passes (which once grew with every hand kept, to 1.2 s each after 60,000 hands at
    64 tables) stay short."""

    def __init__(self, participants: int, rotations: int, big_blind: int, cross_table: bool = False,
                 scorer: Scorer | None = None) -> None:
        self.participants = participants
        self.rotations = rotations
        self.big_blind = big_blind
        self.cross_table = cross_table
        self.scorer: Scorer = scorer if scorer is not None else InlineScorer(big_blind, cross_table)
        self.hands = 0
        self._hands_of: dict[int, list[_Played]] = {}  # deal -> its hands so far (across tables)
        self._samples = [array("d") for _ in range(participants)]  # raw mbb/hand, one per session played
        self._adjusted = {e: [array("d") for _ in range(participants)] for e in ADJUSTED}  # NaN until scored
        self._session_hands = [0] * participants
        self._running = [RunningRate() for _ in range(participants)]  # the raw figures, for live lines
        self._waiting: deque[tuple[tuple[int, int], ...]] = deque()  # sessions at the scorer: (player, index)

    def add(self, record: HandRecord) -> None:
        """One finished hand."""
        self.hands += 1
        # a deal waits here for its other rotations, played after all of this one's deals (a local match plays
        # its rotations one after the other): keep only what its session needs of each hand, its number, seats and
        # payoffs, and what the scorer needs of it
        played = self._hands_of.setdefault(record.deal, [])
        played.append(_Played(record.hand_number, record.seating, record.payoffs, self.scorer.keep(record)))
        if len(played) < self.rotations:
            return
        del self._hands_of[record.deal]
        chips, hands = fold_session(((h.seating, h.payoffs) for h in played), self.cross_table)
        places = []
        for p in sorted(chips):
            places.append((p, len(self._samples[p])))
            sample = mbb_per_hand(chips[p], self.big_blind, hands[p])
            self._samples[p].append(sample)
            self._session_hands[p] += hands[p]
            self._running[p].add(sample, hands[p])
            for adjusted in self._adjusted.values():
                adjusted[p].append(math.nan)
        self._waiting.append(tuple(places))
        job = SessionJob(tuple(h.hand_number for h in played), tuple(hands.get(p, 0) for p in range(self.participants)))
        self.scorer.submit(job, [h.kept for h in played])
        self._collect(wait=False)

    def _collect(self, wait: bool) -> None:
        """Put the scorer's changes into the adjusted samples: an adjusted sample is the raw one plus the change."""
        for changes in self.scorer.results(wait):
            places = self._waiting.popleft()
            for estimator, by_player in zip(ADJUSTED, changes, strict=True):
                adjusted = self._adjusted[estimator]
                for (p, index), change in zip(places, by_player, strict=True):
                    adjusted[p][index] = self._samples[p][index] + change

    def add_all(self, records: Iterable[HandRecord]) -> SessionTally:
        """Hands recorded before (a resumed match); returns the tally."""
        for record in records:
            self.add(record)
        return self

    @property
    def sessions(self) -> int:
        """Complete duplicate sessions so far."""
        return max((len(s) for s in self._samples), default=0)

    @property
    def pending_hands(self) -> int:
        """Hands finished that the scorer has not scored back yet."""
        return self.scorer.pending_hands

    def live_rate(self, participant: int) -> WinRate:
        """``win_rate(participant)`` as far as a live line needs it, in constant time however long the match (the
        same figures but for the last bits of rounding: results use ``win_rate``)."""
        return self._running[participant].rate()

    def win_rate(self, participant: int, estimator: Estimator = Estimator.RAW) -> WinRate:
        """A participant's mbb/hand over the complete sessions, with its 95% CI, by ``estimator`` (waits for the
        sessions still at the scorer)."""
        samples = self._samples[participant]
        if estimator is not Estimator.RAW:
            if self._waiting:
                self._collect(wait=True)
            samples = self._adjusted[estimator][participant]
        return win_rate(samples, self._session_hands[participant])

    def close(self) -> None:
        """Stop the scorer (a worker process); figures not collected yet are lost."""
        self.scorer.close()
