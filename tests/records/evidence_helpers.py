"""A small match worth editing: heads-up, twelve hands, with mixed actions, time-outs, refused illegal actions
(rejections recorded) and violations, played in-process and recorded through the ledger; and a copy of it cut short
as SIGKILL leaves a match (still running, its seed in the vault, no final hash)."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
from pathlib import Path

from arena.engine import Action, ActionKind, TableConfig
from arena.records.db import Database
from arena.records.ledger import Ledger, LedgerEntry
from arena.referee import ClockPolicy, Decision, FunctionSeat, Match, MatchKind, MatchSpec, MixedAction, Seat
from arena.runner.bots import BotSpec
from tests.referee.test_mixed_action import caller, mixer

HANDS = 12
POLICY = ClockPolicy(per_action_ms=40, time_bank_ms=0, max_retries=1, max_violations=0)
BOTS = [BotSpec("alice", "python alice.py", "1.0"), BotSpec("bob", "python bob.py", "2.0")]


class Varied(Seat):
    """Mixes its actions; in every fifth hand it is too slow once (a time-out), in the hands after those it first
    answers with an illegal raise (refused, then it plays)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.seen: set[int] = set()
        self.slow = -1  # the request it is too slow for (asked again, it is as slow)

    async def decide(self, decision: Decision, retry: bool) -> Action | MixedAction:
        first = decision.hand_number not in self.seen
        self.seen.add(decision.hand_number)
        if first and decision.hand_number % 5 == 1:
            self.slow = decision.request_id
        if decision.request_id == self.slow:
            await asyncio.sleep(0.1)  # past its 40 ms and its empty bank: the referee checks or folds for it
        if first and decision.hand_number % 5 == 2 and not retry:
            return Action(ActionKind.RAISE, 1)  # R7.2: refused, and asked again
        return mixer(decision)


def spec(match_id: str = "ev", hands: int = HANDS) -> MatchSpec:
    return MatchSpec(match_id, f"seed-{match_id}", hands, TableConfig(small_blind=50, big_blind=100),
                     starting_stack=10_000, policy=POLICY)


def record(path: Path, match_id: str = "ev", stop_after: int | None = None, kind: MatchKind = MatchKind.MATCH,
           event: str | None = None) -> LedgerEntry:
    """Play and record the match (``stop_after`` hands: left as a SIGKILL leaves it, never finished)."""
    db = Database(path)
    entry = Ledger(db).open(spec(match_id), BOTS, kind, event)
    match = Match(spec(match_id), [("alice", Varied("alice")), ("bob", FunctionSeat("bob", caller))], [entry],
                  versions=[b.version for b in BOTS])
    if stop_after is not None:
        match.on_hand = lambda _: match.stop() if match.hands_played >= stop_after else None
    result = asyncio.run(match.run())
    if stop_after is None:
        entry.finish(result)
    db.close()
    return entry


def copy(source: Path, target: Path) -> Path:
    """A copy of a database (and its seed vault) to edit."""
    shutil.copy(source, target)
    for suffix in (".seeds", ".seeds.bak"):
        vault = source.with_name(source.name + suffix)
        if vault.exists():
            shutil.copy(vault, target.with_name(target.name + suffix))
    return target


def edit(path: Path, *statements: str) -> None:
    """Change a database behind arena's back, as whoever holds the file could."""
    conn = sqlite3.connect(path)
    for statement in statements:
        conn.execute(statement)
    conn.commit()
    conn.close()
