"""What a match's runner needs of the records, as protocols (the runner comes before the records in the layers:
arena.records.ledger implements them): a ledger opens a match's entry; an entry takes each finished hand, knows
what was played before, and takes the result. Playing a match is then: open, record each hand, finish."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

from arena.referee import HandRecord, MatchKind, MatchResult, MatchSpec, MatchStatus


class LedgerRefused(ValueError):
    """A request a ledger refuses as asked (a match recorded already, one with another schedule or players); the
    records' ``LedgerError`` is one."""


class Entrant(Protocol):
    """A participant of a match as the records know it (a ``BotSpec`` is one)."""

    @property
    def name(self) -> str: ...

    @property
    def version(self) -> str: ...

    @property
    def command(self) -> str: ...


class MatchEntry(Protocol):
    """One match, open in a ledger: a HandSink for its hands, what was played before, and its end."""

    @property
    def match_id(self) -> str: ...

    @property
    def commitment(self) -> str: ...

    @property
    def played(self) -> frozenset[int]:
        """The hands recorded before this run (a resumed match skips them)."""
        ...

    @property
    def history(self) -> Mapping[int, tuple[int, ...]] | None:
        """A cash game's or a freezeout's recorded hands' final stacks, by hand number (None: the reset game)."""
        ...

    @property
    def final_hash(self) -> str | None:
        """The match's final hash, once finished."""
        ...

    @property
    def commits(self) -> bool:
        """Whether recording a hand commits a transaction (several in one cost less than one each)."""
        ...

    @property
    def durable(self) -> bool:
        """Whether its hands are stored anywhere (HandSink.durable: the hand chain waits for nothing otherwise)."""
        ...

    def hand_finished(self, record: HandRecord) -> None:
        """Record one finished hand (durable when it returns)."""
        ...

    def hands_finished(self, records: Sequence[HandRecord]) -> None:
        """Record finished hands, in order, all or none of them (durable when it returns)."""
        ...

    def reopen(self) -> None:
        """Verify what is recorded and take it as played (before a lost match is played on)."""
        ...

    def finish(self, result: MatchResult) -> MatchResult:
        """Record how the match ended; the whole match's result."""
        ...


class MatchLedger(Protocol):
    """Where matches are recorded."""

    @property
    def hidden(self) -> tuple[Path, ...]:
        """Files no bot may see (the database, the seed vault)."""
        ...

    def open(self, spec: MatchSpec, entrants: Sequence[Entrant], kind: MatchKind = MatchKind.MATCH,
             event: str | None = None, resume: bool = False) -> MatchEntry:
        """Record a match before its first hand (``resume``: take up one recorded already, verified first)."""
        ...

    def check(self, spec: MatchSpec, entrants: Sequence[Entrant]) -> None:
        """Refuse a recorded match that is not the one asked for (its seed, schedule, participants)."""
        ...

    def status(self, match_id: str) -> MatchStatus | None:
        """How a match stands, if it is recorded."""
        ...

    def seed(self, key: str) -> str | None:
        """An event's seed kept under ``key`` (secret or published)."""
        ...

    def keep_seed(self, key: str, seed: str) -> None:
        """Keep an event's seed secret until it is published."""
        ...

    def publish_seed(self, key: str) -> str | None:
        """Publish an event's seed kept under ``key``."""
        ...
