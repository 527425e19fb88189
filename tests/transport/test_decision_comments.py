"""Decision comments are never forwarded to another bot (a comment channel between bots would be a collusion channel):
over real gRPC, both bots of a match comment on every action, and every message either bot receives (welcome,
hand starts, requests, rejections, hand ends, the match end), nor the spectators' record of a hand, carries a
comment; the records keep every one."""

from __future__ import annotations

import asyncio

import pytest

from arena.referee import ClockPolicy, HandRecord, MatchResult, MatchSpec
from arena.runner.remote_match import play, prepare_match
from arena.transport import wire
from arena_sdk.pb import bot_pb2, poker_pb2
from tests.transport.raw_bot import RawBot, passive, raiser

pytestmark = pytest.mark.timeout(120)


def marker(bot: int, request_id: int) -> str:
    return f"cmt{bot}q{request_id}z"


def commenting(bot: int, act):  # type: ignore[no-untyped-def]
    """``act`` with a comment on every action that names the bot and the request (findable in any bytes)."""
    def answer(request: bot_pb2.ActionRequest) -> poker_pb2.Action:
        action: poker_pb2.Action = act(request)
        action.comment = marker(bot, request.request_id)
        return action
    return answer


def run(hands: int) -> tuple[MatchResult, list[RawBot], list[HandRecord]]:
    records: list[HandRecord] = []
    spec = MatchSpec("cm", "comments-wire", hands, policy=ClockPolicy(per_action_ms=2000, max_violations=0), tables=2)

    async def main() -> tuple[MatchResult, list[RawBot]]:
        setup = await prepare_match(spec, ["a", "b"], on_hand=records.append)
        bots = [RawBot(setup.server.address, seat.token, max_tables=2, batches=batches, act=commenting(i, act))
                for i, (seat, batches, act) in enumerate(zip(setup.seats, (True, False), (raiser, passive),
                                                                strict=True))]
        try:
            result, *_ = await asyncio.gather(play(setup), *(bot.run() for bot in bots))
        finally:
            await setup.server.stop()
        return result, bots

    result, bots = asyncio.run(main())
    return result, bots, records


def test_no_message_to_any_bot_carries_a_comment_and_the_records_keep_them_all() -> None:
    result, bots, records = run(24)
    assert result.reason == "completed" and all(r.violations == 0 for r in result.results)
    stored = [d.comment for r in records for d in r.decisions]
    assert stored and all(c.startswith("cmt") for c in stored)  # every action's comment is in the records
    asked = {(i, m.action_request.request_id) for i, bot in enumerate(bots) for m in bot.of("action_request")}
    assert {marker(i, q) for i, q in asked} == set(stored)
    for bot in bots:
        kinds = {m.WhichOneof("msg") for m in bot.received}
        assert {"welcome", "hand_start", "action_request", "hand_end", "match_end"} <= kinds
        received = b"".join(m.SerializeToString() for m in bot.received)
        assert b"cmt" not in received
    summaries = b"".join(wire.hand_summary("cm", r).SerializeToString() for r in records)
    assert b"cmt" not in summaries  # the spectators' feed (WatchMatch) has none either
    # Positive control: the same search finds a comment wherever one is in the bytes (e.g. an echoed Action)
    sent = poker_pb2.Action(kind=poker_pb2.ACTION_KIND_CALL, comment=stored[0])
    assert b"cmt" in bot_pb2.BotMessage(action=sent).SerializeToString()
