"""What the transport alone allows at one table: a server that does nothing but ask, over real gRPC on 127.0.0.1,
answered by the C++ sample bot (``--strategy call``), beside the ACPC dealer's figures. Three servers: grpc.aio (the
referee's transport: one coroutine per stream awaiting ``write`` then ``read``), the C++ server the referee can serve
its local socket with (``arena.transport._native_server``, ``ARENA_BOT_SERVER=native``: libgrpc++ polled by one thread,
Python answering each Action from the loop) and gRPC's C++ synchronous server (``transport_server.cpp``, compiled here
with the sample bot's generated code; skipped without it). Each asks ``DECISIONS`` requests, to one bot (ping-pong on
one stream) or to two bots in turn (one request open at a time, as at one heads-up table), all from one coroutine or
thread (nothing is handed between them), and times them from the first request to the last answer.

The referee's one-table row (``bench_decisions``) cannot go faster than its transport's two-bot figure; the
one-table goal of issue 27 (0.5× the ACPC dealer's decisions/s, aiming at 1×) needs a transport whose two-bot
figure is above it. Prints a table; never asserts. Run it alone with
``python -c "from tests.bench.bench_transport import main; main()"``.
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.bench.bench_decisions import ACPC_DECISIONS_S, CPP_BOT

DECISIONS = 20_000
ROOT = Path(__file__).resolve().parents[2]
GENERATED = ROOT / "sample_bots" / "cpp" / "build" / "gen"
SERVER_SOURCE = Path(__file__).resolve().parent / "transport_server.cpp"
WAIT_S = 120.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def build_cpp_server(folder: Path) -> Path | None:
    """``transport_server.cpp`` compiled against the sample bot's generated protocol code, or None (and why)."""
    sources = [GENERATED / "arena" / "v1" / name for name in ("bot.pb.cc", "poker.pb.cc", "bot.grpc.pb.cc")]
    if shutil.which("g++") is None or shutil.which("pkg-config") is None or not all(p.exists() for p in sources):
        print("(no C++ server row: g++, pkg-config or the C++ sample bot's generated code is missing; "
              "`make install` builds the bot)")
        return None
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "grpc++", "protobuf"], capture_output=True, text=True)
    if flags.returncode != 0:
        print(f"(no C++ server row: pkg-config found no grpc++: {flags.stderr.strip()})")
        return None
    binary = folder / "transport_server"
    built = subprocess.run(["g++", "-O2", "-std=c++17", f"-I{GENERATED}", str(SERVER_SOURCE), *map(str, sources),
                            "-o", str(binary), *shlex.split(flags.stdout), "-lpthread"], capture_output=True, text=True)
    if built.returncode != 0:
        print(f"(no C++ server row: the build failed: {built.stderr.strip()[-400:]})")
        return None
    return binary


def aio_server(port: int, total: int, players: int) -> None:
    """The grpc.aio server (run in a process of its own: ``python -m tests.bench.bench_transport PORT N PLAYERS``):
    the last bot to join drives every stream from its handler's coroutine, awaiting each request's ``write`` and its
    answer's ``read`` in turn (the others' handlers wait for the end). gRPC is loaded as the referee loads it
    (``arena_sdk.grpc_tuning``)."""
    from arena_sdk.grpc_tuning import import_grpc

    import_grpc()
    import grpc

    from arena_sdk.pb import bot_pb2, poker_pb2

    async def serve() -> None:
        contexts: list[grpc.aio.ServicerContext[bytes, bytes]] = []
        over = asyncio.Event()

        async def drive() -> None:
            message = bot_pb2.RefereeMessage(action_request=bot_pb2.ActionRequest(
                table_id="t", hand_id="h", hole_cards=["As", "Kd"],
                legal=poker_pb2.LegalActions(can_fold=True, can_call=True, call_amount=50)))
            request = message.action_request
            started = time.perf_counter()
            for asked in range(1, total + 1):
                context = contexts[(asked - 1) % players]
                request.seat = (asked - 1) % players
                request.request_id = asked
                await context.write(message.SerializeToString())
                await context.read()
            print(total, time.perf_counter() - started, flush=True)

        async def play(requests: object, context: grpc.aio.ServicerContext[bytes, bytes]) -> None:
            await context.read()  # the Join
            welcome = bot_pb2.Welcome(match_id="ceiling", seat=len(contexts), table_id="t", protocol_version=1,
                                      tables=1, hands_total=10**6)
            await context.write(bot_pb2.RefereeMessage(welcome=welcome).SerializeToString())
            contexts.append(context)
            if len(contexts) == players:
                await drive()
                over.set()
            else:
                await over.wait()

        server = grpc.aio.server()
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("arena.v1.BotService", {
            "Play": grpc.stream_stream_rpc_method_handler(play, response_serializer=bytes)}),))
        server.add_insecure_port(f"127.0.0.1:{port}")
        await server.start()
        await server.wait_for_termination()

    asyncio.run(serve())


def native_server(port: int, total: int, players: int) -> None:
    """The C++ server the referee can serve its local socket with (``arena.transport._native_server``, run in a
    process of its own: ``python -m tests.bench.bench_transport native PORT N PLAYERS``): libgrpc++'s threads read
    and write, and the asyncio loop, woken through the server's eventfd, answers each Action with the next request
    from one callback, as the referee's fast path does (no task per message)."""
    from arena_sdk.grpc_tuning import import_grpc

    import_grpc()
    from arena.transport import _native_server as native
    from arena_sdk.pb import bot_pb2, poker_pb2

    async def serve() -> None:
        server = native.Server(f"127.0.0.1:{port}", "/arena.v1.BotService/Play", [])
        loop = asyncio.get_running_loop()
        over = loop.create_future()
        streams: list[int] = []
        message = bot_pb2.RefereeMessage(action_request=bot_pb2.ActionRequest(
            table_id="t", hand_id="h", hole_cards=["As", "Kd"],
            legal=poker_pb2.LegalActions(can_fold=True, can_call=True, call_amount=50)))
        request = message.action_request
        asked = 0
        started = 0.0

        def ask() -> None:
            nonlocal asked
            asked += 1
            if asked > total:
                print(total, time.perf_counter() - started, flush=True)
                over.set_result(None)
                return
            request.seat = (asked - 1) % players
            request.request_id = asked
            server.write(streams[(asked - 1) % players], message.SerializeToString())

        def events() -> None:
            nonlocal started
            for kind, stream, payload in server.take():
                if kind != native.MESSAGE or over.done():
                    continue
                assert isinstance(payload, bytes)
                if bot_pb2.BotMessage.FromString(payload).WhichOneof("msg") != "join":
                    ask()
                    continue
                welcome = bot_pb2.Welcome(match_id="ceiling", seat=len(streams), table_id="t", protocol_version=1,
                                          tables=1, hands_total=10**6)
                server.write(stream, bot_pb2.RefereeMessage(welcome=welcome).SerializeToString())
                streams.append(stream)
                if len(streams) == players:
                    started = time.perf_counter()
                    ask()
            server.handled()  # the streams are read on (past UNTAKEN_MOST unhandled messages they wait)

        loop.add_reader(server.fd, events)
        await over
        loop.remove_reader(server.fd)
        server.shutdown(0)

    asyncio.run(serve())


def measure(server: list[str], players: int) -> float | None:
    """Decisions a second that ``server`` (a command taking PORT N PLAYERS) gets from ``players`` C++ bots."""
    port = free_port()
    procs: list[subprocess.Popen[str]] = [subprocess.Popen(
        [*server, str(port), str(DECISIONS), "two" if players == 2 else "one"], stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, text=True)]
    try:
        time.sleep(1.0)  # the server listens
        for k in range(players):
            procs.append(subprocess.Popen([str(CPP_BOT), "--address", f"127.0.0.1:{port}", "--token", f"bot{k}",
                                           "--strategy", "call", "--no-reconnect"],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True))
        stdout = procs[0].stdout
        assert stdout is not None
        line = ""
        deadline = time.monotonic() + WAIT_S
        while not line and time.monotonic() < deadline and procs[0].poll() is None:
            line = stdout.readline().strip()
        if not line:
            return None
        asked, seconds = line.split()
        return int(asked) / float(seconds)
    finally:
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            proc.wait()


def main() -> None:
    if not CPP_BOT.exists():
        print(f"(no rows: {CPP_BOT.relative_to(ROOT)} is missing; `make install` builds it)")
        return
    low, high = ACPC_DECISIONS_S
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as folder:
        module = [sys.executable, "-m", "tests.bench.bench_transport"]
        servers = {"grpc.aio (the referee's)": module}
        if native_server_available():
            servers["libgrpc++ in Python (native)"] = [*module, "native"]
        binary = build_cpp_server(Path(folder))
        if binary is not None:
            servers["gRPC C++ synchronous"] = [str(binary)]
        print(f"a server that only asks, {DECISIONS:,} requests, C++ sample bots (--strategy call), 127.0.0.1")
        print(f"{'server':<28} {'bots':>5} {'decisions/s':>12} {'× ACPC (high-low)':>18}")
        for name, command in servers.items():
            for players in (1, 2):
                rate = measure(command, players)
                figure = f"{rate:>12,.0f} {rate / high:>8.2f}-{rate / low:.2f}" if rate else f"{'failed':>12}"
                print(f"{name:<28} {players:>5} {figure}")
    if not native_server_available():
        print("(no native row: arena.transport._native_server was not built; `make install` builds it)")
    print(f"ACPC dealer (recorded): {low:,.0f}-{high:,.0f} decisions/s; issue 27's one-table goal: ≥ 0.5× (aim 1×), "
          "which a referee reaches only on a transport whose two-bot figure is above it")


def native_server_available() -> bool:
    from arena.transport import native_server

    return native_server.available()


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "native":
        native_server(int(sys.argv[2]), int(sys.argv[3]), 2 if sys.argv[4] == "two" else 1)
    elif len(sys.argv) == 4:
        aio_server(int(sys.argv[1]), int(sys.argv[2]), 2 if sys.argv[3] == "two" else 1)
    else:
        main()
