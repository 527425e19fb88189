"""A remote seat's requests under their clocks (R7), on a real event loop: the session's one alarm ends each open
request whose clock has run out, counting from the moment the request was sent, not asked; requests asked later
with earlier deadlines are watched too; an answered request is never timed out."""

from __future__ import annotations

import asyncio
import time

import pytest

from arena.engine import Action, ActionKind, Hand, TableConfig, seat_view
from arena.referee import Decision, MixedAction, TurnTimer
from arena.transport.session import BotSession, Connection
from arena_sdk.pb import bot_pb2

pytestmark = pytest.mark.foreground  # clocks of 0.1-0.4 s measured to within 0.1 s: a loaded host's event loop
# ran one 0.19 s late (0.39 s for a 0.2 s allowance)

ALLOWANCE_S = 0.2


def decision(table: int, allowance_s: float, timer: TurnTimer | None = None) -> Decision:
    """A real request for the first seat to act at a fresh heads-up table ``table``, under its own clock."""
    hand = Hand(TableConfig(50, 100), [1000, 1000], list(range(52)))
    seat = hand.to_act
    assert seat is not None
    return Decision(match_id="m", table_id=f"t{table}", hand_id=f"m-{table}", hand_number=table, request_id=table,
                    view=seat_view(hand, seat), names=("a", "b"), starting_stack=1000, action_ms_left=0,
                    bank_ms_left=0, timer=timer or TurnTimer(allowance_s))


def session() -> BotSession:
    return BotSession(Connection("unix"), bot_pb2.Join(batches=True, max_tables=64))


async def outcome(stream: BotSession, asked: Decision, send_after_s: float | None, answer_after_s: float | None,
                  sent: bool = True) -> tuple[str, float]:
    """Ask ``asked``, send its request after ``send_after_s`` (never if None), answer after ``answer_after_s`` (never
    if None): what the ask came to, and when, in seconds after it was asked."""
    loop = asyncio.get_running_loop()
    if send_after_s is not None:
        loop.call_later(send_after_s, asked.timer.sent)
    if answer_after_s is not None:
        loop.call_later(answer_after_s, lambda: stream.pending[(asked.table_id, asked.request_id)][1].set_result(
            Action(ActionKind.CALL)))
    started = time.monotonic()
    try:
        answer: Action | MixedAction = await stream.ask(asked, b"request" if sent else None)
        return str(answer), time.monotonic() - started
    except TimeoutError:
        return "timeout", time.monotonic() - started


def test_a_request_never_sent_times_out_at_its_allowance_from_the_ask() -> None:
    """A bot that stops reading its stream: the request stays queued, and the clock still runs out."""
    how, after = asyncio.run(outcome(session(), decision(1, ALLOWANCE_S), None, None))
    assert how == "timeout"
    assert ALLOWANCE_S - 0.01 <= after < ALLOWANCE_S + 0.1


def test_a_request_sent_late_gets_its_whole_allowance_from_the_send() -> None:
    """The referee's own delay before sending is not the bot's: the alarm set at the ask fires early and is set
    again for the time left."""
    send_after = 0.15
    how, after = asyncio.run(outcome(session(), decision(1, ALLOWANCE_S), send_after, None))
    assert how == "timeout"
    assert send_after + ALLOWANCE_S - 0.01 <= after < send_after + ALLOWANCE_S + 0.1
    # and an answer after the ask's deadline but within the allowance from the send is in time
    how, _ = asyncio.run(outcome(session(), decision(1, ALLOWANCE_S), send_after, ALLOWANCE_S + 0.05))
    assert how == str(Action(ActionKind.CALL))


def test_one_alarm_watches_every_open_request_and_the_soonest_deadline_wins() -> None:
    """Requests at many tables share one alarm; one asked later with a shorter clock still times out on time, the
    others at theirs, and an answered one never does."""
    async def scenario() -> tuple[list[tuple[str, float]], bool, bool]:
        stream = session()
        long = [asyncio.create_task(outcome(stream, decision(t, 0.4), 0.0, None)) for t in range(1, 9)]
        answered = asyncio.create_task(outcome(stream, decision(9, 0.4), 0.0, 0.05))
        await asyncio.sleep(0)
        alarm = stream._alarm
        short = asyncio.create_task(outcome(stream, decision(10, 0.1), 0.0, None))
        await asyncio.sleep(0)
        moved = stream._alarm is not alarm and alarm is not None and alarm.cancelled()
        results = await asyncio.gather(short, answered, *long)
        return results, moved, not stream.pending

    results, moved, closed = asyncio.run(scenario())
    (short_how, short_after), (answered_how, _), *long = results
    assert moved and closed
    assert short_how == "timeout" and 0.09 <= short_after < 0.2
    assert answered_how == str(Action(ActionKind.CALL))
    assert all(how == "timeout" and 0.39 <= after < 0.55 for how, after in long)


def test_give_back_extends_a_late_deadline_once() -> None:
    async def scenario() -> list[str]:
        stream = session()
        asked = decision(1, 0.05)
        first, _ = await outcome(stream, asked, 0.0, None)
        assert asked.timer.give_back()  # the first time out: the bot gets a few milliseconds more, not charged
        second, _ = await outcome(stream, asked, None, None, sent=False)  # the retry sends nothing again
        return [first, second, str(asked.timer.give_back())]

    assert asyncio.run(scenario()) == ["timeout", "timeout", "False"]


def test_a_session_that_ends_fails_its_open_requests_and_drops_its_alarm() -> None:
    async def scenario() -> tuple[str, bool]:
        stream = session()
        task = asyncio.create_task(outcome(stream, decision(1, 10.0), 0.0, None))
        await asyncio.sleep(0)
        stream.fail(TimeoutError())
        how, _ = await task
        return how, stream._alarm is None

    assert asyncio.run(scenario()) == ("timeout", True)
