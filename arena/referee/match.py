"""A match: one table, a fixed set of bots, a number of hands dealt from a seed in duplicate rotations."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from arena.deals import DealPlan, commitment, deck_for_hand, duplicate_plan
from arena.engine import ConfigError, TableConfig
from arena.engine.config import MAX_SEATS, MIN_SEATS
from arena.referee.clock import BotClock, ClockPolicy
from arena.referee.records import HandRecord, HandSink
from arena.referee.seat import Seat
from arena.referee.table import Participant, TableRunner, notify

log = logging.getLogger("arena.referee")


@dataclass(frozen=True, slots=True)
class MatchSpec:
    """What a match is: its table, its length and its seed. Stacks reset to ``starting_stack`` every hand (R11.2)."""

    match_id: str
    seed: str
    hands: int
    config: TableConfig = field(default_factory=TableConfig)
    starting_stack: int = 20000
    policy: ClockPolicy = field(default_factory=ClockPolicy)
    duplicate: bool = True
    all_orders: bool = False
    table_id: str = "table-1"

    def __post_init__(self) -> None:
        if self.hands < 1:
            raise ValueError(f"a match needs at least one hand, got {self.hands}")
        if self.starting_stack <= 0:
            raise ConfigError("R11.1", f"the starting stack must be positive, got {self.starting_stack}")

    @property
    def commitment(self) -> str:
        """The hash of the seed, publishable before the match (see arena.deals)."""
        return commitment(self.seed)

    def plan(self, num_seats: int, start: int = 0) -> list[DealPlan]:
        """Every hand of the match in order (rounded up to whole duplicate sets)."""
        return list(duplicate_plan(num_seats, self.hands, self.all_orders, self.duplicate, start))


@dataclass(frozen=True, slots=True)
class ParticipantResult:
    """One bot's result: chips won, mbb/hand, what went wrong."""

    name: str
    version: str
    net: int
    hands: int
    mbb_per_hand: float
    decisions: int
    mean_think_ms: float
    violations: int
    timeouts: int
    illegal: int
    absent: int
    forfeited: bool
    notes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class MatchResult:
    """How a match ended and each bot's result, in participant order."""

    match_id: str
    reason: str
    hands_played: int
    hands_total: int
    seconds: float
    results: tuple[ParticipantResult, ...]
    commitment: str
    seed: str


class Match:
    """Runs a match to the end: every scheduled hand is played, whatever the bots do."""

    def __init__(
        self,
        spec: MatchSpec,
        seats: Sequence[tuple[str, Seat]],
        sinks: Sequence[HandSink] = (),
        versions: Sequence[str] | None = None,
        start_hand: int = 0,
        on_hand: Callable[[HandRecord], None] | None = None,
    ) -> None:
        if not MIN_SEATS <= len(seats) <= MAX_SEATS:
            raise ConfigError("R2.1", f"a table has 2 to 22 seats, got {len(seats)} bots")
        self.spec = spec
        self.participants = [
            Participant(name, seat, BotClock(spec.policy), version=(versions[i] if versions else ""))
            for i, (name, seat) in enumerate(seats)
        ]
        self.table = TableRunner(spec.match_id, spec.table_id, spec.config, spec.policy, self.participants, sinks)
        self.start_hand = start_hand
        self.hands_played = 0
        self.on_hand = on_hand
        self._stop = asyncio.Event()
        self.plan = spec.plan(len(seats), start_hand)

    @property
    def hands_total(self) -> int:
        """Hands the match will play (whole duplicate sets)."""
        return self.start_hand + len(self.plan)

    def stop(self) -> None:
        """Finish the hand in play, then end the match as aborted."""
        self._stop.set()

    async def run(self) -> MatchResult:
        """Wait for the bots to connect (up to the policy's limit), then play every hand and tell the bots."""
        started = time.monotonic()
        timeout = self.spec.policy.connect_timeout_ms / 1000
        await asyncio.gather(*(p.seat.wait_connected(timeout) for p in self.participants))
        reason = "completed"
        for plan in self.plan:
            if self._stop.is_set():
                reason = "aborted"
                break
            deck = deck_for_hand(self.spec.seed, plan.deal)
            stacks = [self.spec.starting_stack] * len(self.participants)
            record = await self.table.play_hand(plan, deck, stacks)
            self.hands_played += 1
            if self.on_hand is not None:
                self.on_hand(record)
        result = self.result(reason, time.monotonic() - started)
        for index, participant in enumerate(self.participants):
            await notify(participant.seat.match_finished(result, index), f"match end to {participant.name}")
        return result

    def result(self, reason: str, seconds: float) -> MatchResult:
        """The match's results so far."""
        big_blind = self.spec.config.big_blind
        results = tuple(
            ParticipantResult(
                name=p.name,
                version=p.version,
                net=p.net,
                hands=p.hands,
                mbb_per_hand=(1000.0 * p.net / big_blind / p.hands) if p.hands else 0.0,
                decisions=p.decisions,
                mean_think_ms=(1000.0 * p.think_s / p.decisions) if p.decisions else 0.0,
                violations=p.violations,
                timeouts=p.timeouts,
                illegal=p.illegal,
                absent=p.absent,
                forfeited=p.forfeited,
                notes=tuple(p.notes),
            )
            for p in self.participants
        )
        return MatchResult(
            self.spec.match_id, reason, self.hands_played, self.hands_total, seconds, results,
            self.spec.commitment, self.spec.seed,
        )
