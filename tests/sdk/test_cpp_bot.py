"""The C++ sample bot (sample_bots/cpp), as real processes over real gRPC.

Its strategy's unit tests (``arena-cpp-bot-test``), a whole match through the referee against the Python calling
station, the fake referee's script over a Unix-domain socket, and the clear failures: a bad token, no address.
``make install`` builds the binaries; without cmake or g++ the tests skip, except in CI, where they fail.
"""

from __future__ import annotations

import asyncio
import subprocess
import tempfile
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path

import grpc
import pytest

from arena.records import queries
from arena.records.db import Database
from arena.records.ledger import Ledger
from arena.referee import ClockPolicy, MatchSpec
from arena.runner.bots import BotSpec
from arena.runner.remote_match import prepare_match, run_local_match
from arena_sdk.pb import bot_pb2, bot_pb2_grpc, poker_pb2
from tests.sdk.fake_referee import TOKEN, FakeReferee
from tests.sdk.helpers import REPO, bot_env, require_built

CPP = REPO / "sample_bots" / "cpp"
BOT = CPP / "build" / "arena-cpp-bot"
UNIT_TESTS = CPP / "build" / "arena-cpp-bot-test"
CALLING_STATION = REPO / "sample_bots" / "python" / "calling_station.py"
HANDS = 40

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module", autouse=True)
def built() -> None:
    """The binaries must exist (see ``require_built``)."""
    require_built(BOT, UNIT_TESTS)


def test_the_strategy_unit_tests_pass() -> None:
    proc = subprocess.run([UNIT_TESTS], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "checks passed" in proc.stdout


def test_a_match_against_the_calling_station_through_the_referee(tmp_path: Path) -> None:
    db = Database(tmp_path / "arena.db")
    spec = MatchSpec("cpp", "cpp-seed", HANDS, policy=ClockPolicy(per_action_ms=2000, connect_timeout_ms=15000))
    bots = [BotSpec("cpp", str(BOT), "1.0.0"), BotSpec("calling-station", f"python {CALLING_STATION}")]
    entry = Ledger(db).open(spec, bots)
    result = entry.finish(asyncio.run(run_local_match(spec, bots, [entry], log_dir=tmp_path, cwd=REPO)))
    cpp, station = result.results
    print(
        f"\nC++ bot vs calling station: {result.hands_played} hands in {result.seconds:.2f} s "
        f"({result.hands_played / result.seconds:.0f} hands/s), C++ {cpp.mbb_per_hand:+.0f} mbb/hand, "
        f"{cpp.decisions} decisions averaging {cpp.mean_think_ms:.2f} ms, violations {cpp.violations}"
    )
    assert result.reason == "completed"
    assert result.hands_played == result.hands_total == HANDS
    assert queries.hands_recorded(db, "cpp") == HANDS
    assert sum(r.net for r in result.results) == 0
    assert cpp.decisions > 0 and station.decisions > 0
    said = {d.comment for r in queries.hand_records(db, "cpp") for d in r.decisions if r.names[d.seat] == "cpp"}
    assert "pre-flop: premium hand" in said or "pre-flop: junk" in said  # its decision comments, recorded
    for r in (cpp, station):
        assert (r.violations, r.timeouts, r.illegal, r.absent, r.forfeited) == (0, 0, 0, 0, False), r
    for lane in ("r0", "r1"):  # one process per rotation of the duplicate deals
        log = (tmp_path / f"cpp-{lane}-cpp.log").read_text()
        assert "action rejected" not in log
        assert "stream closed after match end" in log  # it saw MatchEnd and left cleanly


def test_think_ms_holds_every_answer_that_long(tmp_path: Path) -> None:
    """``--think-ms 60``: the referee waits at least 60 ms for each of its answers; the same bot without it answers
    faster (the control: its quickest answer)."""
    db = Database(tmp_path / "arena.db")
    spec = MatchSpec("think", "think-seed", 6, policy=ClockPolicy(per_action_ms=3000, connect_timeout_ms=15000))
    bots = [BotSpec("thinker", f"{BOT} --strategy call --think-ms 60"), BotSpec("quick", f"{BOT} --strategy call")]
    entry = Ledger(db).open(spec, bots)
    result = entry.finish(asyncio.run(run_local_match(spec, bots, [entry], log_dir=tmp_path, cwd=REPO)))
    assert result.reason == "completed"
    took: dict[str, list[float]] = {"thinker": [], "quick": []}
    for record in queries.hand_records(db, "think"):
        for d in record.decisions:
            took[record.names[d.seat]].append(d.elapsed_ms)
    assert took["thinker"] and min(took["thinker"]) >= 60, took
    assert took["quick"] and min(took["quick"]) < 60, took


@pytest.fixture
def unix_referee() -> Iterator[tuple[FakeReferee, str]]:
    """The fake referee's script served on a Unix-domain socket (a short path: sun_path holds 108 bytes)."""
    ref = FakeReferee()
    with tempfile.TemporaryDirectory(prefix="cpp-bot-") as folder:
        address = f"unix:{folder}/referee.sock"
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        bot_pb2_grpc.add_BotServiceServicer_to_server(ref, server)
        server.add_insecure_port(address)
        server.start()
        yield ref, address
        server.stop(grace=None)


def test_it_plays_over_a_unix_socket_echoes_ids_and_retries_after_a_rejection(
    unix_referee: tuple[FakeReferee, str],
) -> None:
    ref, address = unix_referee
    env = bot_env(ARENA_ADDRESS=address, ARENA_TOKEN="from-env-loses", ARENA_BOT_NAME="cpp-unix")
    proc = subprocess.run(
        [BOT, "--token", TOKEN], env=env, capture_output=True, text=True, timeout=30, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert ref.finished.wait(5)
    assert ref.problems == []  # every action echoed its request's ids and was legal
    join = ref.join
    assert join is not None
    assert (join.bot_name, join.bot_version, join.protocol_version, join.language) == ("cpp-unix", "1.0.0", 1, "cpp")
    first = ref.exchanges[0].actions  # AsKd facing the big blind: a raise, refused once by the script
    assert [a.kind for a in first] == [poker_pb2.ACTION_KIND_RAISE, poker_pb2.ACTION_KIND_FOLD]
    assert first[0].amount == 300
    assert all(len(e.actions) == 1 for e in ref.exchanges[1:])


def test_a_bad_token_is_a_clear_error_and_a_failure() -> None:
    async def scenario() -> tuple[int | None, str]:
        setup = await prepare_match(MatchSpec("bad", "seed", 2), ["cpp", "other"])
        try:
            proc = await asyncio.create_subprocess_exec(
                str(BOT), "--address", setup.server.address, "--token", "not-a-seat-token",
                env=bot_env(), stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
            )
            _, err = await asyncio.wait_for(proc.communicate(), 30)
            return proc.returncode, err.decode()
        finally:
            await setup.server.stop()

    code, stderr = asyncio.run(scenario())
    assert code == 1, stderr
    assert "referee error ERROR_CODE_BAD_TOKEN" in stderr and "[fatal]" in stderr
    assert "UNAUTHENTICATED" in stderr
    assert "reconnect" not in stderr  # fatal: never tried again


class CrashingReferee(bot_pb2_grpc.BotServiceServicer):
    """Welcomes the bot, then fails the call before any MatchEnd (or any request), on every stream."""

    def __init__(self) -> None:
        self.streams = 0

    def Play(
        self, request_iterator: Iterator[bot_pb2.BotMessage], context: grpc.ServicerContext
    ) -> Iterator[bot_pb2.RefereeMessage]:
        self.streams += 1
        next(request_iterator, None)
        yield bot_pb2.RefereeMessage(welcome=bot_pb2.Welcome(match_id="m1", table_id="t0", protocol_version=1))
        context.abort(grpc.StatusCode.INTERNAL, "the referee crashed")


@pytest.mark.parametrize(
    ("args", "streams", "message"),
    [
        (["--no-reconnect"], (1, 1), "the stream broke before MatchEnd (INTERNAL: the referee crashed); not joining "
         "again: reconnecting is off"),
        # joined again after 0.25, 0.75 and 1.75 s (each +-20%, the last cut to the 1.5 s bound), each broken
        # before any request: given up, not looped; when the draws add up to less than 1.5 s (from 1.4), one more
        # try at the bound itself (5 streams, once in about twenty runs)
        (["--reconnect-s", "1.5"], (3, 5), "tries to join again in 1.5 s failed (last: INTERNAL: the referee crashed)"),
    ],
    ids=["no-reconnect", "gives-up"],
)
def test_a_stream_that_breaks_before_match_end_is_a_failure(
    args: list[str], streams: tuple[int, int], message: str,
) -> None:
    referee = CrashingReferee()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    bot_pb2_grpc.add_BotServiceServicer_to_server(referee, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        proc = subprocess.run(
            [BOT, "--address", f"127.0.0.1:{port}", "--token", TOKEN, *args],
            env=bot_env(), capture_output=True, text=True, timeout=30, check=False,
        )
    finally:
        server.stop(grace=None)
    assert proc.returncode == 1, proc.stderr
    assert message in proc.stderr
    assert streams[0] <= referee.streams <= streams[1], proc.stderr


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        ([], {"ARENA_TOKEN": "t"}, "no referee address"),
        (["--address", "127.0.0.1:1"], {}, "no token"),
        (["--address", "127.0.0.1:1", "--token", "t", "--strategy", "bluff"], {}, "bad strategy 'bluff'"),
        (["--address", "127.0.0.1:1", "--token", "t"], {"ARENA_BOT_SEED": "-3"}, "bad seed '-3'"),
        (["--address", "127.0.0.1:1", "--token", "t", "--think-ms", "1.5"], {}, "bad think time '1.5'"),
        (["--address", "127.0.0.1:1", "--token", "t"], {"ARENA_BOT_THINK_MS": "600001"}, "bad think time '600001'"),
    ],
)
def test_a_missing_address_or_token_is_one_line_and_exit_2(args: list[str], env: dict[str, str], message: str) -> None:
    proc = subprocess.run([BOT, *args], env=bot_env(**env), capture_output=True, text=True, timeout=10, check=False)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and message in proc.stderr
