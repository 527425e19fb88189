"""A bare gRPC ping-pong for ``bench_grpc``: an asyncio server side (in the benchmark's process) and a synchronous
client (run as its own process: ``python tests/bench/grpc_pingpong.py ADDRESS METHOD ANSWER_HEX``).

The service is defined with generic handlers and raw bytes (no .proto file): the server sends a payload the size
of a real ActionRequest, the client answers each one with a small Action-sized message, exactly as a bot would.
Two server methods:

``Bare``     one coroutine that awaits ``context.write`` and ``context.read`` in turn: the transport's ceiling.
``Pattern``  the referee's shape (arena.transport.bot_service / remote): an async-generator handler yielding from an
             ``asyncio.Queue``, a reader task resolving a future, and a driver task awaiting that future under
             ``asyncio.wait_for``, so each round trip hops between three coroutines as in a real match.

The client is written like arena_sdk.client: a ``queue.Queue`` feeding the request iterator, one thread reading
the response stream. It only imports grpc and the standard library, so its start-up is cheap.
"""

from __future__ import annotations

import asyncio
import json
import os
import queue
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import grpc

SERVICE = "arena.bench.PingPong"
METHODS = ("Bare", "Pattern")
HELLO = b"hello"
EOF = grpc.aio.EOF  # type: ignore[attr-defined]  # missing from grpc-stubs


def machine_busy_s() -> float | None:
    """CPU seconds all cores of the machine have spent busy since boot (Linux ``/proc/stat``), or None."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
        user, nice, system, _idle, _iowait, irq, softirq, steal = (int(v) for v in fields[1:9])
        return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError):
        return None


@dataclass(slots=True)
class PingPongStats:
    """What the server side measured: round trips after the first, over ``seconds``, using ``cpu_s`` of CPU in
    this process and ``machine_cpu_s`` on the whole machine (None where that cannot be read).
    """

    round_trips: int = 0
    seconds: float = 0.0
    cpu_s: float = 0.0
    machine_cpu_s: float | None = None


class PingPongService:
    """Server side: send ``payload``, await one answer, repeat for ``duration_s`` (the last call's figures win)."""

    def __init__(self, payload: bytes, duration_s: float) -> None:
        self.payload = payload
        self.duration_s = duration_s
        self.stats = PingPongStats()

    def handler(self) -> grpc.GenericRpcHandler[Any, Any]:
        """The generic handler to add to a ``grpc.aio.server``."""
        methods = {
            "Bare": grpc.stream_stream_rpc_method_handler(self.bare),
            "Pattern": grpc.stream_stream_rpc_method_handler(self.pattern),
        }
        return grpc.method_handlers_generic_handler(SERVICE, methods)

    def _record(self, count: int, started: float, cpu_started: float, machine_started: float | None) -> None:
        machine = machine_busy_s()
        self.stats = PingPongStats(
            count, time.perf_counter() - started, time.process_time() - cpu_started,
            None if machine is None or machine_started is None else machine - machine_started,
        )

    async def bare(self, request_iterator: Any, context: grpc.aio.ServicerContext[bytes, bytes]) -> None:
        if await context.read() != HELLO:
            return
        await context.write(self.payload)  # the first round trip (connection warm-up) is not counted
        if await context.read() is EOF:
            return
        count = 0
        started, cpu_started, machine_started = time.perf_counter(), time.process_time(), machine_busy_s()
        deadline = started + self.duration_s
        while time.perf_counter() < deadline:
            await context.write(self.payload)
            if await context.read() is EOF:
                break
            count += 1
        self._record(count, started, cpu_started, machine_started)

    async def pattern(
        self, request_iterator: AsyncIterator[bytes], context: grpc.aio.ServicerContext[bytes, bytes]
    ) -> AsyncIterator[bytes]:
        if await anext(request_iterator) != HELLO:
            return
        outbox: asyncio.Queue[bytes | None] = asyncio.Queue()
        pending: list[asyncio.Future[bytes]] = []

        async def read() -> None:  # like BotServicer._read -> RemoteSeat.deliver
            async for message in request_iterator:
                if pending and not pending[0].done():
                    pending[0].set_result(message)

        async def ask() -> bytes:  # like RemoteSeat.decide
            future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
            pending[:] = [future]
            outbox.put_nowait(self.payload)
            return await future

        async def drive() -> None:  # like TableRunner._decide, one request after another
            try:
                await asyncio.wait_for(ask(), 10.0)
                count = 0
                started, cpu_started, machine_started = time.perf_counter(), time.process_time(), machine_busy_s()
                deadline = started + self.duration_s
                while time.perf_counter() < deadline:
                    await asyncio.wait_for(ask(), 10.0)
                    count += 1
                self._record(count, started, cpu_started, machine_started)
            finally:
                outbox.put_nowait(None)

        reader = asyncio.create_task(read())
        driver = asyncio.create_task(drive())
        try:
            while (message := await outbox.get()) is not None:
                yield message
        finally:
            reader.cancel()
            driver.cancel()


def client(address: str, method: str, answer: bytes) -> dict[str, float]:
    """Answer every message on one stream with ``answer`` until the server ends it; return counts and the CPU
    used from the moment the channel was ready (start-up left out).
    """
    with grpc.insecure_channel(address) as channel:
        grpc.channel_ready_future(channel).result(timeout=10.0)
        cpu_started = time.process_time()
        call_method = channel.stream_stream(  # no serializers: raw bytes both ways
            f"/{SERVICE}/{method}", request_serializer=None, response_deserializer=None
        )
        outbox: queue.Queue[bytes | None] = queue.Queue()

        def outgoing() -> Iterator[bytes]:
            while (message := outbox.get()) is not None:
                yield message

        outbox.put(HELLO)
        received = 0
        started = time.perf_counter()
        try:
            for _message in call_method(outgoing()):
                received += 1
                outbox.put(answer)
        finally:
            outbox.put(None)
        seconds = time.perf_counter() - started
    return {"received": received, "seconds": seconds, "cpu_s": time.process_time() - cpu_started}


if __name__ == "__main__":
    address_arg, method_arg, answer_hex = sys.argv[1:4]
    print(json.dumps(client(address_arg, method_arg, bytes.fromhex(answer_hex))), flush=True)
