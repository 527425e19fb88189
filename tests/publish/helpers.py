"""Small real databases for the publish tests: matches played in-process by simple function bots."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import random
from collections.abc import Callable, Sequence
from pathlib import Path

from arena import text
from arena.engine import Action, ActionKind, TableConfig
from arena.ratings.blocks import RatingRules
from arena.ratings.sprt import Sprt, SprtParams
from arena.records.comparisons import record_comparison, record_outcome
from arena.records.db import Database
from arena.records.ledger import Ledger
from arena.referee import (
    Answer,
    ClockPolicy,
    Commented,
    Decision,
    FunctionSeat,
    Match,
    MatchKind,
    MatchSpec,
    MatchStatus,
)
from arena.runner.bots import BotSpec
from arena.runner.compare import DealRound, RoundCollector, plan_comparison, run_matches

EVIL = "<script>alert(1)</script>"

Strategy = Callable[[Decision], Answer]


def caller(decision: Decision) -> Action:
    """Checks when it can, else calls: never folds, never raises."""
    legal = decision.view.legal
    assert legal is not None
    return Action(ActionKind.CHECK) if legal.can_check else Action(ActionKind.CALL)


def raiser(decision: Decision) -> Action:
    """Raises the minimum whenever it may, else calls or checks."""
    legal = decision.view.legal
    assert legal is not None
    if legal.can_raise and decision.view.street == 0:
        return Action(ActionKind.RAISE, legal.min_raise_to)
    return Action(ActionKind.CHECK) if legal.can_check else Action(ActionKind.CALL)


def folder(decision: Decision) -> Action:
    """Checks when it can, folds to any bet."""
    legal = decision.view.legal
    assert legal is not None
    return Action(ActionKind.CHECK) if legal.can_check else Action(ActionKind.FOLD)


def cheat(decision: Decision) -> Action:
    """Raises to one chip, always: illegal, so the referee acts for it and counts a violation."""
    return Action(ActionKind.RAISE, 1)


def gambler(seed: int) -> Strategy:
    """A seeded random mix of the three, so sessions differ and intervals are finite."""
    rng = random.Random(seed)

    def choose(decision: Decision) -> Action:
        return rng.choice((caller, raiser, folder))(decision)

    return choose


def commenting(strategy: Callable[[Decision], Action], texts: Sequence[str]) -> Strategy:
    """``strategy`` with a decision comment on every action, the next of ``texts`` in turn, cleaned as the wire
    cleans a bot's (arena.text.comment)."""
    said = itertools.cycle(texts)

    def choose(decision: Decision) -> Answer:
        return Commented(strategy(decision), text.comment(next(said)))

    return choose


def play(
    db: Database,
    match_id: str,
    bots: Sequence[tuple[str, str, Strategy]],
    hands: int,
    finish: bool = True,
    seed: str | None = None,
    stop_after: int | None = None,
    policy: ClockPolicy | None = None,
    kind: MatchKind = MatchKind.MATCH,
    event: str | None = None,
) -> None:
    """Play one duplicate match between ``bots`` (name, version, strategy) and record it in ``db``.

    With ``finish=False`` the match stays ``running`` (as if the referee were still dealing); ``stop_after``
    ends it after that many hands, possibly in the middle of a deal's rotations; ``kind`` and ``event``: what it is
    recorded as (a league's match, a tournament's...).
    """
    spec = MatchSpec(match_id, seed or f"seed-{match_id}", hands, TableConfig(small_blind=50, big_blind=100),
                     starting_stack=10_000, policy=policy or ClockPolicy())
    seats = [(name, FunctionSeat(name, strategy)) for name, _, strategy in bots]
    entry = Ledger(db).open(spec, [BotSpec(name, "", version) for name, version, _ in bots], kind, event)
    match = Match(spec, seats, sinks=[entry], versions=[version for _, version, _ in bots])
    if stop_after is not None:
        match.on_hand = lambda _: match.stop() if match.hands_played >= stop_after else None
    result = asyncio.run(match.run())
    if finish:
        entry.finish(result)


def compare(db: Database, comparison_id: str, candidate: tuple[str, Strategy], baseline: tuple[str, Strategy],
            max_hands: int, params: SprtParams) -> Sprt:
    """A comparison recorded as ``arena compare`` records one (matches of kind compare named after it, its
    parameters and verdict in a note), played in-process by function bots; the test as it ended."""
    plan = plan_comparison(comparison_id, f"seed-{comparison_id}", max_hands,
                           config=TableConfig(small_blind=50, big_blind=100), starting_stack=10_000)
    test = Sprt(params)

    def on_round(r: DealRound) -> bool:
        test.add_round(r.head_to_head, r.references, r.hands)
        return test.decided

    collector = RoundCollector(plan, on_round)
    players = [candidate, baseline]
    matches = []
    entries = []
    for pairing, spec in zip(plan.pairings, plan.specs, strict=True):
        pair = [players[pairing.first], players[pairing.second]]
        entry = Ledger(db).open(spec, [BotSpec(name, f"python {name}.py") for name, _ in pair], MatchKind.COMPARE,
                                comparison_id)
        entries.append(entry)
        matches.append(Match(spec, [(name, FunctionSeat(name, strategy)) for name, strategy in pair], [entry],
                             on_hand=collector.hand_finished))
    bots = [{"key": name, "name": name, "version": "", "command": f"python {name}.py"} for name, _ in players]
    record_comparison(db, comparison_id, {"params": dataclasses.asdict(params), "bots": bots,
                                          "max_hands": plan.max_hands, "estimator": "raw"},
                      [(p.match_id, *p.role) for p in plan.pairings])
    run = asyncio.run(run_matches(matches, collector))
    for entry, result in zip(entries, run.results, strict=True):
        entry.finish(result if result.reason.over else dataclasses.replace(result, reason=MatchStatus.STOPPED))
    verdict = test.verdict.value if test.decided else "inconclusive"
    record_outcome(db, comparison_id, {"verdict": verdict, "test_verdict": test.verdict.value,
                                       "sessions": test.sessions, "llr": test.llr})
    return test


SAMPLE_RULES = RatingRules(block_deals=3, min_games=2)
"""Rating games of three deals: the sample database's matches are a few deals long (the default block of 30 deals
would rate nobody here; tests/ratings/test_blocks.py holds the default to its purpose)."""


def sample_database(path: Path) -> Database:
    """Three bots (one named like an XSS attack, one with a version) over three matches, plus a match still
    running; enough sessions for finite confidence intervals.
    """
    db = Database(path)
    play(db, "heads-up-1", [("caller", "", caller), ("raiser", "1.0", raiser)], hands=24)
    play(db, "three-way", [("caller", "", caller), ("raiser", "1.0", raiser), (EVIL, "", gambler(1))], hands=18)
    play(db, "evil-vs-caller", [(EVIL, "", gambler(2)), ("caller", "", caller)], hands=20)
    play(db, "still running", [("raiser", "1.0", raiser), (EVIL, "", folder)], hands=10, finish=False, stop_after=5)
    return db
