"""``Session``: one gRPC stream with the referee, played to its end on grpc.aio, in one thread. A reader task reads
the referee's messages ahead; the session hands them to the dispatch (``arena_sdk.dispatch``) one at a time, in
order, and writes the bot's answers on the same stream. Messages that arrived while the bot was busy are handled
before the answers are written, and all their answers go in one ActionBatch (up to ``_MERGE_MESSAGES`` messages or
``_MERGE_S`` seconds): a bot on many tables sends fewer, larger messages, and the referee, playing more tables on
each, sends fewer and larger batches."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from typing import Any

import grpc

from arena_sdk.bot import Bot
from arena_sdk.dispatch import Dispatch
from arena_sdk.pb import bot_pb2, bot_pb2_grpc
from arena_sdk.reconnect import worth_a_new_stream
from arena_sdk.results import MatchResult

__all__ = ["Session"]

_EOF = grpc.aio.EOF  # type: ignore[attr-defined]  # what read() returns once the referee ended the stream
# Messages that are already here are handled before the answers are written, all in one ActionBatch: at most
_MERGE_MESSAGES = 16  # messages,
_MERGE_S = 0.005  # or this long since the last write, so that a slow bot's first answers do not wait for the rest
_DRAIN_TIMEOUT_S = 2.0  # after MatchEnd or a fatal Error, how long to wait for the referee to end the stream


class Session(Dispatch):
    """One stream: the referee's messages in, the bot's hooks called, Actions out. A match's stream ends with its
    MatchEnd; a league's (``league``) plays match after match until the host ends it."""

    def __init__(self, bot: Bot, join: bot_pb2.Join, league: bool = False, match_id: str = "",
                 broke_at: float | None = None) -> None:
        super().__init__(bot, join, league, match_id, broke_at)
        self.broken: str | None = None  # why a match's stream broke before its MatchEnd, if a new one may help
        self._handled = 0  # messages handled since the last write

    async def play(self, channel: grpc.aio.Channel) -> MatchResult:
        """The stream played to its end. A reader task reads ahead, so that the messages that came while the bot was
        busy are handled together and their answers go back in one write (one ActionBatch): fewer, larger messages
        both ways, at no cost to an answer's time (it only waited for messages that were already here)."""
        stub: Any = bot_pb2_grpc.BotServiceStub(channel)  # grpc.aio's stub: its stubs type the synchronous one
        call = stub.Play()
        inbox: deque[Any] = deque()  # messages read ahead, then _EOF or the RpcError that ended the stream
        arrived = asyncio.Event()

        async def read_ahead() -> None:
            try:
                while (msg := await call.read()) is not _EOF:
                    inbox.append(msg)
                    arrived.set()
            except grpc.RpcError as e:
                inbox.append(e)
            else:
                inbox.append(_EOF)
            arrived.set()

        loop = asyncio.get_running_loop()
        drain_until: float | None = None  # after MatchEnd or a fatal Error: how long the referee has to end it
        writable = await self._write(call, bot_pb2.BotMessage(join=self.join))
        reader = asyncio.ensure_future(read_ahead())
        since_write = time.perf_counter()
        try:
            while True:
                if not inbox:
                    arrived.clear()
                    if drain_until is None:
                        await arrived.wait()
                    else:
                        try:
                            await asyncio.wait_for(arrived.wait(), max(0.0, drain_until - loop.time()))
                        except TimeoutError:
                            break
                msg = inbox.popleft()
                if msg is _EOF:
                    break
                if isinstance(msg, grpc.RpcError):
                    self._broke(msg)
                    break
                if (later := self.handle(msg)) is not None:
                    await later
                self._handled += 1
                if inbox and inbox[0] is not _EOF and self._handled < _MERGE_MESSAGES and \
                        time.perf_counter() - since_write < _MERGE_S:
                    continue  # more is here already: answer it with this
                self._handled = 0
                since_write = time.perf_counter()
                if writable and not self.outbox.empty():
                    writable = await self._write(call, self._merged_answers())
                if self.league and self.fatal is None:
                    continue  # a league's stream stays open across matches
                if self.result is not None and drain_until is None:
                    if writable:
                        writable = False
                        with contextlib.suppress(grpc.RpcError, asyncio.InvalidStateError):
                            await call.done_writing()  # half-close: we have nothing more to say
                    drain_until = loop.time() + _DRAIN_TIMEOUT_S
        finally:
            reader.cancel()
            if not call.done():
                call.cancel()
        if self.league:
            if self.result is None or (self.fatal is None and self.result.ok):
                self.result = MatchResult.failed("the host ended the league's stream", self.match_id)
            return self.result
        if self.result is None:
            self.result = MatchResult.failed("the referee ended the stream before MatchEnd", self.match_id)
        return self.result

    def _merged_answers(self) -> bot_pb2.BotMessage:
        """What the outbox holds, as one message: the answer alone, or every Action of them in one ActionBatch."""
        answers = []
        while not self.outbox.empty():
            answers.append(self.outbox.get_nowait())
        if len(answers) == 1:
            return answers[0]
        merged = bot_pb2.BotMessage()
        actions = merged.actions.actions
        for answer in answers:
            if answer.WhichOneof("msg") == "action":
                actions.append(answer.action)
            else:
                actions.extend(answer.actions.actions)
        return merged

    @staticmethod
    async def _write(call: Any, msg: bot_pb2.BotMessage) -> bool:
        """Write ``msg``; False once the stream takes no more (it ended: the reader hears how)."""
        try:
            await call.write(msg)
        except (grpc.RpcError, asyncio.InvalidStateError):
            return False
        return True

    def _broke(self, e: grpc.RpcError) -> None:
        """Note why the stream ended with an error, and whether a new stream may play on."""
        why = f"{e.code().name}: {e.details() or ''}".rstrip(": ")
        if self.league and self.fatal is None:
            self.result = MatchResult.failed(f"the league's stream broke: {why}", self.match_id)
        elif not self.league and not self.matches and self.fatal is None and worth_a_new_stream(e.code()):
            self.broken = why  # no MatchEnd, no fatal Error (a rate limit's is not): a new stream may play on
            if self.result is None:
                self.result = MatchResult.failed(f"the stream broke before MatchEnd: {why}", self.match_id)
        elif self.result is None:
            self.result = MatchResult.failed(f"the stream broke before MatchEnd: {why}", self.match_id)
