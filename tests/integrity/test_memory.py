"""The memory cheat (cheats/memory.py) against a calling station (the C++ bot's), sandboxed, on a fixed seed.

With lanes (one process per bot per rotation, as every local match is played) it never meets the mirror of a deal
it saw, so it plays exactly as its honest copy: its mbb/hand lies inside the honest copy's 95% interval. With one
process for both rotations (the set-up lanes replaced: one seat per bot at one table) it recognises every mirror
and wins by a mile: the exploit is real, so the first result means something.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from arena.ratings.sessions import load_sessions
from arena.ratings.stats import WinRate, win_rates
from arena.records.db import Database
from arena.records.ledger import Ledger
from arena.referee import HandSink, MatchResult, MatchSpec, MatchStatus
from arena.runner.bots import BotSpec
from arena.runner.remote_match import launch, play_watched, prepare_match, run_local_match
from arena.runner.sandbox import SandboxPolicy, check_sandbox
from tests.bots import caller
from tests.integrity.harness import REPO, SAMPLES, cheat, reports

pytestmark = pytest.mark.timeout(120)

SEED = "integrity-memory-1"
HANDS = 200  # 100 duplicate sessions: the honest copy's interval is about 1,400 mbb/hand wide
POLICY = SandboxPolicy(binds=(SAMPLES,))  # the cheat plays like the Python equity bot, whose module it imports


@dataclass(frozen=True, slots=True)
class Played:
    result: MatchResult
    rate: WinRate  # the memory bot's mbb/hand over the match's duplicate sessions
    memory: list[dict[str, Any]]  # what each of its processes reported


async def _one_lane(spec: MatchSpec, bots: list[BotSpec], entry: HandSink, logs: Path) -> MatchResult:
    """The unsafe set-up: one table, one process per bot for both rotations (what lanes prevent)."""
    check_sandbox()
    setup = await prepare_match(spec, [b.name for b in bots], [entry], local=True, tcp=False, lanes=1)
    try:
        await launch(setup, bots, logs, REPO, POLICY)
        return await play_watched(setup)
    finally:
        await asyncio.gather(*(p.stop() for p in setup.processes))
        await setup.server.stop()


def play(folder: Path, honest: bool, lanes: bool) -> Played:
    folder.mkdir(parents=True)
    match_id = "memory"  # the same in every run: the cheat plays like the equity bot, whose choices depend on hand ids
    spec = MatchSpec(match_id, SEED, HANDS)
    bots = [BotSpec("caller", caller()), BotSpec("memory", cheat("memory", env="MEMORY_HONEST=1" if honest else ""))]
    db = Database(folder / "arena.db")
    entry = Ledger(db).open(spec, bots)
    if lanes:
        result = asyncio.run(run_local_match(spec, bots, [entry], log_dir=folder, cwd=REPO, sandbox=POLICY))
    else:
        result = asyncio.run(_one_lane(spec, bots, entry, folder))
    entry.finish(result)
    assert result.reason == MatchStatus.COMPLETED and result.hands_played == HANDS
    assert all(r.violations == 0 for r in result.results), result.results
    rate = win_rates(load_sessions(db, [match_id]))["memory"]
    memory = reports(folder, "MEMORY", "memory")
    print(f"{folder.name}: {rate.mean:+.0f} mbb/hand [{rate.low:+.0f}, {rate.high:+.0f}] over {rate.sessions} "
          f"sessions; reports {memory}")
    return Played(result, rate, memory)


@pytest.fixture(scope="module")
def honest(tmp_path_factory: pytest.TempPathFactory) -> Played:
    return play(tmp_path_factory.mktemp("memory") / "honest", honest=True, lanes=True)


def test_with_lanes_the_memory_cheat_never_meets_a_mirror_and_gains_nothing(honest: Played, tmp_path: Path) -> None:
    cheat_run = play(tmp_path / "cheat", honest=False, lanes=True)
    assert len(cheat_run.memory) == 2  # one process per rotation
    assert all(r["hands_seen"] == HANDS // 2 for r in cheat_run.memory)
    assert sum(r["recognitions"] for r in cheat_run.memory) == 0, cheat_run.memory
    assert sum(r["exploited_hands"] for r in cheat_run.memory) == 0
    assert honest.rate.low <= cheat_run.rate.mean <= honest.rate.high, (cheat_run.rate, honest.rate)
    # Never having recognised anything it played exactly as its honest copy, hand for hand
    assert [r.net for r in cheat_run.result.results] == [r.net for r in honest.result.results]


def test_one_process_for_both_rotations_lets_the_memory_cheat_win_big(honest: Played, tmp_path: Path) -> None:
    """The control: without lanes the same cheat recognises the mirror of every deal and plays it perfectly."""
    cheat_run = play(tmp_path / "unsafe", honest=False, lanes=False)
    assert len(cheat_run.memory) == 1
    report = cheat_run.memory[0]
    assert report["hands_seen"] == HANDS
    assert report["recognitions"] >= HANDS // 2  # every second rotation, at least
    assert cheat_run.rate.low > honest.rate.high  # significantly better than its honest copy
    assert cheat_run.rate.mean > honest.rate.mean + 5000  # and by a lot: thousands of mbb/hand
