"""In-process comparisons (no network, no subprocesses): the runner's matches and round collector with function
seats, feeding the same SPRT as ``arena compare``."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from arena.engine import Action
from arena.ratings.sprt import Sprt, SprtParams
from arena.referee import Decision, FunctionSeat, HandSink, Match
from arena.runner.compare import ComparisonRun, DealRound, RoundCollector, plan_comparison, run_matches

Player = Callable[[Decision], Action]


@dataclass
class Outcome:
    """The test as it ended and how the matches went."""

    sprt: Sprt
    run: ComparisonRun


def compare_in_process(
    candidate: Player,
    baseline: Player,
    seed: str,
    params: SprtParams,
    max_hands: int,
    references: Sequence[Player] = (),
    starting_stack: int = 20000,
    sinks: Sequence[HandSink] = (),
    comparison_id: str = "t",
    entries: Sequence[HandSink] = (),
) -> Outcome:
    """Play candidate against baseline (and both against each reference) until the SPRT decides (``entries``: each
    match's own sink, its ledger entry, in the plan's order)."""
    plan = plan_comparison(comparison_id, seed, max_hands, len(references), starting_stack=starting_stack)
    sprt = Sprt(params)

    def on_round(r: DealRound) -> bool:
        sprt.add_round(r.head_to_head, r.references, r.hands)
        return sprt.decided

    collector = RoundCollector(plan, on_round)
    players = [candidate, baseline, *references]
    matches = [
        Match(
            spec,
            [(f"bot{p.first}", FunctionSeat(f"bot{p.first}", players[p.first])),
             (f"bot{p.second}", FunctionSeat(f"bot{p.second}", players[p.second]))],
            [*entries[i:i + 1], *sinks],
            on_hand=collector.hand_finished,
        )
        for i, (p, spec) in enumerate(zip(plan.pairings, plan.specs, strict=True))
    ]
    run = asyncio.run(run_matches(matches, collector))
    return Outcome(sprt, run)
