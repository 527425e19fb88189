"""Comparing two bots, a candidate and a baseline: heads-up duplicate matches read one deal at a time, so that a
sequential test can stop them all as soon as it has decided.

The matches of a comparison (``plan_comparison``) all use the same seed, so deal d has the same cards in each:

* ``<id>-h2h``: the candidate (participant 0) against the baseline (participant 1);
* for each reference bot R_k, optionally: ``<id>-ref<k>-candidate`` (the candidate against R_k) and
  ``<id>-ref<k>-baseline`` (the baseline against R_k), the reference bot being participant 1.

A *round* is deal d played as a complete duplicate session (both seatings) in every one of these matches. The
``RoundCollector`` is every match's ``on_hand`` callback: it adds up each session's chips and, as soon as round d
is complete everywhere, hands the caller a ``DealRound`` with each session's win rate in mbb/hand (the first
participant's chips over the session / hands / big blind * 1000, as ``arena.ratings.sessions`` computes it from
the database). The caller's function answers whether to stop; if it does, every match is stopped after its hand
in play, and the hands of an unfinished round stay recorded but are not counted.

Local bots play the comparison block of deals by block, and within a block match rotation by rotation, in phases
whose processes are gone before the next phase starts (arena.runner.compare_schedule): a bot's processes all see the
same deals, so no two of them are ever alive at once. A round is complete when its block's last phase plays it.

This module knows nothing of statistics (``arena.ratings.sprt`` does) nor of the database (the sinks passed in
do): it plays, counts and stops.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from arena import scratch
from arena.deals.fold import Hand, fold_session, mbb_per_hand
from arena.engine import TableConfig
from arena.referee import ClockPolicy, HandRecord, HandSink, Match, MatchKind, MatchResult, MatchSpec, MatchStatus
from arena.runner.bots import BotSpec
from arena.runner.compare_schedule import blocks, merged, phases, skipped
from arena.runner.executor import LocalExecutor, MatchControl, MatchExecutor, MatchJob
from arena.runner.ledger import MatchLedger
from arena.runner.play import MatchRun, Played
from arena.runner.sandbox import SandboxPolicy, check_sandbox
from arena.transport.server import ServerLimits

CANDIDATE = 0
BASELINE = 1
ROTATIONS = 2  # a heads-up duplicate session: the deal played with the seats one way, then swapped


@dataclass(frozen=True, slots=True)
class Pairing:
    """One heads-up match of a comparison: indexes into the comparison's bots (0 candidate, 1 baseline, 2...
    references), ``first`` being participant 0 of the match, whose win rate the rounds report."""

    match_id: str
    first: int
    second: int

    @property
    def head_to_head(self) -> bool:
        """Whether this is the candidate-against-baseline match."""
        return self.first == CANDIDATE and self.second == BASELINE

    @property
    def role(self) -> tuple[str, int]:
        """What the match is in the comparison, as recorded: ``head_to_head`` (0), or ``candidate`` or ``baseline``
        against reference bot k (from 1)."""
        if self.head_to_head:
            return "head_to_head", 0
        return ("candidate" if self.first == CANDIDATE else "baseline"), self.second - 1


@dataclass(frozen=True, slots=True)
class ComparisonPlan:
    """Every match of a comparison, and how many rounds (deals) it may take at most."""

    comparison_id: str
    seed: str
    pairings: tuple[Pairing, ...]
    specs: tuple[MatchSpec, ...]
    rounds: int

    @property
    def references(self) -> int:
        """How many reference bots take part."""
        return (len(self.pairings) - 1) // 2

    @property
    def hands_per_round(self) -> int:
        """Hands one round takes: one duplicate session per match."""
        return ROTATIONS * len(self.pairings)

    @property
    def max_hands(self) -> int:
        """Hands the comparison plays at most (whole rounds)."""
        return self.rounds * self.hands_per_round

    @property
    def big_blind(self) -> int:
        """The big blind of every match (they share one table config)."""
        return self.specs[0].config.big_blind


def plan_comparison(
    comparison_id: str,
    seed: str,
    max_hands: int,
    references: int = 0,
    config: TableConfig | None = None,
    starting_stack: int = 20000,
    policy: ClockPolicy | None = None,
    tables: int = 1,
) -> ComparisonPlan:
    """The matches of a comparison with ``references`` reference bots, sharing ``seed``; ``max_hands`` (over all the
    matches) is rounded down to whole rounds, but at least one round is played."""
    if references < 0:
        raise ValueError(f"the number of reference bots cannot be negative, got {references}")
    pairings = [Pairing(f"{comparison_id}-h2h", CANDIDATE, BASELINE)]
    for k in range(references):
        pairings.append(Pairing(f"{comparison_id}-ref{k + 1}-candidate", CANDIDATE, 2 + k))
        pairings.append(Pairing(f"{comparison_id}-ref{k + 1}-baseline", BASELINE, 2 + k))
    rounds = max(1, max_hands // (ROTATIONS * len(pairings)))
    specs = tuple(
        MatchSpec(
            match_id=p.match_id, seed=seed, hands=ROTATIONS * rounds, config=config or TableConfig(),
            starting_stack=starting_stack, policy=policy or ClockPolicy(), duplicate=True, tables=tables,
        )
        for p in pairings
    )
    return ComparisonPlan(comparison_id, seed, tuple(pairings), specs, rounds)


@dataclass(frozen=True, slots=True)
class DealRound:
    """One deal played as a duplicate session in every match of the comparison, in mbb/hand.

    ``head_to_head`` is the candidate's win rate against the baseline; ``references[k]`` is (candidate against
    R_k, baseline against R_k). ``hands`` is how many hands the round took.
    """

    deal: int
    head_to_head: float
    references: tuple[tuple[float, float], ...]
    hands: int


class RoundCollector:
    """Turns the finished hands of a comparison's matches into rounds, in deal order, and stops the matches when
    ``on_round`` returns True. Pass ``hand_finished`` as every match's ``on_hand``, then ``attach`` the matches."""

    def __init__(self, plan: ComparisonPlan, on_round: Callable[[DealRound], bool],
                 payoffs: Callable[[HandRecord], Sequence[float]] | None = None) -> None:
        self.plan = plan
        self.on_round = on_round
        self.payoffs = payoffs or (lambda record: record.payoffs)  # an estimator's (arena.ratings.estimators)
        self.rounds: list[DealRound] = []
        self.hands_played = 0
        self.stopped = False
        self.decided = False
        self._index = {p.match_id: i for i, p in enumerate(plan.pairings)}
        self._open: list[dict[int, list[Hand]]] = [{} for _ in plan.pairings]  # deal -> its hands so far
        self._next_deal = 0
        self._matches: list[Match] = []
        self._stops: list[asyncio.Event] = []

    def attach(self, matches: Sequence[Match]) -> None:
        """The matches to stop when the test decides."""
        self._matches = list(matches)

    def attach_stops(self, stops: Sequence[asyncio.Event]) -> None:
        """The stop signals of matches played by an executor (``MatchControl.stop``), set when the test decides."""
        self._stops = list(stops)

    def stop(self) -> None:
        """Stop every match after its hands in play, and count no more rounds."""
        self.stopped = True
        for match in self._matches:
            match.stop(MatchStatus.STOPPED)
        for stop in self._stops:
            stop.set()

    def hand_finished(self, record: HandRecord) -> None:
        """A hand of one of the matches is over (the ``on_hand`` callback)."""
        index = self._index.get(record.match_id)
        if index is None:
            raise KeyError(f"hand of match {record.match_id!r}, which is not part of {self.plan.comparison_id}")
        self.hands_played += 1
        self._open[index].setdefault(record.deal, []).append((record.seating, self.payoffs(record)))
        self._complete_rounds()

    def _session_mbb(self, index: int, deal: int) -> tuple[float, int]:
        """The pairing's first bot's (participant 0's) mbb/hand over the deal, and the deal's hands."""
        hands = self._open[index].pop(deal)
        chips, count = fold_session(hands)
        return mbb_per_hand(chips[0], self.plan.big_blind, count[0]), len(hands)

    def _complete_rounds(self) -> None:
        deal = self._next_deal
        while not self.stopped and all(
            len(self._open[i].get(deal, ())) >= ROTATIONS for i in range(len(self.plan.pairings))
        ):
            sessions = [self._session_mbb(i, deal) for i in range(len(self.plan.pairings))]
            rates = [rate for rate, _ in sessions]
            references = tuple((rates[1 + 2 * k], rates[2 + 2 * k]) for k in range(self.plan.references))
            completed = DealRound(deal, rates[0], references, sum(hands for _, hands in sessions))
            self.rounds.append(completed)
            deal = self._next_deal = deal + 1
            if self.on_round(completed):
                self.decided = True
                self.stop()

    @property
    def hands_counted(self) -> int:
        """Hands in the rounds counted so far."""
        return sum(r.hands for r in self.rounds)


@dataclass(slots=True)
class ComparisonRun:
    """How the matches of a comparison ended: their results, the rounds counted, and any bot failures (a bot
    that never connected, crashed, forfeited or dropped out)."""

    results: list[MatchResult]
    rounds: list[DealRound]
    hands_played: int
    seconds: float
    failures: list[str] = field(default_factory=list)
    played: list[Played] = field(default_factory=list)  # each match finished in its ledger (commitment, final hash)


async def run_matches(matches: Sequence[Match], collector: RoundCollector) -> ComparisonRun:
    """Play already built matches side by side (for example with in-process seats) until the collector stops them
    or they end; every match must have been built with ``collector.hand_finished`` as its ``on_hand``."""
    started = time.monotonic()
    collector.attach(matches)
    results = await asyncio.gather(*(m.run() for m in matches))
    return ComparisonRun(list(results), collector.rounds, collector.hands_played, time.monotonic() - started)


def open_comparison(plan: ComparisonPlan, bots: Sequence[BotSpec], ledger: MatchLedger,
                    sandbox: SandboxPolicy | None = None, cwd: Path | None = None,
                    log_dir: Path | None = None) -> list[MatchRun]:
    """Open each match of the comparison in the ``ledger``, in the plan's order (before its roles are recorded).
    ``bots`` are the candidate, the baseline, then the reference bots, as in the plan."""
    if len(bots) != 2 + plan.references:
        raise ValueError(f"the plan has {plan.references} reference bots but {len(bots) - 2} were given")
    policy = sandbox if sandbox is not None else SandboxPolicy()
    return [MatchRun(ledger, MatchJob(spec, (bots[p.first], bots[p.second]), cwd=cwd or Path.cwd(), sandbox=policy,
                                      log_dir=log_dir), MatchKind.COMPARE, plan.comparison_id)
            for p, spec in zip(plan.pairings, plan.specs, strict=True)]


async def run_local_comparison(
    plan: ComparisonPlan,
    runs: Sequence[MatchRun],
    collector: RoundCollector,
    sinks: Sequence[HandSink] = (),
    log_dir: Path | None = None,
    limits: ServerLimits | None = None,
    executor: MatchExecutor | None = None,
) -> ComparisonRun:
    """Play the comparison with ``executor`` (here by default: a referee on a private local socket per match and
    sandboxed processes of each bot command), block of deals by block and phase by phase (arena.runner.
    compare_schedule), so that no bot ever has two processes alive that see the same deals. Each match (``runs``,
    opened by ``open_comparison``) is finished in its ledger at the end (a comparison is never resumed: stopped by
    its verdict or by an error, its matches are over for good); each hand is written to its match's entry, then to
    ``sinks``, and counted by the collector, until the collector's test decides, a bot dies or the hands run out."""
    if len(runs) != len(plan.pairings):
        raise ValueError(f"the plan has {len(plan.pairings)} matches but {len(runs)} were opened")
    if any(run.job.sandbox.enabled for run in runs):
        check_sandbox()
    executor = executor or LocalExecutor(limits)
    started = time.monotonic()

    def crashed(failure: str) -> None:  # a bot that dies ends the comparison: its verdict would mean nothing
        collector.stop()

    parts: list[list[tuple[MatchResult, int]]] = [[] for _ in plan.pairings]
    players = [(p.first, p.second) for p in plan.pairings]
    with scratch.scratch("arena-logs-") as logs:  # bots' output, for a crash report
        for deals in blocks(plan.rounds):
            for phase in phases(players, ROTATIONS):
                if collector.stopped:
                    break
                controls = [MatchControl(on_crash=crashed) for _ in phase]
                collector.attach_stops([control.stop for control in controls])
                halves = []
                for half in phase:
                    run = runs[half.match]
                    halves.append(dataclasses.replace(run.job, recorded=skipped(run.job.spec, deals, half.rotation),
                                                      log_dir=log_dir or logs))
                results = await asyncio.gather(*(
                    runs[half.match].play(executor, sinks, collector.hand_finished, control, part=job)
                    for half, job, control in zip(phase, halves, controls, strict=True)))
                for half, job, result in zip(phase, halves, results, strict=True):
                    parts[half.match].append((result, len(job.recorded)))
                    if result.reason is MatchStatus.NO_SHOW:  # a bot that cannot play ends the comparison
                        collector.stop()
            if collector.stopped:
                break
    merged_results = [merged(run.job.spec, played, [(bot.name, bot.version) for bot in run.job.bots],
                             MatchStatus.STOPPED) for run, played in zip(runs, parts, strict=True)]
    failures = [failure for result in merged_results for failure in result.failures()]
    played = [run.finish(dataclasses.replace(result, reason=MatchStatus.STOPPED) if failures and not
                         result.reason.over else result)
              for run, result in zip(runs, merged_results, strict=True)]
    return ComparisonRun([p.result for p in played], collector.rounds, collector.hands_played,
                         time.monotonic() - started, failures, played)
