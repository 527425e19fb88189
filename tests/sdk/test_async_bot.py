"""Bots whose callbacks are ``async def``: awaited on the SDK's event loop, over real gRPC (the fake referee in this
process, and a real ``arena match``); and a plain ``act`` that runs an event loop of its own inside the SDK's
(``asyncio.run``), which asyncio refuses: the bot's log says what is wrong and what to do, the decision is answered
with the safe action as for any exception in ``act``, and play goes on."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import subprocess
import sys
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, cast

import pytest

from arena_sdk import Action, Bot, Request, call, check
from arena_sdk import callbacks as sdk_callbacks
from arena_sdk import session as sdk_session
from arena_sdk.callbacks import nested_loop_advice
from arena_sdk.pb import bot_pb2, poker_pb2
from arena_sdk.session import Session
from tests.sdk.engine_match import duplicate_match
from tests.sdk.fake_referee import TOKEN, FakeReferee
from tests.sdk.helpers import REPO, assert_clean_match, bot_env
from tests.sdk.test_client import assert_clean_exchange, run_in_thread
from tests.sdk.test_read_ahead import ScriptedCall, ScriptedChannel, Station, answered, play, script

ADVICE = "act runs on the SDK's event loop, so it cannot run one of its own"


async def later(value: Any) -> Any:
    """``value``, handed over by the event loop on its next turn, as an async client's reply is: it comes only
    while the loop runs, so a bot that blocked the loop would never get it."""
    loop = asyncio.get_running_loop()
    reply = loop.create_future()
    loop.call_soon(reply.set_result, value)
    return await reply


def station(request: Request) -> Action:
    return check() if request.legal.can_check else call()


class AsyncStation(Bot):
    """The calling station with every callback ``async def``, each awaiting the loop; records what it saw."""

    def __init__(self) -> None:
        self.seen: list[int] = []
        self.events: list[str] = []
        self.rejections: list[str] = []

    async def act(self, request: Request) -> Action:
        self.seen.append(request.request_id)
        answer: Action = await later(station(request))
        return answer

    async def on_welcome(self, welcome: bot_pb2.Welcome) -> None:
        self.events.append(await later("welcome"))

    async def on_hand_start(self, msg: bot_pb2.HandStart) -> None:
        self.events.append(await later("hand_start"))

    async def on_hand_end(self, msg: bot_pb2.HandEnd) -> None:
        self.events.append(await later("hand_end"))

    async def on_match_end(self, msg: bot_pb2.MatchEnd) -> None:
        self.events.append(await later("match_end"))

    async def on_rejected(self, rejection: bot_pb2.ActionRejected, request: Request) -> Action | None:
        self.rejections.append(await later(rejection.rule))
        return call()  # not the default (fold): the awaited answer is the one sent


def test_an_async_bot_plays_with_every_callback_awaited(referee: FakeReferee) -> None:
    bot = AsyncStation()
    result = run_in_thread(bot, address=referee.address, token=TOKEN)
    assert result.ok, result.error
    assert_clean_exchange(referee)
    kinds = [a.kind for e in referee.exchanges for a in e.actions]
    # pre-flop: call, rejected once (R7.2, the fake's rule), then on_rejected's call; flop: call; turn: check
    assert kinds == [poker_pb2.ACTION_KIND_CALL] * 3 + [poker_pb2.ACTION_KIND_CHECK]
    assert bot.rejections == ["R7.2"]
    assert bot.events == ["welcome", "hand_start", "hand_end", "match_end"]
    assert bot.seen == [1, 2, 3]


def run_a_loop(request: Request) -> Action:
    """What worked while ``act`` ran on a thread of its own: an async client's call, run to its end here."""
    answer: Action = asyncio.run(later(station(request)))
    return answer


def run_until_complete_on_the_current_loop(request: Request) -> Action:
    answer: Action = asyncio.get_event_loop().run_until_complete(later(station(request)))
    return answer


def run_until_complete_on_a_new_loop(request: Request) -> Action:
    loop = asyncio.new_event_loop()
    try:
        answer: Action = loop.run_until_complete(later(station(request)))
    finally:
        loop.close()
    return answer


class LoopStarter(Bot):
    """A plain ``act`` that runs an event loop of its own (``how``), as an author with an async client might."""

    def __init__(self, how: Callable[[Request], Action]) -> None:
        self.how = how

    def act(self, request: Request) -> Action:
        return self.how(request)


WAYS = [run_a_loop, run_until_complete_on_the_current_loop, run_until_complete_on_a_new_loop]


@pytest.mark.filterwarnings("ignore:coroutine .* was never awaited:RuntimeWarning")  # asyncio refused to run it
@pytest.mark.parametrize("how", WAYS, ids=[w.__name__ for w in WAYS])
def test_a_plain_act_that_runs_a_loop_is_told_to_be_async_and_answered_safely(
    referee: FakeReferee, how: Callable[[Request], Action], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="arena_sdk"):
        result = run_in_thread(LoopStarter(how), address=referee.address, token=TOKEN)
    assert result.ok, result.error  # the bot kept its seat to the MatchEnd
    assert_clean_exchange(referee)
    kinds = [a.kind for e in referee.exchanges for a in e.actions]
    # the safe action for each of the three requests, as for any exception in act: fold, fold (the fake's
    # rejection, answered by the default on_rejected), fold facing the flop bet, check on the turn
    assert kinds == [poker_pb2.ACTION_KIND_FOLD] * 3 + [poker_pb2.ACTION_KIND_CHECK]
    told = [r.getMessage() for r in caplog.records if ADVICE in r.getMessage()]
    assert len(told) == 3, [r.getMessage() for r in caplog.records]
    assert "declare it `async def act` and await your client there" in told[0]
    assert "sending fold instead, as for any exception in act (the bot keeps its seat)" in told[0]
    assert "sending check instead" in told[2]


@pytest.mark.filterwarnings("ignore:coroutine .* was never awaited:RuntimeWarning")
def test_without_the_advice_asyncio_says_only_what_failed(
    referee: FakeReferee, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control: what the bot's log says with the advice switched off (asyncio's bare RuntimeError)."""
    monkeypatch.setattr(sdk_callbacks, "nested_loop_advice", lambda name, error: None)
    with caplog.at_level(logging.ERROR, logger="arena_sdk"):
        result = run_in_thread(LoopStarter(run_a_loop), address=referee.address, token=TOKEN)
    assert result.ok
    text = caplog.text
    assert text.count("asyncio.run() cannot be called from a running event loop") == 3
    assert ADVICE not in text and "async def" not in text


def test_a_plain_bot_is_not_told_about_event_loops(referee: FakeReferee, caplog: pytest.LogCaptureFixture) -> None:
    """The control: the calling station, plain, logs nothing of the kind (and no error at all)."""

    class Plain(Bot):
        def act(self, request: Request) -> Action:
            return station(request)

    with caplog.at_level(logging.INFO, logger="arena_sdk"):
        assert run_in_thread(Plain(), address=referee.address, token=TOKEN).ok
    assert "event loop" not in caplog.text and "async def" not in caplog.text
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


@pytest.mark.filterwarnings("ignore:coroutine .* was never awaited:RuntimeWarning")
def test_asyncio_refusals_get_the_advice_and_other_errors_do_not() -> None:
    """Each way of running a loop inside the SDK's, refused by asyncio itself (on a running loop, as ``act``
    is called), is recognised by its message; another RuntimeError or a non-RuntimeError is not."""

    async def refusals() -> list[BaseException]:
        caught = []
        for how in WAYS:
            try:
                how(Request(bot_pb2.ActionRequest(legal=poker_pb2.LegalActions(can_check=True))))
            except RuntimeError as error:
                caught.append(error.with_traceback(None))  # the refused coroutine goes now, inside this test
        return caught

    caught = asyncio.run(refusals())
    assert len(caught) == 3
    for error in caught:
        advice = nested_loop_advice("act", error)
        assert advice is not None and advice.endswith("declare it `async def act` and await your client there")
    assert "declare it `async def on_hand_end`" in str(nested_loop_advice("on_hand_end", caught[0]))
    assert nested_loop_advice("act", RuntimeError("dictionary changed size during iteration")) is None
    assert nested_loop_advice("act", ValueError("This event loop is already running")) is None
    assert nested_loop_advice("act", None) is None


class CoroutineReturner(Bot):
    """A plain ``act`` (no callback declared async) that returns a coroutine: nothing awaits it."""

    def act(self, request: Request) -> Any:
        return later(station(request))


def test_a_plain_act_that_returns_a_coroutine_is_told_to_declare_it_async(
    referee: FakeReferee, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="arena_sdk"):
        assert run_in_thread(CoroutineReturner(), address=referee.address, token=TOKEN).ok
    told = [r.getMessage() for r in caplog.records if "an awaitable" in r.getMessage()]
    assert len(told) == 3
    assert "no callback of the bot is declared async def, so nothing awaits it: declare it `async def act`" in told[0]
    assert "sending fold" in told[0]


async def cancelled() -> None:
    """What an async client's call that was cancelled under the bot raises: CancelledError."""
    reply = asyncio.get_running_loop().create_future()
    reply.cancel()
    await reply


class CancelledUnder(Bot):
    """``act`` and a hook whose awaits are cancelled: the bot's bug, not the SDK's task being stopped."""

    async def act(self, request: Request) -> Action:
        await cancelled()
        return station(request)

    async def on_hand_end(self, msg: bot_pb2.HandEnd) -> None:
        await cancelled()


def test_a_cancelled_await_in_the_bot_is_answered_as_an_exception(
    referee: FakeReferee, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="arena_sdk"):
        result = run_in_thread(CancelledUnder(), address=referee.address, token=TOKEN)
    assert result.ok, result.error
    assert_clean_exchange(referee)
    assert [a.kind for e in referee.exchanges for a in e.actions] == [poker_pb2.ACTION_KIND_FOLD] * 3 + [
        poker_pb2.ACTION_KIND_CHECK]
    assert caplog.text.count("CancelledUnder.act raised on request") == 3
    assert "CancelledUnder.on_hand_end raised; carrying on" in caplog.text


def test_a_cancelled_await_ends_the_run_when_taken_for_the_sdk_being_stopped(
    referee: FakeReferee, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control: read as the SDK's own task being stopped, the bot's CancelledError ends ``run`` at once."""
    monkeypatch.setattr(sdk_callbacks, "_stopping", lambda: True)
    with pytest.raises(asyncio.CancelledError):
        run_in_thread(CancelledUnder(), address=referee.address, token=TOKEN)


def test_stopping_the_sdk_while_the_bot_awaits_stops_it() -> None:
    """A CancelledError of the SDK's own task (the program ending) is not taken for the bot's: play stops."""

    class StuckOnce(Bot):
        def __init__(self) -> None:
            self.stuck = False

        async def act(self, request: Request) -> Action:
            if not self.stuck:  # the first request waits until the SDK is stopped; the others are answered at once
                self.stuck = True
                await asyncio.Event().wait()
            return station(request)

    async def stop_it() -> ScriptedCall:
        scripted = ScriptedCall(script())
        task = asyncio.ensure_future(Session(StuckOnce(), bot_pb2.Join(token="t")).play(ScriptedChannel(scripted)))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 5)
        return scripted

    scripted = asyncio.run(stop_it())
    assert [m.WhichOneof("msg") for m in scripted.written] == ["join"]  # no safe answer sent after the stop


# --------------------------------------------------------------------------------- read ahead, batches, in-process


class AsyncBatcher(Bot):
    """``async def act_batch``: the requests of a batch awaited together (``asyncio.gather``); ``act`` answers a
    request that comes alone, as for a plain bot that batches."""

    def __init__(self) -> None:
        self.calls: list[int] = []
        self.alone: list[int] = []

    async def act(self, request: Request) -> Action:
        self.alone.append(request.request_id)
        answer: Action = await later(station(request))
        return answer

    async def act_batch(self, requests: Sequence[Request]) -> list[Action]:
        self.calls.append(len(requests))
        return list(await asyncio.gather(*(later(station(r)) for r in requests)))


def test_an_async_bot_is_read_ahead_like_a_plain_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """test_read_ahead's script: the answers to the four requests already there go back in one write, in order,
    from ``async def act`` one by one and from ``async def act_batch``."""
    monkeypatch.setattr(sdk_session, "_MERGE_S", 5.0)
    written = play(AsyncStation())
    assert answered(written) == [["t1", "t2", "t3", "t4"]]
    assert [(a.request_id, a.kind) for a in written[0].actions.actions] == [(i, poker_pb2.ACTION_KIND_CALL)
                                                                           for i in (1, 2, 3, 4)]
    batcher = AsyncBatcher()
    written = play(batcher)
    assert answered(written) == [["t1", "t2", "t3", "t4"]]
    assert (batcher.alone, batcher.calls) == ([1, 2], [2])  # two requests alone, then the batch of two in one call
    assert {a.kind for a in written[0].actions.actions} == {poker_pb2.ACTION_KIND_CALL}


def handled(bot: Bot) -> list[str]:
    """How the one dispatch (``Session.handle``) handled each message of test_read_ahead's script, on a running
    loop: "done" (nothing left to await), "in one step" (what was left finished without suspending) or
    "suspended" (it awaited the bot)."""

    async def drive() -> list[str]:
        session = Session(bot, bot_pb2.Join(token="t"))
        how = []
        for message in script():
            later = session.handle(message)
            if later is None:
                how.append("done")
                continue
            steps = cast("Coroutine[Any, Any, None]", later)
            try:
                steps.send(None)
            except StopIteration:
                how.append("in one step")
            else:
                steps.close()
                how.append("suspended")
        return how

    return asyncio.run(drive())


def test_a_plain_bot_goes_through_the_dispatch_without_a_coroutine_or_a_suspension() -> None:
    """One dispatch serves both kinds of bot: a plain bot's single messages are handled at once (no coroutine made:
    the hot path), its batch and MatchEnd in one step, so that nothing else runs on the loop between its call and
    its answer; the control, an async bot's messages all suspend at its awaits."""
    assert handled(Station()) == ["done"] * 3 + ["in one step"] * 2
    assert handled(AsyncStation()) == ["suspended"] * 5


def test_the_default_act_batch_awaits_an_async_act() -> None:
    requests = [Request(bot_pb2.ActionRequest(request_id=i, legal=poker_pb2.LegalActions(can_check=True)))
                for i in (1, 2)]
    bot = AsyncStation()
    answers = Bot.act_batch(bot, requests)
    assert isinstance(answers, Coroutine)
    assert asyncio.run(answers) == [check(), check()]
    assert bot.seen == [1, 2]


def test_the_in_process_seat_awaits_an_async_act() -> None:
    """``arena.runner.inprocess``, which the engine tests and benches play SDK bots with, awaits it too."""

    class Station(Bot):
        def act(self, request: Request) -> Action:
            return station(request)

    hero = AsyncStation()
    duplicate_match(hero, Station(), deals=10, seed=4)  # fails the match on any illegal action
    assert len(hero.seen) >= 20


def readme_async_bot() -> str:
    """The async bot of the SDK's README, as written there."""
    text = (REPO / "proto" / "python" / "README.md").read_text()
    found = re.search(r"## An async bot\n.*?```python\n(.*?)```", text, re.S)
    assert found is not None
    return found.group(1)


def test_the_readmes_async_bot_plays_a_match(tmp_path: Path, referee: FakeReferee) -> None:
    script = tmp_path / "async_bot.py"
    script.write_text(readme_async_bot())
    proc = subprocess.run([sys.executable, str(script)], cwd=REPO, capture_output=True, text=True, timeout=30,
                          check=False, env=bot_env(ARENA_ADDRESS=referee.address, ARENA_TOKEN=TOKEN))
    assert proc.returncode == 0, proc.stderr
    assert referee.finished.wait(5) and referee.problems == []
    assert referee.join is not None and referee.join.bot_name == "async-bot"
    assert referee.exchanges[0].actions[0].kind == poker_pb2.ACTION_KIND_FOLD  # AsKd is no pair: fold to the bet
    assert " ERROR " not in proc.stderr


# --------------------------------------------------------------------------------- a real `arena match`

HANDS = 40
SCRIPT = '''
import asyncio, json, sys
from arena_sdk import Bot, call, check, run


async def later(value):
    loop = asyncio.get_running_loop()
    reply = loop.create_future()
    loop.call_soon(reply.set_result, value)
    return await reply


def station(request):
    return check() if request.legal.can_check else call()


class AsyncActor(Bot):
    max_tables = 4
    def __init__(self):
        self.acted = self.hands = 0
    async def on_hand_start(self, msg):
        self.hands += await later(1)
    async def act(self, request):
        self.acted += 1
        return await later(station(request))
    async def on_match_end(self, msg):
        print("COUNTS", json.dumps({"acted": await later(self.acted), "hands": self.hands}), flush=True)


class AsyncBatcher(AsyncActor):
    async def act_batch(self, requests):
        self.acted += len(requests)
        return await asyncio.gather(*(later(station(r)) for r in requests))


class LoopStarter(Bot):
    max_tables = 4
    def act(self, request):
        return asyncio.run(later(station(request)))


class Plain(Bot):
    max_tables = 4
    def act(self, request):
        return station(request)


raise SystemExit(run({"AsyncActor": AsyncActor, "AsyncBatcher": AsyncBatcher, "LoopStarter": LoopStarter,
                      "Plain": Plain}[sys.argv[1]]()).exit_code)
'''


def arena_match(tmp_path: Path, a: str, b: str) -> tuple[dict[str, Any], dict[str, str]]:
    """A match of ``--tables 4`` between the script's bots ``a`` and ``b`` (class name and arguments); the JSON
    report and each bot's log (its processes' stdout and stderr, both rotations)."""
    folder = tmp_path / "bot"
    folder.mkdir(mode=0o755)
    script = folder / "bot.py"
    script.write_text(SCRIPT)
    script.chmod(0o644)
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "match", "--tables", "4", "--hands", str(HANDS), "--json", "--log-dir",
         str(tmp_path), "--match-id", "async", "--bot", f"a={sys.executable} {script} {a}",
         "--bot", f"b={sys.executable} {script} {b}"],
        capture_output=True, text=True, timeout=120, check=False, cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    logs = {name: "".join(p.read_text() for p in sorted(tmp_path.glob(f"*-{name}.log"))) for name in ("a", "b")}
    return json.loads(proc.stdout), logs


@pytest.mark.timeout(150)
def test_async_bots_play_a_whole_arena_match(tmp_path: Path) -> None:
    """``async def act`` one request at a time (``--max-tables 1``: no batches) against ``async def act_batch`` at
    four tables, each awaiting the loop for every answer."""
    report, logs = arena_match(tmp_path, "AsyncActor --max-tables 1", "AsyncBatcher")
    assert_clean_match(report, HANDS)
    for name, result in zip("ab", report["results"], strict=True):
        counts = [json.loads(line.split(" ", 1)[1]) for line in logs[name].splitlines() if line.startswith("COUNTS ")]
        assert len(counts) == 2, logs[name]  # one process per rotation, each to its MatchEnd
        assert sum(c["acted"] for c in counts) == result["decisions"]
        assert sum(c["hands"] for c in counts) == HANDS  # heads-up: the bot is in every hand of both rotations
        assert " ERROR " not in logs[name] and "Traceback" not in logs[name], logs[name]


@pytest.mark.timeout(150)
def test_a_plain_act_that_calls_asyncio_run_is_told_in_its_log_and_the_match_goes_on(tmp_path: Path) -> None:
    report, logs = arena_match(tmp_path, "LoopStarter", "Plain")
    assert_clean_match(report, HANDS)  # every hand played, the safe actions legal, nobody timed out
    starter = report["results"][0]
    told = [line for line in logs["a"].splitlines() if ADVICE in line]
    assert len(told) == starter["decisions"], logs["a"][-2000:]  # every decision, each answered
    assert "declare it `async def act` and await your client there" in told[0]
    assert "as for any exception in act (the bot keeps its seat)" in told[0]
    assert "event loop" not in logs["b"] and " ERROR " not in logs["b"]  # the control: a plain bot
