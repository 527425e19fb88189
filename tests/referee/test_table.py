"""The referee's core in-process: clocks, time banks, retries, the time-out policy, forfeits, broken seats."""

from __future__ import annotations

import asyncio

import pytest

from arena.engine import Action, ActionKind
from arena.referee import BotClock, ClockPolicy, Decision, FunctionSeat, Match, MatchSpec, Seat


def caller(decision: Decision) -> Action:
    legal = decision.view.legal
    assert legal is not None
    return Action(ActionKind.CHECK) if legal.can_check else Action(ActionKind.CALL)


class Slow(Seat):
    """Answers like a caller after ``delay`` seconds."""

    def __init__(self, name: str, delay: float) -> None:
        self.name = name
        self.delay = delay

    async def decide(self, decision: Decision, retry: bool) -> Action:
        await asyncio.sleep(self.delay)
        return caller(decision)


class Scripted(Seat):
    """Gives the listed answers in turn, then calls; records what it was told."""

    def __init__(self, name: str, answers: list[object]) -> None:
        self.name = name
        self.answers = list(answers)
        self.rejections: list[tuple[str, int]] = []
        self.timeouts: list[str] = []
        self.forfeit: str | None = None

    async def decide(self, decision: Decision, retry: bool) -> Action:
        if self.answers:
            answer = self.answers.pop(0)
            if isinstance(answer, Exception):
                raise answer
            return answer  # type: ignore[return-value]
        return caller(decision)

    async def rejected(self, decision: Decision, error: Exception, retries_left: int) -> None:  # type: ignore[override]
        self.rejections.append((getattr(error, "rule", ""), retries_left))

    async def timed_out(self, decision: Decision, action: Action, reason: str) -> None:
        self.timeouts.append(reason)

    async def forfeited(self, reason: str) -> None:
        self.forfeit = reason


def run(seats: list[tuple[str, Seat]], hands: int = 2, **policy: int) -> Match:
    spec = MatchSpec("m", "seed", hands, policy=ClockPolicy(**policy))
    match = Match(spec, seats)
    result = asyncio.run(match.run())
    assert result.reason == "completed" and result.hands_played == hands
    assert sum(r.net for r in result.results) == 0
    return match


def test_the_clock_charges_the_bank_only_beyond_the_per_action_limit() -> None:
    clock = BotClock(ClockPolicy(per_action_ms=100, time_bank_ms=1000))
    assert clock.allowance_s() == pytest.approx(1.1)
    clock.charge(0.05)
    assert clock.bank_ms == 1000
    clock.charge(0.6)
    assert clock.bank_ms == pytest.approx(500)
    clock.charge(5)
    assert clock.bank_ms == 0 and clock.allowance_s() == pytest.approx(0.1)


def test_a_slow_bot_uses_its_bank_then_times_out_into_check_or_fold() -> None:
    match = run([("slow", Slow("slow", 0.08)), ("fast", FunctionSeat("fast", caller))], hands=4,
                per_action_ms=50, time_bank_ms=100, max_violations=0)
    slow, fast = match.participants
    assert slow.timeouts > 0 and slow.violations == slow.timeouts and match.tables[0].players[0].clock.bank_ms == 0
    assert fast.violations == 0


def test_illegal_actions_are_retried_then_the_policy_acts() -> None:
    seat = Scripted("bad", [Action(ActionKind.RAISE, 5), Action(ActionKind.RAISE, 7), Action(ActionKind.CHECK)])
    match = run([("bad", seat), ("good", FunctionSeat("good", caller))], hands=2, max_retries=1)
    bad = match.participants[0]
    assert [rule for rule, _ in seat.rejections] == ["R7.2"]
    assert [left for _, left in seat.rejections] == [0]
    assert bad.illegal == 1 and seat.timeouts == ["illegal"]


def test_a_seat_that_raises_or_answers_garbage_is_a_violation_not_a_crash() -> None:
    seat = Scripted("broken", [RuntimeError("bug in the bot"), "not an action"])
    match = run([("broken", seat), ("good", FunctionSeat("good", caller))], hands=2, max_retries=0)
    assert match.participants[0].violations == 2


def test_too_many_violations_forfeit_and_the_match_finishes() -> None:
    seat = Scripted("bad", [Action(ActionKind.RAISE, 1)] * 50)
    match = run([("bad", seat), ("good", FunctionSeat("good", caller))], hands=6, max_retries=0, max_violations=3)
    bad = match.participants[0]
    assert bad.forfeited and bad.violations == 3 and seat.forfeit is not None and "forfeits" in seat.forfeit
    result = match.result("completed", 0)
    assert result.results[0].forfeited and "forfeited" in result.results[0].notes
