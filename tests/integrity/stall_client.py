"""The attacker of the stall tests, a process of its own: ``python -m tests.integrity.stall_client MODE ADDRESS ...``.

Modes (each prints ``READY {json}`` once its attack is under way, keeps it up until its standard input closes,
then prints ``DONE {json}``):

* ``watch ADDRESS MATCH N``: N WatchMatch calls at once over a few channels; the admitted ones read every event.
  READY once every call is admitted or refused, or after ``WATCH_READY_S`` (refusals come in turn): ``waiting``
  counts those not answered yet.
* ``joins ADDRESS CLIENTS STREAMS``: CLIENTS channels, each with STREAMS streams at a time that send a Join with a
  wrong token and start again as soon as they are answered, for ever.
* ``idle ADDRESS RAW CHANNELS [reopen]``: RAW TCP connections that never send a byte, and CHANNELS gRPC connections
  that never make a call; with ``reopen``, each one the referee closes is opened again (a persistent attacker).
  READY once all are open, or the bare ones and ``IDLE_READY_S`` more have passed; DONE says how many the
  referee closed (that this process, niced, noticed before it stopped), and how long the longest-lived had lasted.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections import Counter
from typing import Any

import grpc

from arena_sdk.pb import arena_pb2, bot_pb2

WATCH = "/arena.v1.ArenaService/WatchMatch"
WATCH_READY_S = 3.0
RAW_READY_S = 30.0  # the bare connections are all open by then, however loaded the machine (this process is niced)
IDLE_READY_S = 2.0  # then a referee whose cap is full accepts no more channels: READY says how many opened by then
REOPEN_S = 0.05  # a persistent attacker opens a closed connection again after this (0.5 s if it was refused at once)
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
    await asyncio.wait(first_seen, timeout=WATCH_READY_S)
    waiting = sum(1 for f in first_seen if not f.done())
    say("READY", {"outcomes": dict(outcomes), "waiting": waiting, "seconds": round(time.monotonic() - started, 2)})
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
    started = time.monotonic()
    tasks = [asyncio.create_task(loop(c)) for c in channels for _ in range(streams)]
    await asyncio.sleep(1.0)
    say("READY", {"outcomes": dict(outcomes)})
    await until_stdin_closes()
    stop.set()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    say("DONE", {"outcomes": dict(outcomes), "attempts": sum(outcomes.values()), "details": details,
                 "seconds": round(time.monotonic() - started, 2)})
    for channel in channels:
        await channel.close(None)


async def idle(address: str, raw: int, channels: int, reopen: bool) -> None:
    host, _, port = address.rpartition(":")
    stop = asyncio.Event()
    lifetimes: dict[str, list[float]] = {"raw": [], "channels": []}  # of the connections the referee closed
    first_open = [asyncio.get_running_loop().create_future() for _ in range(raw + channels)]
    stopped = asyncio.ensure_future(stop.wait())  # one future every wait below also ends on

    def opened(index: int) -> None:
        if not first_open[index].done():
            first_open[index].set_result(None)

    async def pause(lifetime: float) -> None:
        await asyncio.wait([stopped], timeout=REOPEN_S if lifetime > 0.1 else 0.5)

    async def hold_raw(index: int) -> None:
        while not stop.is_set():
            try:
                reader, writer = await asyncio.open_connection(host, int(port))
            except OSError:
                await pause(0.0)
                continue
            started = time.monotonic()
            opened(index)
            reading = asyncio.create_task(drain(reader))
            await asyncio.wait([reading, stopped], return_when=asyncio.FIRST_COMPLETED)
            writer.close()
            if not reading.done():
                reading.cancel()
                return
            lifetimes["raw"].append(time.monotonic() - started)
            if not reopen:
                return
            await pause(time.monotonic() - started)

    async def hold_channel(index: int) -> None:
        while not stop.is_set():
            channel = grpc.aio.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)])
            try:
                ready = asyncio.create_task(channel.channel_ready())
                await asyncio.wait([ready, stopped], return_when=asyncio.FIRST_COMPLETED)
                if not ready.done():
                    ready.cancel()
                    return
                started = time.monotonic()
                opened(index)
                change = asyncio.create_task(channel.wait_for_state_change(grpc.ChannelConnectivity.READY))
                await asyncio.wait([change, stopped], return_when=asyncio.FIRST_COMPLETED)
                if not change.done():
                    change.cancel()
                    return
                lifetimes["channels"].append(time.monotonic() - started)
            finally:
                await channel.close(None)
            if not reopen:
                return
            await pause(time.monotonic() - started)

    tasks = [asyncio.create_task(hold_raw(i)) for i in range(raw)]
    tasks += [asyncio.create_task(hold_channel(raw + i)) for i in range(channels)]
    await asyncio.wait(first_open[:raw], timeout=RAW_READY_S)  # bare TCP connects even when gRPC refuses it next
    await asyncio.wait(first_open, timeout=IDLE_READY_S)
    say("READY", {"raw": raw, "channels": channels, "opened": sum(f.done() for f in first_open)})
    await until_stdin_closes()
    stop.set()
    await asyncio.gather(*tasks, return_exceptions=True)
    say("DONE", {"raw_closed": len(lifetimes["raw"]), "channels_closed": len(lifetimes["channels"]),
                 "raw_longest_s": round(max(lifetimes["raw"], default=0.0), 2),
                 "channels_longest_s": round(max(lifetimes["channels"], default=0.0), 2)})


async def drain(reader: asyncio.StreamReader) -> None:
    """Read what the referee sends (its SETTINGS, a GOAWAY) until it closes the connection."""
    try:
        while await reader.read(65536):
            pass
    except OSError:
        pass


def main(argv: list[str]) -> None:
    mode, address, *rest = argv
    if mode == "watch":
        asyncio.run(watch(address, rest[0], int(rest[1])))
    elif mode == "joins":
        asyncio.run(joins(address, int(rest[0]), int(rest[1])))
    elif mode == "idle":
        asyncio.run(idle(address, int(rest[0]), int(rest[1]), rest[2:] == ["reopen"]))
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main(sys.argv[1:])
