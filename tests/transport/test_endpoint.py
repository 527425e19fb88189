"""The endpoint a token or key names: its stored state as streams join and end, and "the newest stream wins" for a
match seat's token and a league bot's key alike (the streams over real gRPC are in tests/referee/test_grpc_referee
and tests/league/test_streams; here the connections are the real objects, with no network under them)."""

from __future__ import annotations

import asyncio

import pytest

from arena.referee import SeatUnavailable
from arena.transport.endpoint import Credential, Endpoint, EndpointState
from arena.transport.session import BotSession, Connection
from arena_sdk.pb import bot_pb2


class Seat:
    """A seat played over an endpoint, keeping the sessions it was told to welcome."""

    def __init__(self) -> None:
        self.welcomed: list[BotSession] = []

    def welcome(self, session: BotSession) -> None:
        self.welcomed.append(session)


def sent(conn: Connection) -> list[bot_pb2.RefereeMessage]:
    messages, _ = conn.take()
    return [message if isinstance(message, bot_pb2.RefereeMessage) else bot_pb2.RefereeMessage.FromString(message)
            for message in messages]


JOIN = bot_pb2.Join(bot_name="me", bot_version="1.0", language="rust", protocol_version=1)


@pytest.mark.parametrize("credential", list(Credential))
def test_the_newest_stream_wins_and_the_state_follows(credential: Credential) -> None:
    async def scenario() -> None:
        endpoint = Endpoint("alice", credential, lasting=credential is Credential.KEY)
        seat = Seat()
        endpoint.add(seat)
        joined: list[str] = []
        endpoint.on_join = lambda e, peer, join: joined.append(peer)
        assert endpoint.state is EndpointState.WAITING and endpoint.session is None and not endpoint.live

        first = Connection("ipv4:10.0.0.1:1")
        endpoint.attach(first, JOIN)
        assert endpoint.state is EndpointState.JOINED and endpoint.live and seat.welcomed == [endpoint.session]
        assert endpoint.introduction is not None and endpoint.introduction.bot_version == "1.0"
        old = endpoint.session
        assert old is not None
        waiting = asyncio.get_running_loop().create_future()
        old.pending[("t", 1)] = (object(), waiting)  # type: ignore[assignment]  # an open request on the stream

        second = Connection("ipv4:10.0.0.2:2")
        endpoint.attach(second, JOIN)  # the same token or key again: the newest stream plays
        word = credential.value
        [error] = [m.error for m in sent(first) if m.WhichOneof("msg") == "error"]
        assert error.code == bot_pb2.ERROR_CODE_BAD_TOKEN and error.fatal
        assert error.message == (f"another connection joined with your {word}; this one is closed (the newest "
                                 "connection plays)")
        assert first.closed and first.closing is not None and first.closing.code == "ALREADY_EXISTS"
        assert first.closing.details == f"replaced by a newer connection with the same {word}"
        assert isinstance(waiting.exception(), SeatUnavailable)  # the referee plays it as absent, never crashes
        assert endpoint.state is EndpointState.JOINED and endpoint.session is not None
        assert endpoint.session.conn is second and endpoint.joins == 2 and endpoint.peer == "ipv4:10.0.0.2:2"
        assert len(seat.welcomed) == 2 and joined == ["ipv4:10.0.0.1:1", "ipv4:10.0.0.2:2"]

        endpoint.detach(first)  # the replaced stream's end changes nothing
        assert endpoint.state is EndpointState.JOINED and not second.closed

        second.close("RESOURCE_EXHAUSTED", "rate limit exceeded")  # closed by the referee: the bot is gone at once
        assert endpoint.state is EndpointState.GONE and endpoint.session is None and not endpoint.live
        assert not await endpoint.wait_joined(0.01)

        third = Connection("ipv4:10.0.0.3:3")
        endpoint.attach(third, JOIN)
        assert endpoint.state is EndpointState.JOINED and await endpoint.wait_joined(0.01)
        endpoint.detach(third)  # the bot's side ended the stream
        assert endpoint.state is EndpointState.GONE

    asyncio.run(scenario())


def test_a_match_seats_endpoint_closes_with_its_match_and_a_league_bots_outlives_it() -> None:
    async def scenario() -> None:
        token = Endpoint("alice", Credential.TOKEN, "tok")
        seat = Seat()
        token.add(seat)
        conn = Connection("unix")
        token.attach(conn, JOIN)
        token.release(seat)  # the match is over: its stream ends after what is queued
        assert token.state is EndpointState.CLOSED and conn.closed and conn.closing is None
        late = Connection("unix")
        token.attach(late, JOIN)  # a stream that joins later is welcomed and closed
        assert len(seat.welcomed) == 2 and late.closed and token.state is EndpointState.CLOSED

        key = Endpoint("bob", Credential.KEY, lasting=True)
        stream = Connection("ipv4:10.0.0.1:1")
        key.attach(stream, JOIN)
        match_seat = Seat()
        key.add(match_seat)  # a match starts: its seat is welcomed at once on the live stream
        assert match_seat.welcomed == [key.session]
        key.release(match_seat)
        assert key.state is EndpointState.JOINED and not stream.closed and key.seats == {}
        key.attach(Connection("ipv4:10.0.0.1:2"), JOIN)
        assert len(match_seat.welcomed) == 1  # a finished match's seat hears of no later stream

    asyncio.run(scenario())


def test_a_join_the_endpoint_does_not_admit_leaves_the_current_stream_playing() -> None:
    async def scenario() -> None:
        refusals = iter([None, (bot_pb2.ERROR_CODE_RATE_LIMITED, "RESOURCE_EXHAUSTED", "too many joins")])
        endpoint = Endpoint("carol", Credential.KEY, lasting=True, admit=lambda join: next(refusals))
        playing = Connection("ipv4:10.0.0.1:1")
        endpoint.attach(playing, JOIN)
        refused = Connection("ipv4:10.0.0.1:2")
        endpoint.attach(refused, JOIN)
        [error] = [m.error for m in sent(refused)]
        assert error.code == bot_pb2.ERROR_CODE_RATE_LIMITED and error.message == "too many joins"
        assert refused.closing is not None and refused.closing.code == "RESOURCE_EXHAUSTED"
        assert endpoint.session is not None and endpoint.session.conn is playing and not playing.closed
        assert endpoint.joins == 1

    asyncio.run(scenario())

