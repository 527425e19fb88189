"""``arena mcp``, end to end: an MCP client from the official ``mcp`` package starts ``arena mcp`` over stdio against a
real ``arena serve``, lists the tools and plays a whole match, with comments, against the sample calling station
(in-process, recording every message the referee sends it); then the match has no violation, ``arena export``'s PHH
has every comment, and no message the opponent received has any. Beside it, the reading of actions and refusals."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from mcp import ClientSession, StdioServerParameters, stdio_client

from arena.adapters.mcp.actions import Refusal, choose, read
from arena.adapters.mcp.seat import AgentSeat
from arena.cli import main
from arena.records.phh import load
from arena_sdk import COMMENT_MAX, ActionKind, MatchResult, Request, run
from arena_sdk.pb import bot_pb2, poker_pb2
from tests.sdk.helpers import load_sample, make_request

pytestmark = pytest.mark.timeout(180)
HANDS = 6
ARENA = [sys.executable, "-m", "arena"]
CallingStation = load_sample("calling_station").CallingStation


class RecordingStation(CallingStation):  # type: ignore[misc,valid-type]
    """The sample calling station, keeping every message the referee sends it (each hook is one kind of message)."""

    def __init__(self) -> None:
        self.received: list[bytes] = []

    def act(self, request: Request):  # type: ignore[no-untyped-def]
        self.received.append(request.pb.SerializeToString())
        return super().act(request)

    def on_welcome(self, msg: bot_pb2.Welcome) -> None:
        self.received.append(msg.SerializeToString())

    def on_hand_start(self, msg: bot_pb2.HandStart) -> None:
        self.received.append(msg.SerializeToString())

    def on_hand_end(self, msg: bot_pb2.HandEnd) -> None:
        self.received.append(msg.SerializeToString())

    def on_match_end(self, msg: bot_pb2.MatchEnd) -> None:
        self.received.append(msg.SerializeToString())

    def on_error(self, msg: bot_pb2.Error) -> None:
        self.received.append(msg.SerializeToString())


def start_serve(db: Path) -> tuple[subprocess.Popen[str], str, dict[str, str]]:
    """``arena serve`` for the agent and the station, with a clock for an agent; its address and tokens."""
    serve = subprocess.Popen(
        [*ARENA, "serve", "--bot", "agent", "--bot", "station", "--port", "0", "--hands", str(HANDS), "--db", str(db),
         "--match-id", "llm", "--per-action-ms", "20000", "--time-bank-ms", "60000", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert serve.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + 60
    while len([line for line in lines if "ARENA_TOKEN=" in line]) < 2 and time.monotonic() < deadline:
        lines.append(serve.stdout.readline())
    found = re.findall(r"(\w+): ARENA_ADDRESS=(\S+) ARENA_TOKEN=(\S+)", "".join(lines))
    assert len(found) == 2, lines
    return serve, found[0][1], {name: token for name, _, token in found}


def text_of(result: Any) -> dict[str, Any]:
    """A tool's JSON answer."""
    assert not result.is_error, result
    data: dict[str, Any] = json.loads(result.content[0].text)
    return data


async def agent(address: str, token: str, log: list[dict[str, Any]]) -> tuple[list[str], dict[str, Any]]:
    """A scripted agent: observe; on its turn first a refused action (once), then a legal one in soft words, each
    with a comment. The tools it found and the last table."""
    params = StdioServerParameters(command=ARENA[0], args=[*ARENA[1:], "mcp", "--address", address, "--token", token])
    turns = 0
    async with stdio_client(params) as (read_stream, write_stream), ClientSession(read_stream, write_stream) as session:
        await session.initialize()
        tools = sorted(tool.name for tool in (await session.list_tools()).tools)
        while True:
            table = text_of(await session.call_tool("observe", {"timeout_s": 30}))
            if table["match_over"]:
                return tools, table
            if not table["your_turn"]:
                continue
            turns += 1
            legal = table["legal_actions"]
            if turns == 1:  # a wrong action first: refused with the rule and the legal actions, nothing sent
                wrong = "check" if table["to_call"] else "fold"
                refused = text_of(await session.call_tool("act", {"action": wrong, "comment": "oops"}))
                log.append(refused)
            if turns % 3 == 0 and table["min_raise_to"]:
                words = {"action": f"Raise to {table['min_raise_to']}"}
            elif turns % 5 == 0:
                words = {"action": "all in"}
            else:
                words = {"action": "CALL" if table["to_call"] else "check"}
            answer = text_of(await session.call_tool("act", {**words, "comment": f"agent-note-{turns} # {legal[0]}"}))
            log.append(answer)
            assert answer["accepted"], (answer, table)


def test_an_mcp_client_plays_a_whole_match_through_arena_mcp(tmp_path: Path) -> None:
    db = tmp_path / "llm.db"
    serve, address, tokens = start_serve(db)
    station = RecordingStation()
    results: list[MatchResult] = []
    thread = threading.Thread(target=lambda: results.append(run(station, argv=[], address=address,
                                                                 token=tokens["station"])))
    thread.start()
    log: list[dict[str, Any]] = []
    try:
        tools, final = asyncio.run(agent(address, tokens["agent"], log))
        out, err = serve.communicate(timeout=60)
    finally:
        serve.kill()
        thread.join(30)
    assert serve.returncode == 0, err
    assert tools == ["act", "observe"]
    report = json.loads(out)
    assert report["hands"] == {"played": HANDS, "total": HANDS}
    assert all(r["violations"] == 0 for r in report["results"]), report["results"]
    assert final["match_over"] and final["result"]["reason"] == "completed"
    assert [r["violations"] for r in final["result"]["results"]] == [0, 0]
    refusal = log[0]
    assert not refusal["accepted"] and refusal["rule"] == "R6.1" and refusal["legal_actions"]
    played = [entry for entry in log[1:] if entry.get("accepted")]
    assert len(played) >= HANDS and all(entry["comment"].startswith("agent-note-") for entry in played)
    # Every comment is in the PHH export, on its action's line
    export = CliRunner().invoke(main, ["export", "--db", str(db), "--phh", str(tmp_path / "phh")])
    assert export.exit_code == 0, export.output
    lines = [line for path in sorted((tmp_path / "phh").rglob("*.phh")) for line in load(path).actions]
    written = [line.split(" # ", 1)[1] for line in lines if " # agent-note-" in line]
    assert sorted(written) == sorted(entry["comment"] for entry in played)
    # ... and in no message the opponent received, while the search finds one wherever it is
    assert results and results[0].ok and len(station.received) > 3 * HANDS
    assert not any(b"agent-note" in message for message in station.received)
    assert b"agent-note" in played[0]["comment"].encode()


def test_soft_words_are_read_and_illegal_actions_refused_with_their_rule() -> None:
    facing = Request(make_request())  # AsKd on the button, 50 to call, raise to 200..10000
    assert str(choose(facing, "Raise to 600")) == "raise to 600"
    assert str(choose(facing, "bet", 1_200)) == "raise to 1200"
    assert choose(facing, "ALL IN").kind is ActionKind.ALL_IN  # type: ignore[union-attr]
    assert choose(facing, "call", comment="odds").comment == "odds"  # type: ignore[union-attr]
    cases = {("check", None): "R6.1", ("raise", None): "R6.2", ("raise to 150", None): "R7.2",
             ("raise", 20_000): "R7.1", ("dance", None): "R6.1"}
    for (words, amount), rule in cases.items():
        refused = choose(facing, words, amount)
        assert isinstance(refused, Refusal) and refused.rule == rule, (words, refused)
        assert refused.legal_actions == ("fold", "call 50", "raise to 200..10000", "all-in")
    free = Request(make_request(bets=(100, 100), legal=poker_pb2.LegalActions(
        can_check=True, can_raise=True, min_raise_to=200, max_raise_to=10_000)))
    assert isinstance(choose(free, "fold"), Refusal) and isinstance(choose(free, "call"), Refusal)
    assert read("raise to 600", 700) == "two different amounts: 600 in the action and 700 in amount"


def test_the_seat_waits_for_the_agent_within_the_clock_and_leaves_a_silent_one_to_the_referee() -> None:
    seat = AgentSeat()
    table, seen = seat.observe(0.05, 0)  # nothing yet: the wait times out
    assert not table["your_turn"] and not table["match_over"]
    assert seat.submit("call", None, "") == {"accepted": False, "match_over": False,
                                             "reason": "it is not your turn: call observe to wait for it"}
    request = Request(make_request())
    answers: list[object] = []
    worker = threading.Thread(target=lambda: answers.append(seat.act(request)))
    worker.start()
    table, seen = seat.observe(10, seen)  # returns as soon as the request is open
    assert table["your_turn"] and table["legal_actions"] == ["fold", "call 50", "raise to 200..10000", "all-in"]
    assert table["hole_cards"] == ["As", "Kd"] and table["position"] == "BTN/SB" and table["to_call"] == 50
    assert seat.submit("raise to 300", None, "value") == {"accepted": True, "played": "raise to 300",
                                                          "comment": "value"}
    worker.join(5)
    assert [str(a) for a in answers] == ["raise to 300"] and answers[0].comment == "value"  # type: ignore[attr-defined]
    pb = make_request(request_id=2)
    pb.clock.action_ms_left, pb.clock.bank_ms_left = 200, 0
    silent = Request(pb)
    started = time.monotonic()
    late = seat.act(silent)  # nobody acts: past the whole clock the referee has acted; the SDK gets the safe action
    assert late.kind is ActionKind.FOLD and 1.2 <= time.monotonic() - started < 5
    assert "no action within the clock" in seat.table()["notes"][-1]
    seat.stop("referee error ERROR_CODE_BAD_TOKEN: unknown token")  # the SDK gave up: act says what observe says
    assert seat.table()["match_over"] and seat.submit("call", None, "") == {
        "accepted": False, "match_over": True, "error": "referee error ERROR_CODE_BAD_TOKEN: unknown token",
        "reason": "the match is over: referee error ERROR_CODE_BAD_TOKEN: unknown token"}


def test_a_comment_longer_than_the_referee_keeps_is_cut_and_the_reply_says_so() -> None:
    seat = AgentSeat()
    answers: list[object] = []
    worker = threading.Thread(target=lambda: answers.append(seat.act(Request(make_request()))))
    worker.start()
    seat.observe(10, 0)
    reply = seat.submit("call", None, "why " * 100)
    worker.join(5)
    assert reply["accepted"] and len(reply["comment"]) == COMMENT_MAX
    assert reply["note"] == f"the comment was cut to {COMMENT_MAX} characters, as the referee keeps no more"


def test_arena_mcp_takes_exactly_one_of_a_token_and_a_key() -> None:
    for args in ([], ["--token", "t", "--key", "k"]):
        result = CliRunner().invoke(main, ["mcp", "--address", "127.0.0.1:1", *args], env={"ARENA_TOKEN": None,
                                                                                           "ARENA_KEY": None})
        assert result.exit_code == 2 and "exactly one of --token" in result.output, result.output
