"""A scripted referee for the SDK tests: a real gRPC server on 127.0.0.1 playing one short match with one bot.

The script: Join -> Welcome, HandStart, then each ActionRequest of ``requests`` in turn (the first action of the
first request is always rejected once with R7.2, to exercise retries), HandEnd, MatchEnd. Everything the bot sends
is recorded, and so is every protocol problem the referee notices (``problems``), so tests can assert on both.
With ``breaks``, the first streams break after their Welcome and first request (or, without ``ask_before_break``,
right after the Welcome), as a connection the referee's keepalive closed looks to a bot (``UNAVAILABLE``); the bot's
Join on each stream is kept in ``joins``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from concurrent import futures
from dataclasses import dataclass, field

import grpc

from arena_sdk.pb import bot_pb2, bot_pb2_grpc, poker_pb2
from tests.sdk.helpers import config_pb, make_request

TOKEN = "tok-7f3a"


def default_requests() -> list[bot_pb2.ActionRequest]:
    """Three requests of one hand: pre-flop facing the big blind, the flop facing a bet, the turn with a free check."""
    flop_legal = poker_pb2.LegalActions(
        can_fold=True, can_call=True, call_amount=400, can_raise=True, min_raise_to=800, max_raise_to=9700
    )
    turn_legal = poker_pb2.LegalActions(
        can_fold=False, can_check=True, can_raise=True, min_raise_to=100, max_raise_to=9300
    )
    return [
        make_request(request_id=1),
        make_request(
            request_id=2, board="Qh7c2d", stacks=(9700, 9300), bets=(0, 400), committed=(300, 700), legal=flop_legal
        ),
        make_request(
            request_id=3,
            board="Qh7c2dTs",
            stacks=(9300, 9300),
            bets=(0, 0),
            committed=(700, 700),
            legal=turn_legal,
        ),
    ]


@dataclass
class Exchange:
    """One request and every action the bot sent for it (more than one after a rejection)."""

    request: bot_pb2.ActionRequest
    actions: list[poker_pb2.Action] = field(default_factory=list)


def is_legal(action: poker_pb2.Action, legal: poker_pb2.LegalActions) -> bool:
    """Whether the referee would accept ``action`` under ``legal``."""
    if action.kind == poker_pb2.ACTION_KIND_FOLD:
        return legal.can_fold
    if action.kind == poker_pb2.ACTION_KIND_CHECK:
        return legal.can_check
    if action.kind == poker_pb2.ACTION_KIND_CALL:
        return legal.can_call
    if action.kind == poker_pb2.ACTION_KIND_RAISE:
        return legal.can_raise and legal.min_raise_to <= action.amount <= legal.max_raise_to
    return action.kind == poker_pb2.ACTION_KIND_ALL_IN


class FakeReferee(bot_pb2_grpc.BotServiceServicer):
    """Serves BotService.Play with a fixed script; ``start()`` returns the address to give the bot."""

    def __init__(
        self,
        requests: Sequence[bot_pb2.ActionRequest] | None = None,
        *,
        token: str = TOKEN,
        reject_first: bool = True,
        send_timeout_error: bool = False,
        breaks: int = 0,
        ask_before_break: bool = True,
    ) -> None:
        self.requests = list(default_requests() if requests is None else requests)
        self.token = token
        self.reject_first = reject_first
        self.send_timeout_error = send_timeout_error
        self.breaks = breaks
        self.ask_before_break = ask_before_break
        self.joins: list[bot_pb2.Join] = []  # every stream's first message, if it was a Join
        self.streams = 0
        self.received: list[bot_pb2.BotMessage] = []
        self.exchanges: list[Exchange] = []
        self.problems: list[str] = []
        self.finished = threading.Event()
        self.server: grpc.Server | None = None
        self.address = ""

    # ------------------------------------------------------------------ server

    def start(self, port: int = 0) -> str:
        """Start serving on 127.0.0.1 (``port`` 0 picks a free one); returns ``host:port``."""
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        bot_pb2_grpc.add_BotServiceServicer_to_server(self, server)
        bound = server.add_insecure_port(f"127.0.0.1:{port}")
        server.start()
        self.server = server
        self.address = f"127.0.0.1:{bound}"
        return self.address

    def stop(self) -> None:
        """Stop at once (open streams are cancelled)."""
        if self.server is not None:
            self.server.stop(grace=None)

    @property
    def join(self) -> bot_pb2.Join | None:
        """The bot's Join, if its first message was one."""
        if self.received and self.received[0].HasField("join"):
            return self.received[0].join
        return None

    # ------------------------------------------------------------------ the script

    def _next(self, incoming: Iterator[bot_pb2.BotMessage]) -> bot_pb2.BotMessage | None:
        msg = next(incoming, None)
        if msg is not None:
            self.received.append(msg)
        return msg

    def _action(self, incoming: Iterator[bot_pb2.BotMessage], request: bot_pb2.ActionRequest) -> poker_pb2.Action:
        msg = self._next(incoming)
        if msg is None or not msg.HasField("action"):
            raise RuntimeError(f"expected an Action for request {request.request_id}, got {msg}")
        action = msg.action
        ids = (action.table_id, action.hand_id, action.request_id)
        if ids != (request.table_id, request.hand_id, request.request_id):
            self.problems.append(f"action {ids} does not echo request {request.request_id}")
        if not is_legal(action, request.legal):
            self.problems.append(f"illegal action {action} for {request.legal}")
        return action

    def Play(
        self, request_iterator: Iterator[bot_pb2.BotMessage], context: grpc.ServicerContext
    ) -> Iterator[bot_pb2.RefereeMessage]:
        """The scripted match (or, while ``breaks`` lasts, its beginning and a broken stream)."""
        self.streams += 1
        if self.breaks > 0:
            self.breaks -= 1
            yield from self._broken(request_iterator, context)
            return
        try:
            yield from self._play(request_iterator, context)
        finally:
            self.finished.set()

    def _broken(
        self, incoming: Iterator[bot_pb2.BotMessage], context: grpc.ServicerContext
    ) -> Iterator[bot_pb2.RefereeMessage]:
        first = next(incoming, None)
        if first is not None and first.HasField("join"):
            self.joins.append(first.join)
        yield bot_pb2.RefereeMessage(welcome=bot_pb2.Welcome(match_id="m1", seat=0, table_id="t0", config=config_pb(),
                                                             protocol_version=1, hands_total=1))
        if self.ask_before_break:
            yield bot_pb2.RefereeMessage(action_request=self.requests[0] if self.requests else make_request())
            next(incoming, None)  # the bot's answer, lost with the stream
        context.abort(grpc.StatusCode.UNAVAILABLE, "keepalive watchdog timeout")

    def _play(
        self, incoming: Iterator[bot_pb2.BotMessage], context: grpc.ServicerContext
    ) -> Iterator[bot_pb2.RefereeMessage]:
        first = self._next(incoming)
        if first is not None and first.HasField("join"):
            self.joins.append(first.join)
        if first is None or not first.HasField("join") or first.join.token != self.token:
            yield bot_pb2.RefereeMessage(
                error=bot_pb2.Error(code=bot_pb2.ERROR_CODE_BAD_TOKEN, message="unknown token", fatal=True)
            )
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown token")
        config = config_pb()
        yield bot_pb2.RefereeMessage(
            welcome=bot_pb2.Welcome(
                match_id="m1",
                seat=0,
                table_id="t0",
                config=config,
                clock_policy=bot_pb2.ActionClockPolicy(
                    per_action_ms=1000, time_bank_ms=30_000, max_retries=2, max_violations=3
                ),
                protocol_version=1,
                hands_total=1,
            )
        )
        first_request = self.requests[0] if self.requests else make_request()
        yield bot_pb2.RefereeMessage(
            hand_start=bot_pb2.HandStart(
                table_id="t0",
                hand_id="m1-t0-h1",
                hand_number=1,
                button=0,
                seat=0,
                hole_cards=list(first_request.hole_cards),
                seats=list(first_request.seats),
            )
        )
        for index, request in enumerate(self.requests):
            exchange = Exchange(request)
            self.exchanges.append(exchange)
            yield bot_pb2.RefereeMessage(action_request=request)
            exchange.actions.append(self._action(incoming, request))
            if index == 0 and self.reject_first:
                yield bot_pb2.RefereeMessage(
                    action_rejected=bot_pb2.ActionRejected(
                        table_id=request.table_id,
                        hand_id=request.hand_id,
                        request_id=request.request_id,
                        rule="R7.2",
                        message="R7.2: rejected by the fake referee to test retries",
                        retries_left=1,
                    )
                )
                exchange.actions.append(self._action(incoming, request))
            if index == 0 and self.send_timeout_error:
                yield bot_pb2.RefereeMessage(
                    error=bot_pb2.Error(code=bot_pb2.ERROR_CODE_TIMEOUT, message="a warning, not fatal")
                )
        yield bot_pb2.RefereeMessage(
            hand_end=bot_pb2.HandEnd(
                table_id="t0",
                hand_id="m1-t0-h1",
                board=["Qh", "7c", "2d"],
                payoffs=[
                    poker_pb2.SeatPayoff(seat=0, net=-300, final_stack=9700),
                    poker_pb2.SeatPayoff(seat=1, net=300, final_stack=10300),
                ],
            )
        )
        yield bot_pb2.RefereeMessage(
            match_end=bot_pb2.MatchEnd(
                match_id="m1",
                reason=bot_pb2.MATCH_END_REASON_COMPLETED,
                message="all hands played",
                results=[
                    bot_pb2.BotResult(seat=0, name="me", net_chips=-300, hands_played=1, is_you=True),
                    bot_pb2.BotResult(seat=1, name="other", net_chips=300, hands_played=1),
                ],
            )
        )
        extra = self._next(incoming)  # the bot should now close its side of the stream
        if extra is not None:
            self.problems.append(f"message after MatchEnd: {extra}")
