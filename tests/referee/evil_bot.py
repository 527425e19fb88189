"""A bot process for integration tests that misbehaves on purpose (``EVIL_MODE``), speaking raw gRPC.

Every RefereeMessage it receives is printed to standard output as one line ``EVIL {json}`` (the runner keeps a
bot's output in its log file), so a test can check what the referee said. Modes: good (check/call), timeout,
crash, crash_slowly (closes its stream, then exits with status 3 ``EVIL_EXIT_DELAY_S`` later, as a bot whose
teardown is slow), reconnect, garbage, unknown, out_of_turn, negative,
huge, illegal_always, bad_token, steal_token (joins with ``EVIL_OTHER_TOKEN``), flood, flood_batch (its answer and
2,000 copies in one ActionBatch, within the 64 KiB a message may hold), silent (never joins), fold_always.
"""

from __future__ import annotations

import json
import os
import queue
import sys
import time
from collections.abc import Iterator

import grpc
from google.protobuf import json_format

from arena_sdk.pb import bot_pb2, poker_pb2

MODE = os.environ.get("EVIL_MODE", "good")
ADDRESS = os.environ["ARENA_ADDRESS"]
TOKEN = os.environ["ARENA_TOKEN"]
AFTER = int(os.environ.get("EVIL_AFTER", "3"))  # how many good actions before misbehaving (crash, reconnect)
END = object()
REFUSED_LINGER_S = 3.0  # bad_token: how long the refused bot stays before it exits


def record(entry: dict[str, object]) -> None:
    print("EVIL " + json.dumps(entry), flush=True)


def log(message: bot_pb2.RefereeMessage) -> None:
    record(json_format.MessageToDict(message))


def answer(request: bot_pb2.ActionRequest, kind: int, amount: int = 0, request_id: int | None = None) -> bytes:
    action = poker_pb2.Action(
        table_id=request.table_id, hand_id=request.hand_id,
        request_id=request.request_id if request_id is None else request_id, kind=kind, amount=amount,  # type: ignore[arg-type]
    )
    return bot_pb2.BotMessage(action=action).SerializeToString()


def safe(request: bot_pb2.ActionRequest) -> bytes:
    legal = request.legal
    kind = poker_pb2.ACTION_KIND_CHECK if legal.can_check else poker_pb2.ACTION_KIND_CALL
    return answer(request, kind)


def join(token: str) -> bytes:
    message = bot_pb2.BotMessage(join=bot_pb2.Join(token=token, bot_name=f"evil-{MODE}", bot_version="0",
                                                   protocol_version=1, language="python"))
    return message.SerializeToString()


def session(token: str, outbox: queue.Queue[object], first: list[bytes]) -> Iterator[bot_pb2.RefereeMessage]:
    """One stream: raw bytes out (so garbage can be sent), parsed RefereeMessages in."""
    channel = grpc.insecure_channel(ADDRESS)
    call = channel.stream_stream(
        "/arena.v1.BotService/Play",
        request_serializer=lambda b: b,
        response_deserializer=bot_pb2.RefereeMessage.FromString,
    )

    def requests() -> Iterator[bytes]:
        yield from first
        while True:
            item = outbox.get()
            if item is END:
                return
            assert isinstance(item, bytes)
            yield item

    return call(requests())  # type: ignore[no-any-return]


def main() -> int:
    token = os.environ.get("EVIL_OTHER_TOKEN", TOKEN) if MODE == "steal_token" else TOKEN
    if MODE == "bad_token":
        token = "not-a-token"
    if MODE == "silent":
        time.sleep(30)
        return 0
    first = [join(token)]
    # garbage and unknown messages go out once the referee has welcomed the bot (sent together with the Join, gRPC
    # may read both before the Join is handled, and the bot would never have joined)
    after_welcome = {
        "garbage": b"\xff\xfe\x00garbage that is not a protobuf message\x13\x37",
        "unknown": b"\xfa\x06\x03abc",  # field 111, a message type this protocol does not have
    }.get(MODE)
    outbox: queue.Queue[object] = queue.Queue()
    good = 0
    reconnected = False
    pending = bot_pb2.ActionRequest()
    try:
        responses = session(token, outbox, first)
        while True:
            for message in responses:
                log(message)
                kind = message.WhichOneof("msg")
                if kind == "welcome" and after_welcome is not None:
                    outbox.put(after_welcome)
                    after_welcome = None
                if kind == "match_end":
                    outbox.put(END)
                    return 0
                if kind == "action_rejected":
                    outbox.put(safe(pending) if MODE not in ("illegal_always",) else
                               answer(pending, poker_pb2.ACTION_KIND_RAISE, -1))
                    continue
                if kind != "action_request":
                    continue
                request = pending = message.action_request
                if MODE == "timeout":
                    time.sleep(0.6)  # longer than the test's clock; the late answer must be ignored safely
                    outbox.put(safe(request))
                elif MODE == "crash" and good >= AFTER:
                    os._exit(3)
                elif MODE == "crash_slowly" and good >= AFTER:
                    outbox.put(END)
                    responses.cancel()  # type: ignore[attr-defined]
                    time.sleep(float(os.environ.get("EVIL_EXIT_DELAY_S", "1.5")))
                    os._exit(3)
                elif MODE == "reconnect" and good == AFTER and not reconnected:
                    reconnected = True
                    outbox.put(END)
                    responses.cancel()  # type: ignore[attr-defined]
                    break
                elif MODE == "out_of_turn":
                    outbox.put(answer(request, poker_pb2.ACTION_KIND_CALL, request_id=request.request_id + 1000))
                    outbox.put(safe(request))
                    outbox.put(safe(request))  # a second answer to a closed request
                elif MODE == "negative":
                    outbox.put(answer(request, poker_pb2.ACTION_KIND_RAISE, -500))
                elif MODE == "huge":
                    outbox.put(answer(request, poker_pb2.ACTION_KIND_RAISE, 10**15))
                elif MODE == "illegal_always":
                    outbox.put(answer(request, poker_pb2.ACTION_KIND_UNSPECIFIED))
                elif MODE == "fold_always":
                    outbox.put(answer(request, poker_pb2.ACTION_KIND_FOLD))
                elif MODE == "flood":
                    for _ in range(5000):
                        outbox.put(safe(request))
                elif MODE == "flood_batch":
                    one = bot_pb2.BotMessage.FromString(safe(request)).action
                    batch = bot_pb2.ActionBatch(actions=[one] * 2001)
                    outbox.put(bot_pb2.BotMessage(actions=batch).SerializeToString())
                else:
                    outbox.put(safe(request))
                good += 1
            else:
                return 0
            time.sleep(0.2)
            outbox = queue.Queue()
            responses = session(TOKEN, outbox, [join(TOKEN)])
    except grpc.RpcError as exc:
        print(f"stream ended: {exc.code()} {exc.details()}", file=sys.stderr)  # type: ignore[attr-defined]
        record({"status": str(exc.code()), "details": exc.details()})  # type: ignore[attr-defined]
        if MODE == "bad_token":  # stay a while: the referee would end the wait when this process ends, maybe
            time.sleep(REFUSED_LINGER_S)  # before the good bot (started with it, as slow to start) had joined
        return 1


if __name__ == "__main__":
    sys.exit(main())
