"""``run()`` against a fake referee: the Join, echoed ids, legal answers, retries, a buggy bot, failures."""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import grpc
import pytest

from arena_sdk import (
    COMMENT_MAX,
    Action,
    ActionKind,
    Bot,
    MatchEndReason,
    MatchResult,
    Mixed,
    Request,
    call,
    check,
    mixed,
    raise_to,
    run,
)
from arena_sdk.pb import bot_pb2, bot_pb2_grpc, poker_pb2
from tests.sdk.fake_referee import TOKEN, FakeReferee
from tests.sdk.helpers import REPO, SAMPLES

RUN_TIMEOUT_S = 30


def run_in_thread(bot: Bot, **kwargs: Any) -> MatchResult:
    """``run(bot, ...)`` in another thread (as a bot process would), with no command line."""
    kwargs.setdefault("argv", [])
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(run, bot, **kwargs).result(timeout=RUN_TIMEOUT_S)


class Station(Bot):
    """Check if free, else call; records what it saw."""

    def __init__(self) -> None:
        self.seen: list[Request] = []
        self.events: list[str] = []
        self.rejections: list[bot_pb2.ActionRejected] = []

    def act(self, request: Request) -> Action:
        self.seen.append(request)
        return check() if request.legal.can_check else call()

    def on_welcome(self, welcome: bot_pb2.Welcome) -> None:
        self.events.append("welcome")

    def on_hand_start(self, msg: bot_pb2.HandStart) -> None:
        self.events.append("hand_start")

    def on_hand_end(self, msg: bot_pb2.HandEnd) -> None:
        self.events.append("hand_end")

    def on_match_end(self, msg: bot_pb2.MatchEnd) -> None:
        self.events.append("match_end")

    def on_error(self, error: bot_pb2.Error) -> None:
        self.events.append(f"error {error.code}")

    def on_rejected(self, rejection: bot_pb2.ActionRejected, request: Request) -> Action | None:
        self.rejections.append(rejection)
        return super().on_rejected(rejection, request)


def assert_clean_exchange(referee: FakeReferee) -> None:
    """Every request was answered, every answer echoed its ids and was legal, and the rejection was retried."""
    assert referee.finished.wait(5)
    assert referee.problems == []
    assert len(referee.exchanges) == len(referee.requests)
    first = referee.exchanges[0]
    assert len(first.actions) == 2, "the rejected request is answered again"
    assert {a.request_id for a in first.actions} == {first.request.request_id}
    for exchange in referee.exchanges[1:]:
        assert len(exchange.actions) == 1


def test_run_plays_the_match_and_returns_the_result(referee: FakeReferee) -> None:
    bot = Station()
    result = run_in_thread(bot, address=referee.address, token=TOKEN, name="station", version="2.1")

    join = referee.join
    assert join is not None
    assert (join.token, join.bot_name, join.bot_version) == (TOKEN, "station", "2.1")
    assert (join.protocol_version, join.language) == (1, "python")
    assert_clean_exchange(referee)
    kinds = [a.kind for e in referee.exchanges for a in e.actions]
    # pre-flop: call 50, then (after the rejection) the safe fallback fold; flop: call 400; turn: check
    assert kinds == [
        poker_pb2.ACTION_KIND_CALL,
        poker_pb2.ACTION_KIND_FOLD,
        poker_pb2.ACTION_KIND_CALL,
        poker_pb2.ACTION_KIND_CHECK,
    ]
    assert [r.rule for r in bot.rejections] == ["R7.2"]
    assert bot.events == ["welcome", "hand_start", "hand_end", "match_end"]
    assert [r.request_id for r in bot.seen] == [1, 2, 3]

    assert result.ok and result.exit_code == 0
    assert result.reason is MatchEndReason.COMPLETED
    assert (result.match_id, result.message) == ("m1", "all hands played")
    assert [(r.name, r.net_chips) for r in result.results] == [("me", -300), ("other", 300)]
    assert result.me is not None and result.me.seat == 0


def test_on_rejected_answer_is_sent_with_the_same_request_id(referee: FakeReferee) -> None:
    class Retrier(Station):
        def act(self, request: Request) -> Action:
            if request.request_id == 1:
                return raise_to(request.legal.min_raise_to - 1)
            return super().act(request)

        def on_rejected(self, rejection: bot_pb2.ActionRejected, request: Request) -> Action | None:
            return raise_to(request.legal.min_raise_to)

    run_in_thread(Retrier(), address=referee.address, token=TOKEN)
    assert referee.finished.wait(5)
    first = referee.exchanges[0]
    assert [(a.request_id, a.kind, a.amount) for a in first.actions] == [
        (1, poker_pb2.ACTION_KIND_RAISE, 199),
        (1, poker_pb2.ACTION_KIND_RAISE, 200),
    ]
    assert len(referee.problems) == 1 and "illegal action" in referee.problems[0]  # the 199, on purpose


class Crasher(Bot):
    """A buggy bot: raises on every request, and in every hook too."""

    def act(self, request: Request) -> Action:
        raise ZeroDivisionError("oops")

    def on_welcome(self, welcome: bot_pb2.Welcome) -> None:
        raise RuntimeError("hook bug")

    def on_hand_end(self, msg: bot_pb2.HandEnd) -> None:
        raise RuntimeError("hook bug")

    def on_rejected(self, rejection: bot_pb2.ActionRejected, request: Request) -> Action | None:
        raise RuntimeError("retry bug")


class WrongType(Bot):
    """Another buggy bot: returns things that are not Actions."""

    def act(self, request: Request) -> Action:
        return "call" if request.request_id % 2 else None  # type: ignore[return-value]

    def on_rejected(self, rejection: bot_pb2.ActionRejected, request: Request) -> Action | None:
        return 42  # type: ignore[return-value]


@pytest.mark.parametrize("bot_class", [Crasher, WrongType])
def test_a_buggy_bot_still_answers_safely(
    referee: FakeReferee, bot_class: type[Bot], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="arena_sdk"):
        result = run_in_thread(bot_class(), address=referee.address, token=TOKEN)
    assert result.ok
    assert_clean_exchange(referee)
    # check if free, else fold: fold pre-flop (twice), fold on the flop, check on the turn
    kinds = [a.kind for e in referee.exchanges for a in e.actions]
    assert kinds == [poker_pb2.ACTION_KIND_FOLD] * 3 + [poker_pb2.ACTION_KIND_CHECK]
    assert len([r for r in caplog.records if r.levelno >= logging.ERROR]) >= 4


def test_an_exception_in_act_is_logged_without_one_of_the_sdk_chained_to_it(
    referee: FakeReferee, caplog: pytest.LogCaptureFixture
) -> None:
    """The traceback logged is the bot's own: ``run`` no longer plays the match inside the ``except`` that sees no
    event loop running, which chained "no running event loop" to every exception a bot's log showed."""
    with caplog.at_level(logging.ERROR, logger="arena_sdk"):
        assert run_in_thread(Crasher(), address=referee.address, token=TOKEN).ok
    assert "ZeroDivisionError: oops" in caplog.text
    assert "no running event loop" not in caplog.text and "During handling of the above exception" not in caplog.text


def test_non_fatal_error_calls_the_hook_and_play_goes_on() -> None:
    referee = FakeReferee(send_timeout_error=True)
    referee.start()
    try:
        bot = Station()
        result = run_in_thread(bot, address=referee.address, token=TOKEN)
    finally:
        referee.stop()
    assert result.ok
    assert f"error {bot_pb2.ERROR_CODE_TIMEOUT}" in bot.events
    assert_clean_exchange(referee)


def test_fatal_error_ends_the_match_with_an_error(referee: FakeReferee) -> None:
    result = run_in_thread(Station(), address=referee.address, token="wrong")
    assert not result.ok and result.exit_code == 1
    assert result.error is not None and "ERROR_CODE_BAD_TOKEN" in result.error
    assert result.reason is MatchEndReason.UNSPECIFIED


def test_unreachable_referee_gives_up_after_the_timeout() -> None:
    port = free_port()
    start = time.monotonic()
    result = run_in_thread(Station(), address=f"127.0.0.1:{port}", token=TOKEN, connect_timeout=0.5)
    assert time.monotonic() - start < 5
    assert not result.ok and result.error is not None and "cannot reach" in result.error


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_bot_waits_for_a_referee_that_starts_later() -> None:
    port = free_port()
    referee = FakeReferee()
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(run, Station(), address=f"127.0.0.1:{port}", token=TOKEN, argv=[])
        time.sleep(1.0)
        referee.start(port)
        try:
            result = future.result(timeout=RUN_TIMEOUT_S)
        finally:
            referee.stop()
    assert result.ok
    assert_clean_exchange(referee)


# --------------------------------------------------------------------------------- where settings come from


def test_settings_from_argv_then_environment(referee: FakeReferee, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_ADDRESS", "127.0.0.1:1")  # wrong: the command line wins
    monkeypatch.setenv("ARENA_TOKEN", "wrong")
    monkeypatch.setenv("ARENA_BOT_NAME", "env-name")
    argv = ["--seed", "3", "--address", referee.address, f"--token={TOKEN}"]
    result = run_in_thread(Station(), argv=argv, name="code-name")
    assert result.ok
    assert referee.join is not None and referee.join.bot_name == "env-name"


def test_settings_from_environment_and_explicit_arguments_win(
    referee: FakeReferee, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARENA_ADDRESS", referee.address)
    monkeypatch.setenv("ARENA_TOKEN", "wrong")
    result = run_in_thread(Station(), token=TOKEN, argv=["--token", "also-wrong", "--name", "cli-name"])
    assert result.ok
    assert referee.join is not None and referee.join.bot_name == "cli-name"


def test_default_name_is_the_class_name(referee: FakeReferee) -> None:
    run_in_thread(Station(), address=referee.address, token=TOKEN)
    assert referee.join is not None and referee.join.bot_name == "station"


@pytest.mark.parametrize(
    ("kwargs", "missing"),
    [({"token": TOKEN}, "ARENA_ADDRESS"), ({"address": "127.0.0.1:1"}, "ARENA_TOKEN")],
)
def test_missing_address_or_token_exits_with_status_2(
    kwargs: dict[str, str], missing: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        run(Station(), argv=[], address=kwargs.get("address"), token=kwargs.get("token"))
    assert exc.value.code == 2
    assert missing in capsys.readouterr().err


# --------------------------------------------------------------------------------- real bot processes


def bot_env(**extra: str) -> dict[str, str]:
    """The environment for a bot process: ours without ARENA_*, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env.update(extra)
    return env


def run_script(script: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(script), *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )


@pytest.mark.parametrize("script", ["calling_station", "random_bot", "equity_bot"])
def test_sample_bot_process_plays_a_match(script: str, referee: FakeReferee) -> None:
    proc = run_script(
        SAMPLES / f"{script}.py", bot_env(ARENA_ADDRESS=referee.address, ARENA_TOKEN=TOKEN, ARENA_BOT_SEED="7")
    )
    assert proc.returncode == 0, proc.stderr
    assert "match m1 over: COMPLETED" in proc.stderr
    join = referee.join
    assert join is not None and join.bot_name == script.replace("_", "-") and join.language == "python"
    assert_clean_exchange(referee)


def test_sample_bot_process_takes_arguments(referee: FakeReferee) -> None:
    proc = run_script(
        SAMPLES / "calling_station.py", bot_env(), "--address", referee.address, "--token", TOKEN, "--name", "cs-2"
    )
    assert proc.returncode == 0, proc.stderr
    assert referee.join is not None and referee.join.bot_name == "cs-2"
    assert_clean_exchange(referee)


def test_process_without_token_exits_with_status_2() -> None:
    proc = run_script(SAMPLES / "calling_station.py", bot_env(ARENA_ADDRESS="127.0.0.1:1"))
    assert proc.returncode == 2
    assert "no token" in proc.stderr and "ARENA_TOKEN" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_help_lists_every_setting_and_exits_0_without_an_address() -> None:
    proc = run_script(SAMPLES / "random_bot.py", bot_env(), "--seed", "3", "--help")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: random_bot.py [--address HOST:PORT]")
    for setting in ("--address", "ARENA_TOKEN", "ARENA_KEY", "--max-tables", "ARENA_RECONNECT_S", "ARENA_LOG_LEVEL"):
        assert setting in proc.stdout
    assert "(default: random-bot)" in proc.stdout and "max_tables, 256)" in proc.stdout


def test_process_with_a_bad_token_exits_with_status_1(referee: FakeReferee) -> None:
    proc = run_script(SAMPLES / "calling_station.py", bot_env(ARENA_ADDRESS=referee.address, ARENA_TOKEN="bad"))
    assert proc.returncode == 1
    assert "ERROR_CODE_BAD_TOKEN" in proc.stderr


def test_run_from_inside_a_running_event_loop_plays_the_match(referee: FakeReferee) -> None:
    async def notebook_cell() -> MatchResult:  # a caller whose thread already runs an event loop
        return run(Station(), address=referee.address, token=TOKEN, argv=[])

    result = asyncio.run(asyncio.wait_for(notebook_cell(), RUN_TIMEOUT_S))
    assert result.ok and result.reason is MatchEndReason.COMPLETED
    assert_clean_exchange(referee)


def test_threads_are_not_left_behind(referee: FakeReferee) -> None:
    before = threading.active_count()
    run_in_thread(Station(), address=referee.address, token=TOKEN)
    time.sleep(0.2)
    assert threading.active_count() <= before + 1


# --------------------------------------------------------------------------------- TLS


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command to make a certificate")
def test_tls_with_a_root_certificate_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost,IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    referee = FakeReferee()
    server = grpc.server(ThreadPoolExecutor(max_workers=4))
    bot_pb2_grpc.add_BotServiceServicer_to_server(referee, server)
    credentials = grpc.ssl_server_credentials([(key.read_bytes(), cert.read_bytes())])
    port = server.add_secure_port("127.0.0.1:0", credentials)
    server.start()
    try:
        monkeypatch.setenv("ARENA_TLS_CA", str(cert))
        result = run_in_thread(Station(), address=f"localhost:{port}", token=TOKEN)
        assert result.ok
        assert_clean_exchange(referee)
        monkeypatch.delenv("ARENA_TLS_CA")
        plain = run_in_thread(Station(), address=f"localhost:{port}", token=TOKEN, connect_timeout=0.5)
        assert plain.error is not None and "cannot reach" in plain.error  # plaintext does not talk to TLS
    finally:
        server.stop(grace=None)


class Commenter(Station):
    """The station, saying why: a comment on each action (a mixed one on the turn)."""

    def act(self, request: Request) -> Action | Mixed:  # type: ignore[override]
        self.seen.append(request)
        if len(self.seen) == 3:
            return mixed({check(): 1.0}, comment="free card")
        action = check() if request.legal.can_check else call()
        return action.with_comment(f"request {request.request_id}: " + "é" * 400)


def test_a_comment_goes_with_its_action_and_is_cut_to_280_characters(referee: FakeReferee) -> None:
    result = run_in_thread(Commenter(), address=referee.address, token=TOKEN)
    assert result.ok
    comments = [a.comment for e in referee.exchanges for a in e.actions]
    assert comments[0] == ("request 1: " + "é" * 400)[:COMMENT_MAX] and len(comments[0]) == 280
    assert comments[1:] == ["", ("request 2: " + "é" * 400)[:280], "free card"]  # the retry: safe_action, none
    assert call().with_comment("x") == call() and call().with_comment("x").comment == "x" and call().comment == ""
    with pytest.raises(ValueError, match="a comment is text"):
        Action(ActionKind.CALL, 0, 5)  # type: ignore[arg-type]
