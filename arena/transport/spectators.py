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
from arena.transport import convert, wire
from arena.transport.limits import Pacer, ServerLimits
from arena.transport.pb import arena_pb2
from arena.transport.remote import RemoteSeat

HISTORY_KEPT = 1000  # match events a match keeps for watchers that ask for them from the start
WATCHER_QUEUE = 1000  # events waiting for one watcher before it is dropped (it is not reading)
Context = grpc.aio.ServicerContext[Any, Any]


@dataclass(slots=True)
class MatchEntry:
    """A match this referee runs, for the spectator service; ``history`` keeps its last ``HISTORY_KEPT`` events,
    each serialized once, or, for a hand finished while nobody watched, the means to serialize it when someone asks
    for the match from the start (a match nobody watches costs nothing to publish)."""

    match: Match
    spec: MatchSpec
    seats: list[RemoteSeat]
    status: int = arena_pb2.MATCH_STATUS_PENDING
    created: float = field(default_factory=time.time)
    watchers: list[asyncio.Queue[bytes | None]] = field(default_factory=list)
    history: deque[bytes | Callable[[], bytes]] = field(default_factory=lambda: deque(maxlen=HISTORY_KEPT))

    def events(self) -> list[bytes]:
        """The events kept, serialized, oldest first."""
        return [event if isinstance(event, bytes) else event() for event in list(self.history)]


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

    def publish(self, entry: MatchEntry, event: arena_pb2.MatchEvent) -> None:
        """Serialize the event once and queue it for every watcher (never waiting for one)."""
        data = event.SerializeToString()
        entry.history.append(data)
        for queue in list(entry.watchers):
            if queue.qsize() > WATCHER_QUEUE:  # a watcher that does not read is dropped, never waited for
                entry.watchers.remove(queue)
                queue.put_nowait(None)
            else:
                queue.put_nowait(data)

    def set_status(self, match_id: str, status: int) -> None:
        entry = self.matches[match_id]
        entry.status = status
        self.publish(entry, arena_pb2.MatchEvent(match_id=match_id, info=self.info(entry)))
        if status in (arena_pb2.MATCH_STATUS_FINISHED, arena_pb2.MATCH_STATUS_ABORTED):
            for queue in entry.watchers:
                queue.put_nowait(None)
            entry.watchers.clear()

    def sink(self, match_id: str) -> SpectatorSink:
        return SpectatorSink(self, match_id)


class SpectatorSink:
    """A HandSink that publishes each finished hand, with public information only, to the match's watchers."""

    def __init__(self, directory: MatchDirectory, match_id: str) -> None:
        self.directory = directory
        self.match_id = match_id

    def hand_finished(self, record: HandRecord) -> None:
        entry = self.directory.matches.get(self.match_id)
        if entry is None:
            return
        if not entry.watchers:
            entry.history.append(lambda: self.summary(record).SerializeToString())
            return
        self.directory.publish(entry, self.summary(record))

    def summary(self, record: HandRecord) -> arena_pb2.MatchEvent:
        """The public summary of a finished hand."""
        return wire.hand_summary(self.match_id, record)


class ArenaServicer:
    """Read-only service for people and tools: list matches, read one, watch its hands as they finish."""

    def __init__(self, directory: MatchDirectory, limits: ServerLimits) -> None:
        self.directory = directory
        self.limits = limits
        self.watching = 0
        self.pacer = Pacer(limits.watch_messages_per_second, limits.watch_burst)

    async def _authorized(self, context: Context) -> None:
        token = self.limits.watch_token
        if token is None:
            return
        sent = dict(context.invocation_metadata() or ()).get("authorization", "")
        if sent != f"Bearer {token}":
            await context.abort(grpc.StatusCode.UNAUTHENTICATED,
                                "this referee's spectator service needs metadata 'authorization: Bearer TOKEN'")

    async def ListMatches(
        self, request: arena_pb2.ListMatchesRequest, context: Context
    ) -> arena_pb2.ListMatchesResponse:
        await self._authorized(context)
        entries = sorted(self.directory.matches.values(), key=lambda e: e.created)
        if request.status:
            entries = [e for e in entries if e.status == request.status]
        return arena_pb2.ListMatchesResponse(matches=[self.directory.info(e) for e in entries])

    async def GetMatch(
        self, request: arena_pb2.GetMatchRequest, context: Context
    ) -> arena_pb2.MatchInfo:
        await self._authorized(context)
        entry = self.directory.matches.get(request.match_id)
        if entry is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no match {request.match_id!r}")
        assert entry is not None
        return self.directory.info(entry)

    async def WatchMatch(self, request: arena_pb2.WatchMatchRequest, context: Context) -> AsyncIterator[bytes]:
        """The match's events, already serialized (see ``handler``)."""
        await self._authorized(context)
        entry = self.directory.matches.get(request.match_id)
        if entry is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no match {request.match_id!r}")
            return
        if self.watching >= self.limits.max_watchers:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                                f"{self.limits.max_watchers} spectators are watching already; try again later")
            return
        self.watching += 1
        turn = self.pacer.turn
        try:
            await turn()
            yield arena_pb2.MatchEvent(match_id=request.match_id, info=self.directory.info(entry)).SerializeToString()
            if request.from_start:
                for event in list(entry.history):  # serialized one at a time, as their turn comes
                    await turn()
                    yield event if isinstance(event, bytes) else event()
            if entry.status in (arena_pb2.MATCH_STATUS_FINISHED, arena_pb2.MATCH_STATUS_ABORTED):
                return
            queue: asyncio.Queue[bytes | None] = asyncio.Queue()
            entry.watchers.append(queue)
            batch = self.pacer.batch
            try:
                while True:
                    await turn()  # first the turn, then the event: a spectator waiting for its turn is not woken
                    items = [await queue.get()]  # by every event published meanwhile
                    while len(items) < batch and not queue.empty():  # behind: the rest of the turn at once
                        items.append(queue.get_nowait())
                    if len(items) > 1:
                        await turn(len(items) - 1)
                    for item in items:
                        if item is None:
                            return
                        yield item
            finally:
                if queue in entry.watchers:
                    entry.watchers.remove(queue)
        finally:
            self.watching -= 1

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


