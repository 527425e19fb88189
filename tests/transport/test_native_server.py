"""The bots' service served by gRPC's C++ library (``ARENA_BOT_SERVER=native``, arena.transport.native_server) on
the local socket: built here, and alike to grpc.aio's in everything a bot can see or do. The adversarial matches of
tests/referee/test_grpc_referee.py are played again on it, the same hands come out of both servers, and what only
a transport does (a message over the size cap, another method, a cancelled call, a bot that stops reading, a stop
with streams open) is checked on both."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from pathlib import Path

import grpc
import pytest

from arena.records import queries
from arena.referee import MatchSpec
from arena.runner.remote_match import remote_seats
from arena.transport import native_server
from arena.transport.server import RefereeServer
from arena.transport.session import error_message
from arena_sdk.pb import bot_pb2, bot_pb2_grpc, poker_pb2
from tests.referee import test_grpc_referee as referee

pytestmark = pytest.mark.timeout(120)

SERVERS = ("grpcio", "native")


@pytest.fixture(params=SERVERS)
def server_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("ARENA_BOT_SERVER", request.param)
    return str(request.param)


def test_the_native_server_is_built_with_the_package() -> None:
    """`make install` installs libgrpc++ before the package, which builds the extension."""
    assert native_server.available()


def test_a_referee_that_serves_with_grpc_aio_never_loads_libgrpcpp() -> None:
    """The C++ server's module (and gRPC's C++ library with it) is loaded only when it is selected (the default)."""
    import subprocess
    import sys

    code = ("import asyncio, sys\n"
            "from arena.transport.server import RefereeServer\n"
            "async def main():\n"
            "    server = RefereeServer(local=True, tcp=False)\n"
            "    await server.start()\n"
            "    await server.stop()\n"
            "asyncio.run(main())\n"
            "print('arena.transport._native_server' in sys.modules,"
            " any('libgrpc++' in line for line in open('/proc/self/maps')))\n")
    env = {k: v for k, v in os.environ.items() if k != "ARENA_BOT_SERVER"}
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                           env={**env, "ARENA_BOT_SERVER": "grpcio"})
    assert shown.stdout.split() == ["False", "False"], shown.stderr
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert shown.stdout.split() == ["True", "True"], shown.stderr


def test_the_switch_selects_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ARENA_BOT_SERVER", raising=False)
    assert native_server.selected()  # the C++ server by default
    monkeypatch.setenv("ARENA_BOT_SERVER", "grpcio")
    assert not native_server.selected()
    monkeypatch.setenv("ARENA_BOT_SERVER", "cpp")
    with pytest.raises(ValueError, match="ARENA_BOT_SERVER must be one of native, grpcio; got 'cpp'"):
        native_server.selected()


async def _started(server: RefereeServer) -> None:
    await server.start()
    kinds = {type(s).__name__ for s in server._servers}
    assert kinds == ({"NativeBotServer"} if native_server.selected() else {"Server"}), kinds


SCENARIOS: list[Callable[[Path], None]] = [
    referee.test_well_behaved_bots_play_a_whole_match,
    referee.test_no_bot_ever_sees_another_bots_hole_cards,
    referee.test_a_bot_that_crashes_mid_match_is_played_by_the_policy,
    referee.test_a_bot_that_disconnects_and_reconnects_plays_on,
    referee.test_garbage_bytes_end_only_that_stream,
    referee.test_unknown_message_types_get_a_clear_error_and_play_goes_on,
    referee.test_actions_out_of_turn_or_for_other_requests_are_refused_without_harm,
    referee.test_the_newest_join_with_a_token_replaces_a_silent_stream,
    referee.test_a_bot_that_floods_its_stream_is_cut_off_naming_the_rate_limit_and_the_match_goes_on,
    referee.test_a_batch_of_stray_actions_costs_a_token_each_and_is_cut_off_where_they_run_out,
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.__name__.removeprefix("test_") for s in SCENARIOS])
def test_the_adversarial_matches_play_alike_on_the_native_server(
        scenario: Callable[[Path], None], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_BOT_SERVER", "native")
    started = []
    start = native_server.NativeBotServer.start

    async def counted(self: native_server.NativeBotServer) -> None:
        started.append(self)
        await start(self)

    monkeypatch.setattr(native_server.NativeBotServer, "start", counted)
    scenario(tmp_path)
    assert started  # the match was served by the C++ server


def test_both_servers_deal_and_record_the_same_hands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    records = {}
    for kind in SERVERS:
        monkeypatch.setenv("ARENA_BOT_SERVER", kind)
        played = referee.run(tmp_path / kind, "good", hands=8)
        records[kind] = [(r.hand_id, r.events, r.payoffs, [(d.seat, d.request_id, d.action) for d in r.decisions])
                         for r in queries.hand_records(played.db, "t1")]
    assert len(records["native"]) == 8 and records["native"] == records["grpcio"]


async def _joined(server: RefereeServer, channel: grpc.aio.Channel, token: str) -> grpc.aio.StreamStreamCall:
    call = bot_pb2_grpc.BotServiceStub(channel).Play()
    await call.write(bot_pb2.BotMessage(join=bot_pb2.Join(token=token, protocol_version=1)))
    first = await asyncio.wait_for(call.read(), 10)
    assert first.WhichOneof("msg") == "welcome"
    return call


async def _served(body: Callable[[RefereeServer, list, grpc.aio.Channel], object]) -> None:
    spec = MatchSpec("native", "seed", 2)
    [seats] = remote_seats(spec, ["a", "b"])
    server = RefereeServer(local=True, tcp=False)
    await _started(server)
    for seat in seats:
        server.add_seat(seat)
    try:
        async with grpc.aio.insecure_channel(server.local_address) as channel:
            await body(server, seats, channel)  # type: ignore[misc]
    finally:
        await server.stop()


def test_a_message_over_the_size_cap_ends_the_stream_and_frees_the_seat(server_kind: str) -> None:
    async def body(server: RefereeServer, seats: list, channel: grpc.aio.Channel) -> None:
        call = await _joined(server, channel, seats[0].token)
        assert seats[0].endpoint.session is not None
        await call.write(bot_pb2.BotMessage(action=poker_pb2.Action(table_id="x" * 100_000)))
        with pytest.raises(grpc.aio.AioRpcError) as ended:
            while await asyncio.wait_for(call.read(), 10) is not grpc.aio.EOF:
                pass
        assert ended.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "larger than max" in str(ended.value.details())
        for _ in range(100):
            if seats[0].endpoint.session is None:
                break
            await asyncio.sleep(0.01)
        assert seats[0].endpoint.session is None

    asyncio.run(_served(body))


def test_another_method_on_the_bots_socket_is_unimplemented(server_kind: str) -> None:
    async def body(server: RefereeServer, seats: list, channel: grpc.aio.Channel) -> None:
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await channel.unary_unary("/arena.v1.ArenaService/ListMatches")(b"")
        assert refused.value.code() == grpc.StatusCode.UNIMPLEMENTED

    asyncio.run(_served(body))


def test_a_cancelled_call_is_a_bot_gone_and_its_seat_can_be_joined_again(server_kind: str) -> None:
    async def body(server: RefereeServer, seats: list, channel: grpc.aio.Channel) -> None:
        call = await _joined(server, channel, seats[0].token)
        call.cancel()
        for _ in range(200):
            if seats[0].endpoint.session is None:
                break
            await asyncio.sleep(0.01)
        assert seats[0].endpoint.session is None
        again = await _joined(server, channel, seats[0].token)
        assert seats[0].endpoint.session is not None and seats[0].endpoint.joins == 2
        again.cancel()

    asyncio.run(_served(body))


def test_a_bot_that_stops_reading_is_cut_off(server_kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """What waits for a bot is bounded: grpc.aio's writer waits on the connection, whose queue is capped
    (``session.MAX_QUEUED``); the C++ server's writes queue in C++, capped the same (``native_server``)."""
    monkeypatch.setattr("arena.transport.session.MAX_QUEUED", 50)
    monkeypatch.setattr("arena.transport.native_server.MAX_QUEUED", 50)

    async def body(server: RefereeServer, seats: list, channel: grpc.aio.Channel) -> None:
        await _joined(server, channel, seats[0].token)  # and never read again
        session = seats[0].endpoint.session
        assert session is not None
        filler = error_message(bot_pb2.ERROR_CODE_MALFORMED, "x" * 4000)
        for _ in range(2000):
            session.send(filler)
            await asyncio.sleep(0)
            if session.conn.closed:
                break
        assert session.conn.closed
        assert session.conn.closing is not None and session.conn.closing.code == "RESOURCE_EXHAUSTED"
        assert session.conn.closing.details == "the bot is not reading its stream"  # session.NOT_READING
        if server_kind == "native":  # and the call itself ends: its last writes would wait for the bot for ever
            [native] = server._servers
            assert isinstance(native, native_server.NativeBotServer)
            for _ in range(300):
                if not native._calls:
                    break
                await asyncio.sleep(0.01)
            assert not native._calls

    asyncio.run(_served(body))


def test_stopping_with_streams_open_ends_them_promptly(server_kind: str) -> None:
    async def scenario() -> tuple[float, grpc.StatusCode | None]:
        spec = MatchSpec("native", "seed", 2)
        [seats] = remote_seats(spec, ["a", "b"])
        server = RefereeServer(local=True, tcp=False)
        await _started(server)
        server.add_seat(seats[0])
        async with grpc.aio.insecure_channel(server.local_address) as channel:
            call = await _joined(server, channel, seats[0].token)
            started = time.monotonic()
            await server.stop(0.2)
            took = time.monotonic() - started
            try:
                while await asyncio.wait_for(call.read(), 10) is not grpc.aio.EOF:
                    pass
                code = await call.code()
            except grpc.aio.AioRpcError as exc:
                code = exc.code()
        assert code == grpc.StatusCode.UNAVAILABLE  # as grpc.aio's server ends them
        return took, code

    took, _ = asyncio.run(scenario())
    assert took < 2.0


def test_what_a_bot_sends_before_its_join_is_read_is_bounded_and_nothing_after_its_stream_ends() -> None:
    call = native_server.NativeCall(None, 1, "unix:")  # type: ignore[arg-type]
    join = bot_pb2.BotMessage(join=bot_pb2.Join(token="t", protocol_version=1)).SerializeToString()
    for _ in range(native_server.BEFORE_JOIN_MOST * 10):
        call.message(join)
    assert len(call._queue) == native_server.BEFORE_JOIN_MOST
    call.direct(None)  # the stream's Play is over
    call._queue.clear()
    call.message(join)
    assert not call._queue


def test_servers_start_and_stop_promptly_one_after_another(tmp_path: Path) -> None:
    """The last server's end once shut gRPC's whole library down now and then (10 s, joining its threads): the
    module keeps the library up for the process's life."""
    native = native_server.extension()
    assert native is not None
    slowest = 0.0
    for k in range(30):
        server = native.Server(f"unix:{tmp_path / f's{k}.sock'}", native_server.PLAY, [])
        started = time.monotonic()
        server.shutdown(0.0)
        slowest = max(slowest, time.monotonic() - started)
        del server
    assert slowest < 2.0


FROZEN_CLIENT = r"""
import asyncio, sys
sys.path.insert(0, sys.argv[2])
from arena_sdk.pb import bot_pb2
import grpc

async def main():
    async with grpc.aio.insecure_channel(sys.argv[1]) as channel:
        call = channel.stream_stream("/arena.v1.BotService/Play", request_serializer=lambda b: b,
                                     response_deserializer=lambda b: b)()
        await call.write(bot_pb2.BotMessage(join=bot_pb2.Join(token=sys.argv[3], protocol_version=1))
                         .SerializeToString())
        await call.read()  # the Welcome
        print("joined", flush=True)
        await asyncio.sleep(120)  # then frozen (SIGSTOP) by the test

asyncio.run(main())
"""


def test_a_bot_frozen_with_messages_unread_does_not_hold_up_the_servers_stop(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """gRPC waits for ever on a call whose peer's process is frozen with writes pending (its cancellation cannot be
    sent); ``stop`` gives up after ``STOP_WAIT_S`` past its grace and leaves that server be."""
    import signal
    import subprocess
    import sys

    monkeypatch.setenv("ARENA_BOT_SERVER", "native")
    monkeypatch.setattr(native_server, "STOP_WAIT_S", 1.0)

    async def scenario() -> float:
        spec = MatchSpec("native", "seed", 2)
        [seats] = remote_seats(spec, ["a", "b"])
        server = RefereeServer(local=True, tcp=False)
        await _started(server)
        server.add_seat(seats[0])
        client = subprocess.Popen([sys.executable, "-c", FROZEN_CLIENT, server.local_address,
                                   str(Path(__file__).resolve().parents[2] / "proto" / "python"), seats[0].token],
                                  stdout=subprocess.PIPE, text=True)
        try:
            assert client.stdout is not None
            assert await asyncio.to_thread(client.stdout.readline) == "joined\n"
            client.send_signal(signal.SIGSTOP)
            session = seats[0].endpoint.session
            assert session is not None
            filler = error_message(bot_pb2.ERROR_CODE_MALFORMED, "x" * 30_000)
            for _ in range(400):  # some 12 MB: past what the sockets and HTTP/2's windows hold
                session.send(filler)
                await asyncio.sleep(0)
            await asyncio.sleep(0.5)
            started = time.monotonic()
            await server.stop(0.2)
            return time.monotonic() - started
        finally:
            client.send_signal(signal.SIGKILL)
            client.wait()

    took = asyncio.run(scenario())
    assert took < 0.2 + 1.0 + 1.0
    assert native_server._ABANDONED  # left to its thread, never released
