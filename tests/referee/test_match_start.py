"""How a match of one process per bot and rotation begins, and how it goes on from rotation to rotation.

The rotations are played one after the other: a rotation's processes are started (``SeatProcesses.start``) and
waited for when it begins, told the match is over for them and stopped when it ends, before the next one starts.
A first-rotation process that joined and then died leaves its seat absent, and the match goes on; one that died
before it ever joined means the match cannot be played whole, so nothing is dealt (NO_SHOW). A later rotation's
process that never joins leaves its seat to the time-out policy there: the hands dealt stand.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

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
    seats = [[LateSeat(f"{name}-r{lane}") for lane in range(2)] for name in ("a", "b")]  # seats[bot][lane]
    return Match(spec, [("a", seats[0]), ("b", seats[1])]), seats


async def play(died_joined: bool) -> MatchResult:
    match, seats = two_lane_match()
    running = asyncio.ensure_future(match.run())
    seats[0][0].join()
    if died_joined:  # b's first process joins, then dies
        seats[1][0].join()
        seats[1][0].gone = True
    match.crashed(1, "exited with status 1", seats[1][0])
    await asyncio.sleep(0.05)
    assert running.done() is not died_joined  # a dead seat that had joined does not stop the match
    if died_joined:
        for _ in range(500):  # the first rotation is played (b's seat by the time-out policy), then the second
            await asyncio.sleep(0.01)  # rotation's seats are waited for
            if match.hands_played == 2:
                break
        assert not running.done() and match.hands_played == 2
        seats[0][1].join()
        seats[1][1].join()
    return await running


def test_a_process_that_joined_then_died_leaves_its_seat_absent_and_the_match_is_played() -> None:
    result = asyncio.run(play(died_joined=True))
    assert result.reason is MatchStatus.COMPLETED and result.hands_played == 4
    assert result.results[1].absent > 0 and result.results[1].connected
    assert result.results[0].illegal == result.results[0].absent == 0  # the others answered every decision


def test_a_process_that_died_before_it_joined_ends_the_match_unplayed() -> None:
    result = asyncio.run(play(died_joined=False))
    assert result.reason is MatchStatus.NO_SHOW and result.hands_played == 0


class Processes:
    """Plays the part of the local bots: each lane's seats join when it is started (but ``never``), and every
    start, stop, wait and hand is logged in order."""

    def __init__(self, match: Match, seats: list[list[LateSeat]], never: tuple[int, int] | None = None) -> None:
        self.match = match
        self.seats = seats
        self.never = never  # (bot, lane) whose process dies before it joins
        self.log: list[str] = []
        match.on_hand = lambda record: self.log.append(f"hand r{record.rotation}")
        for bot, lanes in enumerate(seats):
            for lane, seat in enumerate(lanes):
                seat.wait_connected = self._logged(seat.wait_connected, f"wait {bot}/{lane}")  # type: ignore[method-assign]

    def _logged(self, wait: Callable[[float], Awaitable[bool]], what: str) -> Callable[[float], Awaitable[bool]]:
        def logged(timeout_s: float) -> Awaitable[bool]:
            self.log.append(what)
            return wait(timeout_s)
        return logged

    async def start(self, lane: int) -> None:
        self.log.append(f"start {lane}")
        for bot, lanes in enumerate(self.seats):
            if (bot, lane) == self.never:
                self.match.crashed(bot, "exited with status 1", lanes[lane])
            else:
                lanes[lane].join()

    async def stop(self, lane: int) -> None:
        self.log.append(f"stop {lane}")


def test_rotations_are_played_one_after_the_other_each_with_its_own_seats() -> None:
    match, seats = two_lane_match()
    processes = Processes(match, seats)
    result = asyncio.run(match.run(processes))
    assert result.reason is MatchStatus.COMPLETED and result.hands_played == 4
    assert processes.log == ["start 0", "wait 0/0", "wait 1/0", "hand r0", "hand r0", "stop 0",
                             "start 1", "wait 0/1", "wait 1/1", "hand r1", "hand r1", "stop 1"]


def test_a_process_that_never_joins_a_later_rotation_leaves_its_seat_to_the_policy_there() -> None:
    match, seats = two_lane_match()
    processes = Processes(match, seats, never=(1, 1))
    result = asyncio.run(match.run(processes))
    assert result.reason is MatchStatus.COMPLETED and result.hands_played == 4  # the hands dealt stand
    b = result.results[1]
    assert b.connected and b.crashed == "exited with status 1" and b.absent > 0
    assert any("rotation 1 never connected" in note for note in b.notes)
    assert processes.log[-1] == "stop 1"


def test_a_resumed_match_starts_only_the_rotations_it_still_has_to_play() -> None:
    spec = MatchSpec("start", "fixed-seed", 4)
    seats = [[LateSeat(f"{name}-r{lane}") for lane in range(2)] for name in ("a", "b")]
    match = Match(spec, [("a", seats[0]), ("b", seats[1])], recorded={0, 2})  # rotation 0's hands are in
    processes = Processes(match, seats)
    result = asyncio.run(match.run(processes))
    assert result.reason is MatchStatus.COMPLETED and result.hands_played == 4
    assert processes.log == ["start 1", "wait 0/1", "wait 1/1", "hand r1", "hand r1", "stop 1"]
