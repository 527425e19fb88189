"""The C++ bot server (``arena.transport._native_server``) shuts down promptly whatever its calls are doing: its
completion queue is shut down only once every call has come back to its polling thread, and an operation started on
a queue shut down would abort the process. Driven through the module itself, with grpcio clients on a Unix socket."""

from __future__ import annotations

import select
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from arena.transport import _native_server as native

METHOD = "/arena.v1.BotService/Play"
STREAMS = 4


def _messages(count: int, stop: threading.Event) -> Iterator[bytes]:
    for k in range(count):
        yield b"m%d" % k
    stop.wait(30)  # the bot's side stays open


@pytest.mark.parametrize("state", ["reading", "paused", "finished", "cancelled", "writing"])
def test_the_server_shuts_down_promptly_whatever_its_calls_are_doing(tmp_path: Path, state: str) -> None:
    """reading: a read waits; paused: past UNTAKEN_MOST messages untaken, reads stopped; finished: Python finished
    the call as it opened; cancelled: Python cancelled it with writes queued; writing: megabytes queued for a bot
    that does not read. Beside each, calls to another method (refused). Every opened stream ends with DONE."""
    address = f"unix:{tmp_path / 'bots.sock'}"
    server = native.Server(address, METHOD, [])
    channel = grpc.insecure_channel(address)
    stop = threading.Event()
    play = channel.stream_stream(METHOD)
    other = channel.stream_stream("/arena.v1.Other/Method")
    calls = [play(_messages(native.UNTAKEN_MOST + 20 if state == "paused" else 1, stop)) for _ in range(STREAMS)]
    refused = [other(iter([b"x"])) for _ in range(2)]
    opened: set[int] = set()
    ended: set[int] = set()
    deadline = time.monotonic() + 10
    while (len(opened) < STREAMS or state == "paused") and time.monotonic() < deadline:
        ready, _, _ = select.select([server.fd], [], [], 0.05)
        if not ready:
            if state == "paused" and len(opened) == STREAMS:
                break  # nothing more comes: every stream waits for its messages to be taken
            continue
        for kind, stream, _ in server.take():  # never ``handled``: the paused streams stay paused
            if kind == native.DONE:
                ended.add(stream)
            if kind != native.OPENED:
                continue
            opened.add(stream)
            if state == "finished":
                server.finish(stream, 0, "")
            elif state == "cancelled":
                for _ in range(50):
                    server.write(stream, b"x" * 10_000)
                server.cancel(stream)
            elif state == "writing":
                for _ in range(100):
                    server.write(stream, b"x" * 60_000)
    assert len(opened) == STREAMS
    for call in refused:
        with pytest.raises(grpc.RpcError) as refusal:
            next(call)
        assert refusal.value.code() == grpc.StatusCode.UNIMPLEMENTED

    done = threading.Event()
    threading.Thread(target=lambda: (server.shutdown(0), done.set()), daemon=True).start()
    try:
        assert done.wait(5), "the server's shutdown did not return"
        ended |= {stream for kind, stream, _ in server.take() if kind == native.DONE}
        assert opened <= ended
    finally:
        stop.set()
        for call in calls:
            call.cancel()
        channel.close()
