"""The spectator service (``ArenaService``): the matches of this process, a sink that publishes their finished hands
with public information only, and the servicer that lists, reads and streams them.

``WatchMatch`` with ``from_start`` replays what this process still holds of the match: the events of its last
``HISTORY_KEPT`` finished hands and status changes, not every hand of a long match (the records keep those).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import grpc

from arena.referee import HandRecord
from arena.referee.match import Match, MatchSpec
from arena.referee.status import DecisionHow
from arena.transport import convert, wire
from arena.transport.connections import Claims
from arena.transport.limits import Pacer, PeerGuard, ServerLimits, peer_host
from arena.transport.remote import RemoteSeat
from arena_sdk.pb import arena_pb2

HISTORY_KEPT = 1000  # match events a match keeps: for watchers that ask from the start, or that fall behind
Context = grpc.aio.ServicerContext[Any, Any]
Event = bytes | Callable[[], bytes]  # a serialized event, or the means to serialize it when someone reads it


@dataclass(slots=True)
class MatchEntry:
    """A match this referee runs, for the spectator service, and the log of its last ``HISTORY_KEPT`` events (status
    changes, finished hands). Publishing appends to the log and wakes the watchers that had read all of it, however
    many watch; each watcher reads the log at its own pace, from its own place in it. A finished hand is kept as
    the means to serialize it, and serialized once, when the first watcher reads it (a match nobody watches costs
    nothing to publish)."""

    match: Match
    spec: MatchSpec
    seats: list[RemoteSeat]
    status: int = arena_pb2.MATCH_STATUS_PENDING
    created: float = field(default_factory=time.time)
    log: deque[Event] = field(default_factory=lambda: deque(maxlen=HISTORY_KEPT))
    published: int = 0  # events published so far: the number the next one gets
    over: bool = False  # finished or aborted: nothing more will be published
    _next: asyncio.Future[None] | None = None  # resolved by the next publish, for the watchers that read everything

    @property
    def first(self) -> int:
        """The number of the oldest event kept."""
        return self.published - len(self.log)

    def publish(self, event: Event) -> None:
        """Append an event and wake the watchers waiting for one (never waiting for any of them)."""
        self.log.append(event)
        self.published += 1
        self._wake()

    def close(self) -> None:
        """Nothing more will be published: watchers end once they read what is kept."""
        self.over = True
        self._wake()

    def _wake(self) -> None:
        waiting, self._next = self._next, None
        if waiting is not None and not waiting.done():
            waiting.set_result(None)

    async def wait(self) -> None:
        """Until the next event is published (or the match is over)."""
        if self.over:
            return
        if self._next is None:
            self._next = asyncio.get_running_loop().create_future()
        await asyncio.shield(self._next)

    def read(self, number: int) -> bytes | None:
        """Event ``number`` (published), serialized; None once it is no longer kept."""
        index = number - self.first
        if index < 0:
            return None
        log = self.log
        event = log[index]
        if not isinstance(event, bytes):
            log[index] = event = event()
        return event

    def events(self) -> list[bytes]:
        """The events kept, serialized, oldest first."""
        return [event for number in range(self.first, self.published) if (event := self.read(number)) is not None]


class MatchDirectory:
    """The matches of this process, and a sink that feeds finished hands to whoever watches them."""

    def __init__(self) -> None:
        self.matches: dict[str, MatchEntry] = {}

    def add(self, match: Match, seats: list[RemoteSeat]) -> MatchEntry:
        entry = MatchEntry(match, match.spec, seats)
        self.matches[match.spec.match_id] = entry
        return entry

    def info(self, entry: MatchEntry) -> arena_pb2.MatchInfo:
        match = entry.match
        return arena_pb2.MatchInfo(
            match_id=entry.spec.match_id,
            status=entry.status,  # type: ignore[arg-type]
            hands_played=match.hands_played,
            hands_total=match.hands_total,
            seats=[
                arena_pb2.MatchSeat(
                    seat=i, bot_name=p.name, bot_version=p.version, net_chips=p.net, hands_played=p.hands,
                    violations=p.violations, connected=match.connected(i),
                )
                for i, p in enumerate(match.participants)
            ],
            config=convert.table_config(entry.spec.config, len(match.participants), entry.spec.starting_stack),
            created_unix_ms=int(entry.created * 1000),
        )

    def set_status(self, match_id: str, status: int) -> None:
        entry = self.matches[match_id]
        entry.status = status
        entry.publish(arena_pb2.MatchEvent(match_id=match_id, info=self.info(entry)).SerializeToString())
        if status in (arena_pb2.MATCH_STATUS_FINISHED, arena_pb2.MATCH_STATUS_ABORTED):
            entry.close()

    def sink(self, match_id: str) -> SpectatorSink:
        return SpectatorSink(self, match_id)


class SpectatorSink:
    """A HandSink that publishes each finished hand, with public information only, to the match's watchers."""

    durable = False  # it stores nothing (HandSink.durable)

    def __init__(self, directory: MatchDirectory, match_id: str) -> None:
        self.directory = directory
        self.match_id = match_id

    def hand_finished(self, record: HandRecord) -> None:
        entry = self.directory.matches.get(self.match_id)
        if entry is not None:
            entry.publish(PublicHand(self.match_id, record))


class PublicHand:
    """A finished hand waiting in its match's log (``HISTORY_KEPT`` of them) until a watcher reads it, serialized
    then (``__call__``) from what its public summary reads and nothing else: the compiled engine's events as their
    packed bytes (unpacked when read), the decisions only those that did not come from the bot (their events are
    flagged). The log held whole records a thousand hands long, and freeing each one a thousand hands later cost
    the referee's thread 8.9 µs a hand."""

    __slots__ = ("match_id", "parts")

    def __init__(self, match_id: str, record: HandRecord) -> None:
        self.match_id = match_id
        packed = record.packed_events  # (the table clears it once every sink has the hand)
        self.parts = (record.table_id, record.hand_id, record.hand_number, record.button, record.board,
                      packed or record.events, record.payoffs, record.final_stacks,
                      [d for d in record.decisions if d.how != _OK], record.names, record.config)

    def __call__(self) -> bytes:
        table_id, hand_id, number, button, board, events, payoffs, final, decisions, names, config = self.parts
        if isinstance(events, bytes):
            from arena.engine import _core  # only the compiled engine packs its events

            events = _core.unpack_events(events)
        record = HandRecord(
            match_id=self.match_id, table_id=table_id, hand_id=hand_id, hand_number=number, deal=0, rotation=0,
            seating=(), button=button, config=config, starting_stacks=(), deck=(), hole=(), board=board,
            events=events, payoffs=payoffs, final_stacks=final, decisions=decisions, names=names)
        return wire.hand_summary(self.match_id, record).SerializeToString()


_OK = DecisionHow.OK


class ArenaServicer:
    """Read-only service for people and tools: list matches, read one, watch its hands as they finish."""

    def __init__(self, directory: MatchDirectory, limits: ServerLimits, guard: PeerGuard | None = None,
                 claims: Claims | None = None) -> None:
        self.directory = directory
        self.limits = limits
        self.guard = guard or PeerGuard(limits)  # refusals in turn, shared with the bot service
        self.claims = claims or Claims()  # the connections that carry a spectator, for the warden
        self.watching = 0
        self.by_peer: dict[str, int] = {}
        self.pacer = Pacer(limits.watch_messages_per_second, limits.watch_burst)

    async def _admitted(self, context: Context) -> str:
        """Wait for the turn of this call's peer (``spectator_calls_per_second``), check the spectators' token if
        there is one, and say the connection is in use (for the warden); the peer."""
        peer = context.peer()
        await self.guard.call_turn(peer_host(peer))
        token = self.limits.watch_token
        if token is not None:
            sent = dict(context.invocation_metadata() or ()).get("authorization", "")
            if sent != f"Bearer {token}":
                await self._refuse(context, peer, grpc.StatusCode.UNAUTHENTICATED,
                                   "this referee's spectator service needs metadata 'authorization: Bearer TOKEN'")
        self.claims.touch(peer)
        return peer

    async def _refuse(self, context: Context, peer: str, code: grpc.StatusCode, text: str) -> None:
        """End the call with ``code``, once the peer's turn for a refusal has come."""
        await self.guard.refusal_turn(peer_host(peer))
        await context.abort(code, text)

    async def ListMatches(
        self, request: arena_pb2.ListMatchesRequest, context: Context
    ) -> arena_pb2.ListMatchesResponse:
        await self._admitted(context)
        entries = sorted(self.directory.matches.values(), key=lambda e: e.created)
        if request.status:
            entries = [e for e in entries if e.status == request.status]
        return arena_pb2.ListMatchesResponse(matches=[self.directory.info(e) for e in entries])

    async def GetMatch(
        self, request: arena_pb2.GetMatchRequest, context: Context
    ) -> arena_pb2.MatchInfo:
        peer = await self._admitted(context)
        entry = self.directory.matches.get(request.match_id)
        if entry is None:
            await self._refuse(context, peer, grpc.StatusCode.NOT_FOUND, f"no match {request.match_id!r}")
        assert entry is not None
        return self.directory.info(entry)

    def _crowded(self, host: str) -> str | None:
        """Why one more spectator from ``host`` cannot watch now, or None."""
        limits = self.limits
        if self.watching >= limits.max_watchers:
            return f"{limits.max_watchers} spectators are watching already; try again later"
        if self.by_peer.get(host, 0) >= limits.watchers_per_peer:
            return f"{limits.watchers_per_peer} spectators from {host} are watching already; try again later"
        return None

    async def WatchMatch(self, request: arena_pb2.WatchMatchRequest, context: Context) -> AsyncIterator[bytes]:
        """The match's events, already serialized (see ``handler``), at the pace all spectators share."""
        peer = await self._admitted(context)
        entry = self.directory.matches.get(request.match_id)
        if entry is None:
            await self._refuse(context, peer, grpc.StatusCode.NOT_FOUND, f"no match {request.match_id!r}")
            return
        host = peer_host(peer)
        crowded = self._crowded(host)
        if crowded is not None:
            await self._refuse(context, peer, grpc.StatusCode.RESOURCE_EXHAUSTED, crowded)
            return
        self.watching += 1
        self.by_peer[host] = self.by_peer.get(host, 0) + 1
        self.claims.hold(peer)
        try:
            number = entry.first if request.from_start else entry.published
            turn = self.pacer.turn
            await turn()
            yield arena_pb2.MatchEvent(match_id=request.match_id, info=self.directory.info(entry)).SerializeToString()
            batch = self.pacer.batch
            while True:
                await turn()  # first the turn, then the events: one waiting for its turn is not woken by each event
                while number >= entry.published and not entry.over:
                    await entry.wait()
                if number < entry.first:
                    return  # more than HISTORY_KEPT events behind: dropped, the tables never wait for a spectator
                count = min(batch, entry.published - number)
                if count == 0:
                    return  # the match is over and every event was sent
                if count > 1:  # behind: the rest of the turn at once
                    await turn(count - 1)
                for _ in range(count):  # each serialized as it goes (a hand's summary when first read by anyone)
                    event = entry.read(number)
                    if event is None:
                        return
                    number += 1
                    yield event
        finally:
            self.claims.release(peer)
            self.watching -= 1
            left = self.by_peer[host] - 1
            if left:
                self.by_peer[host] = left
            else:
                del self.by_peer[host]

    def handler(self) -> grpc.GenericRpcHandler[Any, Any]:
        """The service's handlers; WatchMatch sends bytes as they are (each event is serialized once, for all)."""
        service = arena_pb2.DESCRIPTOR.services_by_name["ArenaService"].full_name
        return grpc.method_handlers_generic_handler(service, {
            "ListMatches": grpc.unary_unary_rpc_method_handler(
                self.ListMatches, request_deserializer=arena_pb2.ListMatchesRequest.FromString,
                response_serializer=arena_pb2.ListMatchesResponse.SerializeToString),
            "GetMatch": grpc.unary_unary_rpc_method_handler(
                self.GetMatch, request_deserializer=arena_pb2.GetMatchRequest.FromString,
                response_serializer=arena_pb2.MatchInfo.SerializeToString),
            "WatchMatch": grpc.unary_stream_rpc_method_handler(
                self.WatchMatch, request_deserializer=arena_pb2.WatchMatchRequest.FromString,
                response_serializer=bytes),
        })


