"""The C++ sample bot (sample_bots/cpp) on many tables over one connection.

Through the real referee: ``arena match --tables 4`` between two ``arena-cpp-bot`` processes, with batches (the
default), without (``--no-batches``), and with one bot that takes one table at a time (``--max-tables 1``): the
match completes with no violation, each process is in several hands at once unless one of them asked for one table,
batches carry several answers in one ActionBatch, and the last line of each log is the summary a benchmark reads.
Against small scripted referees: what the Join declares (flags, environment, defaults), and a RefereeBatch with
requests on two tables answered in one ActionBatch echoing their ids, in order, with a retry after a rejection.
``make install`` builds the binary; without cmake or g++ the tests skip, except in CI, where they fail.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import pytest

from arena_sdk.pb import bot_pb2, bot_pb2_grpc, poker_pb2
from tests.sdk.fake_referee import TOKEN, is_legal
from tests.sdk.helpers import (
    REPO,
    assert_clean_match,
    bot_env,
    config_pb,
    make_request,
    most_hands_at_once,
    require_built,
)

BOT = REPO / "sample_bots" / "cpp" / "build" / "arena-cpp-bot"
TABLES = 4
HANDS = 200

pytestmark = pytest.mark.timeout(300)

WELCOME = re.compile(r"^\[cpp-bot\] joined match .*, (\d+) tables at once \(asked (\d+)\), (batches|no batches)$", re.M)
HAND_START = re.compile(r"^\[cpp-bot\] table \S+ hand (\S+) \(#\d+\) seat")
HAND_END = re.compile(r"^\[cpp-bot\] table \S+ hand (\S+) over:")
COUNTS = re.compile(r"received (\d+) messages \((\d+) inside batches\), sent (\d+) answering (\d+) requests")
SUMMARY = re.compile(r"^cpp-bot: decisions=(\d+) bot_us_per_decision=(\d+\.\d\d)$")


@pytest.fixture(scope="module", autouse=True)
def built() -> None:
    """The binaries must exist (see ``require_built``)."""
    require_built(BOT)


# ---------------------------------------------------------------------------------------------- the real referee


def play(folder: Path, bots: dict[str, str]) -> dict[str, Any]:
    """``arena match --tables 4`` between C++ bots started with the given arguments; its JSON result."""
    args = [sys.executable, "-m", "arena", "match", "--tables", str(TABLES), "--hands", str(HANDS), "--json",
            "--log-dir", str(folder), "--match-id", "cpp-tables"]
    for name, extra in bots.items():
        args += ["--bot", f"{name}={BOT} --verbose {extra}".strip()]
    proc = subprocess.run(args, cwd=REPO, env=bot_env(), capture_output=True, text=True, timeout=240, check=False)
    assert proc.returncode == 0, f"{proc.stdout}\n{proc.stderr}"
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


@pytest.mark.parametrize(
    "bots",
    [
        {"batched-a": "", "batched-b": ""},
        {"plain-a": "--no-batches", "plain-b": "--no-batches"},
        {"one-table": "--max-tables 1", "batched": ""},
    ],
    ids=["batched", "no-batches", "one-table-vs-batched"],
)
def test_a_match_on_four_tables_completes_with_no_violation(tmp_path: Path, bots: dict[str, str]) -> None:
    result = play(tmp_path, bots)
    assert_clean_match(result, HANDS)

    # Heads-up, every table seats both bots: they are in as many hands at once as the smaller max_tables allows.
    together = min(1 if "--max-tables 1" in extra else TABLES for extra in bots.values())
    for name, extra in bots.items():
        logs = sorted(tmp_path.glob(f"*-{name}.log"))  # one per seat rotation (no name ends another here)
        assert logs, f"no log of {name} in {sorted(p.name for p in tmp_path.iterdir())}"
        batched = "--no-batches" not in extra
        asked = 1 if "--max-tables 1" in extra else 64
        decisions = 0
        for path in logs:
            log = path.read_text(errors="replace")
            welcome = WELCOME.search(log)
            assert welcome is not None, log[-2000:]
            assert welcome.groups() == (str(min(asked, TABLES)), str(asked), "batches" if batched else "no batches")
            assert "action rejected" not in log and "referee error" not in log, log[-2000:]
            at_once = most_hands_at_once(log, HAND_START, HAND_END)
            assert at_once == 1 if together == 1 else at_once > 1, (path.name, at_once)

            counts = COUNTS.search(log)
            assert counts is not None, log[-2000:]
            _, inside, sent, answered = (int(n) for n in counts.groups())
            if not batched:
                assert inside == 0 and sent == answered, (path.name, counts[0])
            elif together == 1:  # one open request at a time: one action per ActionBatch
                assert inside > 0 and sent == answered, (path.name, counts[0])
            else:  # several requests ready at once, answered together
                assert inside > 0 and sent < answered, (path.name, counts[0])

            summary = SUMMARY.match(log.splitlines()[-1])
            assert summary is not None, log[-500:]
            assert int(summary[1]) == answered
            assert float(summary[2]) > 0
            decisions += answered
        assert decisions == next(r["decisions"] for r in result["results"] if r["name"] == name)


# ---------------------------------------------------------------------------------------- scripted referees


class JoinRecorder(bot_pb2_grpc.BotServiceServicer):
    """Records the Join, then refuses it (a fatal BAD_TOKEN): the bot exits 1."""

    def __init__(self) -> None:
        self.join: bot_pb2.Join | None = None

    def Play(
        self, request_iterator: Iterator[bot_pb2.BotMessage], context: grpc.ServicerContext
    ) -> Iterator[bot_pb2.RefereeMessage]:
        first = next(request_iterator, None)
        if first is not None and first.HasField("join"):
            self.join = first.join
        yield bot_pb2.RefereeMessage(error=bot_pb2.Error(code=bot_pb2.ERROR_CODE_BAD_TOKEN, message="no", fatal=True))
        context.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown token")


def serve(servicer: bot_pb2_grpc.BotServiceServicer) -> tuple[grpc.Server, str]:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    bot_pb2_grpc.add_BotServiceServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    return server, f"127.0.0.1:{port}"


@pytest.mark.parametrize(
    ("args", "env", "expected"),
    [
        ([], {}, (64, True)),
        (["--max-tables", "8", "--no-batches"], {}, (8, False)),
        ([], {"ARENA_MAX_TABLES": "3", "ARENA_BATCHES": "0"}, (3, False)),
        (["--max-tables=2"], {"ARENA_MAX_TABLES": "9", "ARENA_BATCHES": "1"}, (2, True)),
    ],
    ids=["defaults", "flags", "environment", "flags-win"],
)
def test_the_join_declares_max_tables_and_batches(
    args: list[str], env: dict[str, str], expected: tuple[int, bool]
) -> None:
    recorder = JoinRecorder()
    server, address = serve(recorder)
    try:
        proc = subprocess.run(
            [BOT, "--address", address, "--token", TOKEN, *args],
            env=bot_env(**env), capture_output=True, text=True, timeout=30, check=False,
        )
    finally:
        server.stop(grace=None)
    assert proc.returncode == 1, proc.stderr
    assert recorder.join is not None, proc.stderr
    assert (recorder.join.max_tables, recorder.join.batches) == expected
    assert SUMMARY.match(proc.stderr.splitlines()[-1]), proc.stderr  # printed whenever a session ran
    assert "cpp-bot: decisions=0 bot_us_per_decision=0.00" in proc.stderr


@pytest.mark.parametrize("value", ["0", "-3", "many", "4x"])
def test_a_bad_max_tables_is_one_line_and_exit_2(value: str) -> None:
    proc = subprocess.run(
        [BOT, "--address", "127.0.0.1:1", "--token", "t", "--max-tables", value],
        env=bot_env(), capture_output=True, text=True, timeout=10, check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "max tables" in proc.stderr


def two_table_requests(hand: int) -> list[bot_pb2.ActionRequest]:
    """One request on each of two tables; on t1, a free check on the flop with a raise allowed."""
    flop = poker_pb2.LegalActions(can_fold=True, can_check=True, can_raise=True, min_raise_to=100, max_raise_to=9300)
    return [
        make_request(table_id="t0", hand_id=f"h{hand}-t0", request_id=10 * hand + 1),
        make_request(
            table_id="t1", hand_id=f"h{hand}-t1", request_id=10 * hand + 2, hole="QhQd", board="Qs7c2d",
            stacks=(9300, 9300), bets=(0, 0), committed=(700, 700), legal=flop,
        ),
    ]


class BatchingReferee(bot_pb2_grpc.BotServiceServicer):
    """Two tables in batches: each round, one RefereeBatch with both hands' HandStart and ActionRequest, which must
    be answered by one ActionBatch; in the first round the t0 action is rejected once (in a batch of its own)."""

    ROUNDS = 3

    def __init__(self) -> None:
        self.join: bot_pb2.Join | None = None
        self.replies: list[bot_pb2.BotMessage] = []
        self.problems: list[str] = []
        self.finished = threading.Event()

    def Play(
        self, request_iterator: Iterator[bot_pb2.BotMessage], context: grpc.ServicerContext
    ) -> Iterator[bot_pb2.RefereeMessage]:
        try:
            yield from self._play(request_iterator)
        finally:
            self.finished.set()

    def _reply(self, incoming: Iterator[bot_pb2.BotMessage]) -> list[poker_pb2.Action]:
        msg = next(incoming, None)
        if msg is None or not msg.HasField("actions"):
            self.problems.append(f"expected an ActionBatch, got {msg}")
            return []
        self.replies.append(msg)
        return list(msg.actions.actions)

    def _check(self, actions: list[poker_pb2.Action], requests: list[bot_pb2.ActionRequest]) -> None:
        got = [(a.table_id, a.hand_id, a.request_id) for a in actions]
        want = [(r.table_id, r.hand_id, r.request_id) for r in requests]
        if got != want:
            self.problems.append(f"ids {got} are not {want}")
        for action, request in zip(actions, requests, strict=False):
            if not is_legal(action, request.legal):
                self.problems.append(f"illegal {action} for {request.legal}")

    def _play(self, incoming: Iterator[bot_pb2.BotMessage]) -> Iterator[bot_pb2.RefereeMessage]:
        first = next(incoming, None)
        self.join = first.join if first is not None else None
        yield bot_pb2.RefereeMessage(
            welcome=bot_pb2.Welcome(
                match_id="m1", seat=0, table_id="t0", config=config_pb(), protocol_version=1,
                hands_total=2 * self.ROUNDS, tables=2, batches=True,
                clock_policy=bot_pb2.ActionClockPolicy(per_action_ms=1000, time_bank_ms=30_000, max_retries=2),
            )
        )
        for hand in range(1, self.ROUNDS + 1):
            requests = two_table_requests(hand)
            starts = [
                bot_pb2.RefereeMessage(
                    hand_start=bot_pb2.HandStart(
                        table_id=r.table_id, hand_id=r.hand_id, hand_number=hand, seat=0, hole_cards=r.hole_cards
                    )
                )
                for r in requests
            ]
            asks = [bot_pb2.RefereeMessage(action_request=r) for r in requests]
            yield bot_pb2.RefereeMessage(batch=bot_pb2.RefereeBatch(messages=[*starts, *asks]))
            self._check(self._reply(incoming), requests)
            if hand == 1:
                r = requests[0]
                rejected = bot_pb2.ActionRejected(
                    table_id=r.table_id, hand_id=r.hand_id, request_id=r.request_id, rule="R7.2",
                    message="R7.2: rejected by the script", retries_left=1,
                )
                yield bot_pb2.RefereeMessage(
                    batch=bot_pb2.RefereeBatch(messages=[bot_pb2.RefereeMessage(action_rejected=rejected)])
                )
                self._check(self._reply(incoming), [r])
            ends = [
                bot_pb2.RefereeMessage(hand_end=bot_pb2.HandEnd(table_id=r.table_id, hand_id=r.hand_id))
                for r in requests
            ]
            yield bot_pb2.RefereeMessage(batch=bot_pb2.RefereeBatch(messages=ends))
        end = bot_pb2.MatchEnd(match_id="m1", reason=bot_pb2.MATCH_END_REASON_COMPLETED)
        yield bot_pb2.RefereeMessage(batch=bot_pb2.RefereeBatch(messages=[bot_pb2.RefereeMessage(match_end=end)]))
        extra = next(incoming, None)  # the bot should now close its side of the stream
        if extra is not None:
            self.problems.append(f"message after MatchEnd: {extra}")


def test_a_batch_of_requests_on_two_tables_is_answered_in_one_action_batch() -> None:
    ref = BatchingReferee()
    server, address = serve(ref)
    try:
        proc = subprocess.run(
            [BOT, "--address", address, "--token", TOKEN],
            env=bot_env(), capture_output=True, text=True, timeout=30, check=False,
        )
        assert ref.finished.wait(5)
    finally:
        server.stop(grace=None)
    assert proc.returncode == 0, proc.stderr
    assert ref.problems == [], ref.problems
    assert ref.join is not None and (ref.join.max_tables, ref.join.batches) == (64, True)
    sizes = [len(m.actions.actions) for m in ref.replies]
    assert sizes == [2, 1, 2, 2]  # each round's two answers together; the retry alone
    first, retry = ref.replies[0].actions.actions[0], ref.replies[1].actions.actions[0]
    assert (first.kind, first.amount) == (poker_pb2.ACTION_KIND_RAISE, 300)  # AsKd facing the big blind
    assert retry.kind == poker_pb2.ACTION_KIND_FOLD  # refused raise: fold (no check is free), as on one table
    assert ref.replies[0].actions.actions[1].kind == poker_pb2.ACTION_KIND_RAISE  # a set of queens bets
    assert "cpp-bot: decisions=6 bot_us_per_decision=" in proc.stderr.splitlines()[-1]
