"""TurnTimer on a real event loop: a request's clock starts when it is sent, not when it was asked (R7 clocks)."""

from __future__ import annotations

import asyncio
import time

from arena.referee import TurnTimer

ALLOWANCE_S = 0.2


async def outcome(timer: TurnTimer, send_after_s: float | None, answer_after_s: float | None) -> tuple[str, float]:
    """Arm a future, send the request after ``send_after_s`` (never if None), answer after ``answer_after_s``
    (never if None): what the future came to, and when, in seconds after it was armed."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[str] = loop.create_future()
    armed = time.monotonic()
    timer.arm(future)
    if send_after_s is not None:
        loop.call_later(send_after_s, timer.sent)
    if answer_after_s is not None:
        loop.call_later(answer_after_s, lambda: future.done() or future.set_result("answer"))
    try:
        return await future, time.monotonic() - armed
    except TimeoutError:
        return "timeout", time.monotonic() - armed
    finally:
        timer.disarm()


def test_a_request_never_sent_times_out_at_its_allowance_from_the_ask() -> None:
    """A bot that stops reading its stream: the request stays queued, and the clock still runs out."""
    how, after = asyncio.run(outcome(TurnTimer(ALLOWANCE_S), None, None))
    assert how == "timeout"
    assert ALLOWANCE_S - 0.01 <= after < ALLOWANCE_S + 0.1


def test_a_request_sent_late_gets_its_whole_allowance_from_the_send() -> None:
    """The referee's own delay before sending is not the bot's: the handle set at the ask fires early and sets
    itself again for the time left."""
    send_after = 0.15
    how, after = asyncio.run(outcome(TurnTimer(ALLOWANCE_S), send_after, None))
    assert how == "timeout"
    assert send_after + ALLOWANCE_S - 0.01 <= after < send_after + ALLOWANCE_S + 0.1
    # and an answer after the ask's deadline but within the allowance from the send is in time
    how, _ = asyncio.run(outcome(TurnTimer(ALLOWANCE_S), send_after, ALLOWANCE_S + 0.05))
    assert how == "answer"


def test_an_answer_disarms_the_timer() -> None:
    async def scenario() -> tuple[str, bool, bool]:
        timer = TurnTimer(0.05)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[str] = loop.create_future()
        timer.arm(future)
        handle = timer._handle
        timer.sent()
        future.set_result("answer")
        timer.disarm()
        return future.result(), handle is not None and handle.cancelled(), timer._handle is None

    assert asyncio.run(scenario()) == ("answer", True, True)


def test_give_back_extends_a_late_deadline_once() -> None:
    async def scenario() -> list[str]:
        timer = TurnTimer(0.05)
        first, _ = await outcome(timer, 0.0, None)
        assert timer.give_back()  # the first time out: the bot gets a few milliseconds more, not charged
        second, _ = await outcome(timer, None, None)
        return [first, second, str(timer.give_back())]

    assert asyncio.run(scenario()) == ["timeout", "timeout", "False"]
