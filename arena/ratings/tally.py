"""A match's duplicate sessions as its hands finish: each bot's mbb/hand with a 95% CI, for live lines and
result tables (the same per-session samples as ``arena.ratings.sessions`` reads from the database)."""

from __future__ import annotations

from collections.abc import Iterable

from arena.ratings.stats import WinRate, win_rate
from arena.referee import HandRecord


class SessionTally:
    """Chips per participant per deal; a deal counts as a session once all its ``rotations`` hands are in."""

    def __init__(self, participants: int, rotations: int, big_blind: int) -> None:
        self.participants = participants
        self.rotations = rotations
        self.big_blind = big_blind
        self.hands = 0
        self._open: dict[int, tuple[list[int], list[int]]] = {}  # deal -> (chips, hands) per participant
        self._samples: list[list[float]] = [[] for _ in range(participants)]
        self._session_hands = [0] * participants

    def add(self, record: HandRecord) -> None:
        """One finished hand."""
        self.hands += 1
        chips, hands = self._open.setdefault(record.deal, ([0] * self.participants, [0] * self.participants))
        for seat, participant in enumerate(record.seating):
            chips[participant] += record.payoffs[seat]
            hands[participant] += 1
        if max(hands) >= self.rotations:
            del self._open[record.deal]
            for p in range(self.participants):
                if hands[p]:
                    self._samples[p].append(1000.0 * chips[p] / self.big_blind / hands[p])
                    self._session_hands[p] += hands[p]

    def add_all(self, records: Iterable[HandRecord]) -> SessionTally:
        """Hands recorded before (a resumed match); returns the tally."""
        for record in records:
            self.add(record)
        return self

    @property
    def sessions(self) -> int:
        """Complete duplicate sessions so far."""
        return max((len(s) for s in self._samples), default=0)

    def win_rate(self, participant: int) -> WinRate:
        """A participant's mbb/hand over the complete sessions, with its 95% CI."""
        return win_rate(self._samples[participant], self._session_hands[participant])
