"""A Join's words about the bot over real gRPC (issue 25): a name, version or language over its cap (``arena.text``)
is refused with an Error naming the field and the limit, and the stream ends; exactly at the cap is welcomed.
Control: with the check switched off, the 10 KB version joins and would be recorded with the match."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from arena.referee import MatchSpec
from arena.runner.remote_match import remote_seats
from arena.transport import bot_service
from arena.transport.server import RefereeServer
from arena_sdk.pb import bot_pb2, bot_pb2_grpc

pytestmark = pytest.mark.timeout(60)

Outcome = tuple[list[bot_pb2.RefereeMessage], grpc.StatusCode | None]


async def join_each(joins: list[dict[str, str]]) -> tuple[list[Outcome], list[str]]:
    """Each Join (with a seat's token of its own) on a stream of its own: what came back, how the stream ended
    (None: still open after the Welcome), and the versions the seats' endpoints took in."""
    spec = MatchSpec("caps", "seed", 2)
    [seats] = remote_seats(spec, [f"b{i}" for i in range(max(2, len(joins)))])
    seats = seats[:len(joins)]
    server = RefereeServer(local=True, tcp=False)
    await server.start()
    for seat in seats:
        server.add_seat(seat)
    outcomes: list[Outcome] = []
    try:
        async with grpc.aio.insecure_channel(server.local_address) as channel:
            stub = bot_pb2_grpc.BotServiceStub(channel)
            for seat, fields in zip(seats, joins, strict=True):
                call = stub.Play()
                await call.write(bot_pb2.BotMessage(join=bot_pb2.Join(token=seat.token, protocol_version=1,
                                                                      **fields)))
                got: list[bot_pb2.RefereeMessage] = []
                status = None
                try:
                    message = await asyncio.wait_for(call.read(), 10)
                    assert isinstance(message, bot_pb2.RefereeMessage)
                    got.append(message)
                    if message.WhichOneof("msg") == "error":
                        await asyncio.wait_for(call.read(), 10)
                except grpc.aio.AioRpcError as exc:
                    status = exc.code()
                call.cancel()
                outcomes.append((got, status))
    finally:
        await server.stop()
    return outcomes, [s.endpoint.introduction.bot_version if s.endpoint.introduction else "" for s in seats]


def test_a_join_over_a_cap_is_refused_naming_the_field_and_the_limit() -> None:
    outcomes, versions = asyncio.run(join_each([
        {"bot_name": "me", "bot_version": "v" * 10240},
        {"bot_name": "n" * 65},
        {"bot_name": "me", "language": "l" * 33},
        {"bot_name": "n" * 64, "bot_version": "v" * 64, "language": "l" * 32},  # exactly at the caps
    ]))
    expected = [
        "Join.bot_version: a bot's version is at most 64 characters, got 10240",
        "Join.bot_name: a bot's name is at most 64 characters, got 65",
        "Join.language: a bot's language is at most 32 characters, got 33",
    ]
    for (got, status), text in zip(outcomes, expected, strict=False):
        [message] = got
        assert message.error.code == bot_pb2.ERROR_CODE_MALFORMED and message.error.fatal
        assert message.error.message.startswith(text), message.error.message
        assert "the Join is refused and the stream closed (the caps: proto/README.md, Join)" in message.error.message
        assert len(message.error.message) < 300  # the 10 KB is not echoed back
        assert status is grpc.StatusCode.INVALID_ARGUMENT
    got, status = outcomes[3]
    assert [m.WhichOneof("msg") for m in got] == ["welcome"] and status is None
    assert versions == ["", "", "", "v" * 64]  # nothing of a refused Join was taken in


def test_control_without_the_check_the_10_kb_version_is_taken_in(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bot_service, "join_text_refusal", lambda join: None)
    outcomes, versions = asyncio.run(join_each([{"bot_name": "me", "bot_version": "v" * 10240}]))
    [(got, status)] = outcomes
    assert [m.WhichOneof("msg") for m in got] == ["welcome"] and status is None
    assert versions == ["v" * 10240]  # what the match's records would show for it
