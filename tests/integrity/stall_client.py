"""The attacker of the stall tests, a process of its own: ``python -m tests.integrity.stall_client MODE ADDRESS ...``.

Modes (each prints ``READY {json}`` once its attack is under way, keeps it up until its standard input closes,
then prints ``DONE {json}``):

* ``watch ADDRESS MATCH N``: N WatchMatch calls at once over a few channels; the admitted ones read every event.
* ``joins ADDRESS CLIENTS STREAMS``: CLIENTS channels, each with STREAMS streams at a time that send a Join with a
  wrong token and start again as soon as they are answered, for ever.
* ``idle ADDRESS RAW CHANNELS``: RAW TCP connections that never send a byte, and CHANNELS gRPC connections that
  never make a call; DONE says how many of each the referee had closed, and after how long.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import time
from collections import Counter
from typing import Any

import grpc

from arena.transport.pb import arena_pb2, bot_pb2

WATCH = "/arena.v1.ArenaService/WatchMatch"
PLAY = "/arena.v1.BotService/Play"


def say(kind: str, data: dict[str, Any]) -> None:
    print(f"{kind} {json.dumps(data)}", flush=True)


async def until_stdin_closes() -> None:
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)


async def watch(address: str, match_id: str, attempts: int) -> None:
    channels = [grpc.aio.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)])
                for _ in range(max(1, attempts // 100))]
    outcomes: Counter[str] = Counter()
    events = 0
    first_seen: list[asyncio.Future[None]] = [asyncio.get_running_loop().create_future() for _ in range(attempts)]

    async def one(index: int) -> None:
        nonlocal events
        rpc = channels[index % len(channels)].unary_stream(
            WATCH, request_serializer=arena_pb2.WatchMatchRequest.SerializeToString, response_deserializer=None)
        call = rpc(arena_pb2.WatchMatchRequest(match_id=match_id))
        try:
            async for _ in call:
                if not first_seen[index].done():
                    outcomes["admitted"] += 1
                    first_seen[index].set_result(None)
                events += 1
        except grpc.aio.AioRpcError as exc:
            if not first_seen[index].done():
                outcomes[exc.code().name] += 1
                first_seen[index].set_result(None)
        if not first_seen[index].done():
            outcomes["ended"] += 1
            first_seen[index].set_result(None)

    started = time.monotonic()
    tasks = [asyncio.create_task(one(i)) for i in range(attempts)]
    await asyncio.gather(*first_seen)
    say("READY", {"outcomes": dict(outcomes), "seconds": round(time.monotonic() - started, 2)})
    await until_stdin_closes()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    say("DONE", {"outcomes": dict(outcomes), "events": events})
    for channel in channels:
        await channel.close(None)


async def joins(address: str, clients: int, streams: int) -> None:
    outcomes: Counter[str] = Counter()
    details: dict[str, str] = {}
    stop = asyncio.Event()
    join = bot_pb2.BotMessage(join=bot_pb2.Join(token="wrong-token", bot_name="flood", protocol_version=1))

    async def loop(channel: grpc.aio.Channel) -> None:
        rpc = channel.stream_stream(PLAY, request_serializer=bot_pb2.BotMessage.SerializeToString,
                                    response_deserializer=bot_pb2.RefereeMessage.FromString)
        while not stop.is_set():
            call = rpc(iter([join]))
            try:
                async for _ in call:
                    pass
                outcomes["ended"] += 1
            except grpc.aio.AioRpcError as exc:
                outcomes[exc.code().name] += 1
                details.setdefault(exc.code().name, (exc.details() or "")[:120])

    channels = [grpc.aio.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)])
                for _ in range(clients)]
    tasks = [asyncio.create_task(loop(c)) for c in channels for _ in range(streams)]
    await asyncio.sleep(1.0)
    say("READY", {"outcomes": dict(outcomes)})
    await until_stdin_closes()
    stop.set()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    say("DONE", {"outcomes": dict(outcomes), "attempts": sum(outcomes.values()), "details": details})
    for channel in channels:
        await channel.close(None)


async def idle(address: str, raw: int, channels: int) -> None:
    host, _, port = address.rpartition(":")
    sockets = []
    for _ in range(raw):
        s = socket.create_connection((host, int(port)))
        s.setblocking(False)
        sockets.append(s)
    grpc_channels = [grpc.aio.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)])
                     for _ in range(channels)]
    await asyncio.gather(*(c.channel_ready() for c in grpc_channels))
    started = time.monotonic()
    raw_closed: dict[int, float] = {}
    channel_closed: dict[int, float] = {}
    say("READY", {"raw": len(sockets), "channels": len(grpc_channels)})
    done = asyncio.create_task(until_stdin_closes())
    while not done.done():
        now = round(time.monotonic() - started, 2)
        for index, s in enumerate(sockets):
            if index in raw_closed:
                continue
            try:
                while data := s.recv(65536):  # the referee's SETTINGS and GOAWAY frames, then the end
                    del data
                raw_closed[index] = now
            except BlockingIOError:
                pass
            except OSError:
                raw_closed[index] = now
        for index, c in enumerate(grpc_channels):
            if index not in channel_closed and c.get_state() != grpc.ChannelConnectivity.READY:
                channel_closed[index] = now
        await asyncio.wait([done], timeout=0.1)
    say("DONE", {"raw_closed": len(raw_closed), "channels_closed": len(channel_closed),
                 "raw_closed_after_s": max(raw_closed.values(), default=None),
                 "channels_closed_after_s": max(channel_closed.values(), default=None)})
    for s in sockets:
        s.close()
    for c in grpc_channels:
        await c.close(None)


def main(argv: list[str]) -> None:
    mode, address, *rest = argv
    if mode == "watch":
        asyncio.run(watch(address, rest[0], int(rest[1])))
    elif mode == "joins":
        asyncio.run(joins(address, int(rest[0]), int(rest[1])))
    elif mode == "idle":
        asyncio.run(idle(address, int(rest[0]), int(rest[1])))
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main(sys.argv[1:])
