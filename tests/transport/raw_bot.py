"""A bot written against the wire protocol alone (grpc.aio, no SDK), for tests of many tables on one connection: it
records every message it gets, tracks the hands and requests it has open per table, and answers as its
``answer`` policy says (now, later, never), one ActionBatch per batch."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

import grpc

from arena_sdk.pb import bot_pb2, poker_pb2

# What to do with the requests of one incoming message: a delay in seconds for each (None: never answer)
Policy = Callable[[list[bot_pb2.ActionRequest]], list[float | None]]


def at_once(requests: list[bot_pb2.ActionRequest]) -> list[float | None]:
    return [0.0] * len(requests)


def passive(request: bot_pb2.ActionRequest) -> poker_pb2.Action:
    """Check if free, else call, echoing the request's ids."""
    kind = poker_pb2.ACTION_KIND_CHECK if request.legal.can_check else poker_pb2.ACTION_KIND_CALL
    return poker_pb2.Action(table_id=request.table_id, hand_id=request.hand_id, request_id=request.request_id,
                            kind=kind)


def folder(request: bot_pb2.ActionRequest) -> poker_pb2.Action:
    """Check if free, else fold: its hands end without a showdown whenever the other bot bets."""
    kind = poker_pb2.ACTION_KIND_CHECK if request.legal.can_check else poker_pb2.ACTION_KIND_FOLD
    return poker_pb2.Action(table_id=request.table_id, hand_id=request.hand_id, request_id=request.request_id,
                            kind=kind)


def raiser(request: bot_pb2.ActionRequest) -> poker_pb2.Action:
    """Raise the minimum when it may, else check or call."""
    if request.legal.can_raise:
        return poker_pb2.Action(table_id=request.table_id, hand_id=request.hand_id, request_id=request.request_id,
                                kind=poker_pb2.ACTION_KIND_RAISE, amount=request.legal.min_raise_to)
    return passive(request)


@dataclass
class RawBot:
    address: str
    token: str
    max_tables: int = 1
    batches: bool = False
    answer: Policy = at_once
    act: Callable[[bot_pb2.ActionRequest], poker_pb2.Action] = passive
    received: list[bot_pb2.RefereeMessage] = field(default_factory=list)  # every message, batches unpacked
    batch_sizes: list[int] = field(default_factory=list)  # requests per incoming message that held any
    hands_open: set[str] = field(default_factory=set)
    requests_open: set[int] = field(default_factory=set)
    most_hands: int = 0
    most_requests: int = 0
    deferred: int = 0
    welcome: bot_pb2.Welcome | None = None

    async def run(self) -> None:
        """Join, play to MatchEnd, close."""
        outbox: asyncio.Queue[bot_pb2.BotMessage | None] = asyncio.Queue()
        outbox.put_nowait(bot_pb2.BotMessage(join=bot_pb2.Join(
            token=self.token, bot_name="raw", protocol_version=1, language="python-raw",
            max_tables=self.max_tables, batches=self.batches)))

        async def outgoing():  # type: ignore[no-untyped-def]
            while (item := await outbox.get()) is not None:
                yield item

        async def later(delay: float, action: poker_pb2.Action) -> None:
            await asyncio.sleep(delay)
            self.requests_open.discard(action.request_id)
            outbox.put_nowait(bot_pb2.BotMessage(action=action))

        pending: set[asyncio.Task[None]] = set()
        async with grpc.aio.insecure_channel(self.address) as channel:
            call = channel.stream_stream("/arena.v1.BotService/Play",
                                         request_serializer=bot_pb2.BotMessage.SerializeToString,
                                         response_deserializer=bot_pb2.RefereeMessage.FromString)(outgoing())
            async for message in call:
                inner = list(message.batch.messages) if message.WhichOneof("msg") == "batch" else [message]
                requests = [m.action_request for m in inner if m.WhichOneof("msg") == "action_request"]
                for m in inner:
                    self._note(m)
                if requests:
                    self.batch_sizes.append(len(requests))
                    now = []
                    for request, delay in zip(requests, self.answer(requests), strict=True):
                        if delay is None:
                            continue
                        if delay <= 0:
                            now.append(self.act(request))
                            self.requests_open.discard(request.request_id)
                        else:
                            self.deferred += 1
                            task = asyncio.ensure_future(later(delay, self.act(request)))
                            pending.add(task)
                            task.add_done_callback(pending.discard)
                    if len(now) == 1:
                        outbox.put_nowait(bot_pb2.BotMessage(action=now[0]))
                    elif now:
                        batch = bot_pb2.BotMessage()
                        batch.actions.actions.extend(now)
                        outbox.put_nowait(batch)
                if any(m.WhichOneof("msg") == "match_end" for m in inner):
                    break
            for task in pending:
                task.cancel()
            outbox.put_nowait(None)

    def _note(self, message: bot_pb2.RefereeMessage) -> None:
        self.received.append(message)
        kind = message.WhichOneof("msg")
        if kind == "welcome":
            self.welcome = message.welcome
        elif kind == "hand_start":
            self.hands_open.add(message.hand_start.table_id)
            self.most_hands = max(self.most_hands, len(self.hands_open))
        elif kind == "hand_end":
            self.hands_open.discard(message.hand_end.table_id)
        elif kind == "action_request":
            self.requests_open.add(message.action_request.request_id)
            self.most_requests = max(self.most_requests, len(self.requests_open))
        elif kind == "error" and message.error.request_id:
            self.requests_open.discard(message.error.request_id)  # the referee acted for it (a time-out)
        if kind == "hand_end":  # a hand's end closes whatever was open on it
            table = message.hand_end.table_id
            self.requests_open = {r for r in self.requests_open if self._table_of.get(r) != table}
        if kind == "action_request":
            self._table_of[message.action_request.request_id] = message.action_request.table_id

    def __post_init__(self) -> None:
        self._table_of: dict[int, str] = {}

    def of(self, kind: str) -> list[bot_pb2.RefereeMessage]:
        return [m for m in self.received if m.WhichOneof("msg") == kind]
