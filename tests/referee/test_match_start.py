"""How a match begins when a bot process dies while the others are still joining (one process per rotation).

A process that joined and then died leaves its seat absent, and the match waits for the other processes; one that
died before it ever joined means the match cannot be played whole, so nothing is dealt (NO_SHOW).
"""

from __future__ import annotations

import asyncio
import contextlib

from arena.engine import Action, ActionKind
from arena.referee import MatchResult, MatchSpec, MatchStatus
from arena.referee.match import Match
from arena.referee.records import Decision
from arena.referee.seat import Seat


class LateSeat(Seat):
    """A seat that joins when told to and can leave again (as a remote bot's stream does)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.joined = asyncio.Event()
        self.ever = False
        self.gone = False

    def join(self) -> None:
        self.ever = True
        self.joined.set()

    @property
    def connected(self) -> bool:
        return self.joined.is_set() and not self.gone

    @property
    def has_joined(self) -> bool:
        return self.ever

    async def wait_connected(self, timeout_s: float) -> bool:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.joined.wait(), timeout_s)
        return self.connected

    async def decide(self, decision: Decision, retry: bool) -> Action:
        legal = decision.view.legal
        assert legal is not None
        return Action(ActionKind.CHECK) if legal.can_check else Action(ActionKind.CALL)


def two_lane_match() -> tuple[Match, list[list[LateSeat]]]:
    spec = MatchSpec("start", "fixed-seed", 4)  # heads-up duplicate: two rotations, one seat per process
    lanes = [[LateSeat(f"{name}-r{lane}") for lane in range(2)] for name in ("a", "b")]
    return Match(spec, [("a", lanes[0]), ("b", lanes[1])]), lanes


async def play(died_joined: bool) -> MatchResult:
    match, lanes = two_lane_match()
    running = asyncio.ensure_future(match.run())
    lanes[0][0].join()
    lanes[0][1].join()
    if died_joined:
        lanes[1][0].join()
    await asyncio.sleep(0.05)
    lanes[1][0].gone = died_joined
    match.crashed(1, "exited with status 1", lanes[1][0])  # b's first process dies; its second is still starting
    await asyncio.sleep(0.05)
    assert running.done() is not died_joined  # a dead seat that had joined does not stop the wait for the other
    lanes[1][1].join()
    return await running


def test_a_process_that_joined_then_died_leaves_its_seat_absent_and_the_match_is_played() -> None:
    result = asyncio.run(play(died_joined=True))
    assert result.reason is MatchStatus.COMPLETED and result.hands_played == 4
    assert result.results[1].absent > 0 and result.results[1].connected
    assert result.results[0].illegal == result.results[0].absent == 0  # the others answered every decision


def test_a_process_that_died_before_it_joined_ends_the_match_unplayed() -> None:
    result = asyncio.run(play(died_joined=False))
    assert result.reason is MatchStatus.NO_SHOW and result.hands_played == 0
