"""``run()`` after a broken stream, against the fake referee over real gRPC: it joins again with the same Join and
plays on (exit status 0); it tries for a bounded time only; a fatal Error (a bad token) is never retried; the
setting that switches it off. The real thing (a bot process stopped longer than the referee's keepalive, in the
sandbox) is tests/integrity/test_reconnect.py."""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor

import grpc
import pytest

from arena_sdk import run
from arena_sdk.reconnect import Reconnect, worth_a_new_stream
from tests.sdk.fake_referee import TOKEN, FakeReferee
from tests.sdk.helpers import SAMPLES
from tests.sdk.test_client import (
    RUN_TIMEOUT_S,
    Station,
    assert_clean_exchange,
    bot_env,
    run_in_thread,
    run_script,
)


def test_a_broken_stream_is_joined_again_with_the_same_join_and_the_match_plays_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    referee = FakeReferee(breaks=2)
    referee.start()
    try:
        bot = Station()
        with caplog.at_level(logging.INFO, logger="arena_sdk"):
            result = run_in_thread(bot, address=referee.address, token=TOKEN, max_tables=3, version="2.1")
    finally:
        referee.stop()
    assert result.ok and result.exit_code == 0 and result.reconnects == 2, result
    assert referee.streams == 3
    first, *again = referee.joins
    assert first.token == TOKEN and first.max_tables == 3 and first.batches and first.bot_version == "2.1"
    assert again == [first, first]  # token, name, version, tables and batches: the very same Join
    assert_clean_exchange(referee)  # the last stream's requests were all answered, as on any stream
    assert bot.events.count("welcome") == 3  # on_welcome hears every Welcome
    lines = [r.getMessage() for r in caplog.records]
    assert sum("the stream broke before MatchEnd (UNAVAILABLE: keepalive watchdog timeout)" in line
               for line in lines) == 2, lines
    assert sum(line.startswith("reconnected: rejoined match m1 as 'station'") for line in lines) == 2, lines


def test_reconnect_switched_off_leaves_at_the_first_break(monkeypatch: pytest.MonkeyPatch) -> None:
    """The control: the same broken stream, and the bot leaves with exit status 1 (what every bot did before), whether
    it is switched off by the environment, the command line or the code."""
    referee = FakeReferee(breaks=3)
    referee.start()
    try:
        monkeypatch.setenv("ARENA_RECONNECT", "0")
        by_env = run_in_thread(Station(), address=referee.address, token=TOKEN)
        monkeypatch.delenv("ARENA_RECONNECT")
        by_argv = run_in_thread(Station(), address=referee.address, token=TOKEN, argv=["--no-reconnect"])
        by_code = run_in_thread(Station(), address=referee.address, token=TOKEN, reconnect=False)
    finally:
        referee.stop()
    for result in (by_env, by_argv, by_code):
        assert result.exit_code == 1 and result.reconnects == 0
        assert result.error == ("the stream broke before MatchEnd: UNAVAILABLE: keepalive watchdog timeout; not "
                                "joining again: reconnecting is off (--no-reconnect, ARENA_RECONNECT=0 or "
                                "reconnect=False)")
    assert referee.streams == 3  # one each


def test_tries_stop_reconnect_s_after_the_break_when_the_referee_is_gone() -> None:
    referee = FakeReferee(breaks=1)
    referee.start()
    start = time.monotonic()
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(run, Station(), address=referee.address, token=TOKEN, reconnect_s=1.5, argv=[])
        while referee.breaks and time.monotonic() - start < RUN_TIMEOUT_S:
            time.sleep(0.005)
        referee.stop()  # the first stream breaks (by its script, or by the stop): then nobody listens
        result = future.result(timeout=RUN_TIMEOUT_S)
    took = time.monotonic() - start
    assert result.exit_code == 1 and result.error is not None, result
    assert result.error.startswith("the stream broke before MatchEnd and "), result.error
    assert "tries to join again in 1.5 s failed (last: UNAVAILABLE: " in result.error
    assert referee.streams == 1
    assert 1.5 <= took < 10, took  # it tried for 1.5 s, then gave up


def test_a_referee_that_welcomes_and_fails_every_stream_is_not_tried_forever() -> None:
    """A rejoin counts (and the tries start afresh) only once the bot is asked to act on the new stream."""
    referee = FakeReferee(breaks=1000, ask_before_break=False)
    referee.start()
    try:
        result = run_in_thread(Station(), address=referee.address, token=TOKEN, reconnect_s=1.5)
    finally:
        referee.stop()
    assert result.exit_code == 1 and result.reconnects == 0, result
    assert result.error is not None
    assert result.error.endswith("tries to join again in 1.5 s failed (last: UNAVAILABLE: keepalive watchdog timeout)")
    # the first, then tries after about 0.25, 0.75 and 1.5 s; with the waits' jitter (0.8x to 1.2x) the third can
    # come at 1.4 s and one more at the window's end: never more than five
    assert 3 <= referee.streams <= 5, referee.streams


def test_a_bad_token_is_fatal_at_once_and_never_retried() -> None:
    referee = FakeReferee()
    referee.start()
    try:
        proc = run_script(SAMPLES / "calling_station.py", bot_env(ARENA_ADDRESS=referee.address, ARENA_TOKEN="bad"))
    finally:
        referee.stop()
    assert proc.returncode == 1, proc.stderr
    assert "referee error ERROR_CODE_BAD_TOKEN: unknown token" in proc.stderr
    assert "reconnect" not in proc.stderr
    assert referee.streams == 1


@pytest.mark.parametrize(
    ("code", "retried"),
    [
        (grpc.StatusCode.UNAVAILABLE, True),  # keepalive, a cut, a restart
        (grpc.StatusCode.CANCELLED, True),
        (grpc.StatusCode.INTERNAL, True),
        (grpc.StatusCode.RESOURCE_EXHAUSTED, True),  # a rate limit: the referee says to join again
        (grpc.StatusCode.UNAUTHENTICATED, False),  # a bad token
        (grpc.StatusCode.ALREADY_EXISTS, False),  # a newer stream with the token plays
        (grpc.StatusCode.FAILED_PRECONDITION, False),  # a protocol version the referee does not speak
        (grpc.StatusCode.INVALID_ARGUMENT, False),
        (grpc.StatusCode.OK, False),  # the referee ended the stream on purpose
    ],
)
def test_which_ends_are_worth_a_new_stream(code: grpc.StatusCode, retried: bool) -> None:
    assert worth_a_new_stream(code) is retried


def test_the_waits_double_up_to_the_most() -> None:
    waits = [w for _, w in zip(range(8), Reconnect().waits(), strict=False)]
    middles = [0.25, 0.5, 1, 2, 4, 5, 5, 5]
    assert all(0.8 * m <= w <= 1.2 * m for w, m in zip(waits, middles, strict=True)), waits
    with pytest.raises(ValueError, match="first"):
        Reconnect(first_s=0)
    with pytest.raises(ValueError, match="switch it off"):
        Reconnect(for_s=0)


@pytest.mark.parametrize(
    ("env", "message"),
    [({"ARENA_RECONNECT": "maybe"}, "ARENA_RECONNECT 'maybe'"), ({"ARENA_RECONNECT_S": "0"}, "ARENA_RECONNECT_S"),
     ({"ARENA_RECONNECT_S": "soon"}, "ARENA_RECONNECT_S")],
)
def test_bad_reconnect_settings_exit_with_status_2(env: dict[str, str], message: str) -> None:
    proc = run_script(SAMPLES / "calling_station.py", bot_env(ARENA_ADDRESS="127.0.0.1:1", ARENA_TOKEN="t", **env))
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr
