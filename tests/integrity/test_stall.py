"""Stall attacks on a running referee: spectators, failed Joins, idle connections, a silent network cut, and the
referee's own delay under load. Real processes, real gRPC: two calling stations play while an attacker process
(tests/integrity/stall_client.py) does its worst over TCP.

Throughput is measured the same way with and without the attack, in alternating runs (this machine has 2 cores and
neighbours): hands per second from the first finished hand to the last. Each of ``PAIRS`` attacked runs is compared
with the mean of the unattacked runs just before and after it, and the median of those shares must be at least 80%;
no honest bot may get a violation. When the first ``PAIRS`` miss the bar, up to ``MORE_PAIRS`` more are played and
the median of all of them decides: a real cost shows in every pair, a neighbour's burst in one or two (a clean CI run
once measured 74%, 75% and 103% for an attack that keeps 87-111% alone and 98-105% over 1,000-hand runs). The
attacker runs at the lowest CPU priority: it stands for a machine of its own, so its own work must not count against
the referee. This machine is a virtual one whose host takes its CPUs away at times (seen: 50-70% of the time
"stolen", the day a CI run's attacked runs kept 38% to 159%): the seconds a run is timed by are those the machine had,
its wall time less the share the host stole meanwhile (``/proc/stat``), so the host's load cancels out; an attack
that costs the referee CPU, or stalls its loop, costs these seconds as well.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest

from arena.referee import ClockPolicy, MatchResult, MatchSpec, MatchStatus
from arena.runner.bots import BotProcess, BotSpec
from arena.runner.remote_match import (
    MatchSetup,
    lanes_for,
    launch,
    play,
    play_watched,
    prepare_match,
    run_local_match,
)
from arena.runner.sandbox import SandboxPolicy, check_sandbox
from arena.transport.pb import bot_pb2, poker_pb2
from arena.transport.server import ServerLimits
from tests.integrity.harness import CALLER, REPO, SAMPLES

pytestmark = pytest.mark.timeout(180)

HANDS = 300
PAIRS = 3
MORE_PAIRS = 4
KEEP = 0.8
POLICY = ClockPolicy(per_action_ms=2000, time_bank_ms=0, max_violations=0, connect_timeout_ms=15000)


@dataclass(slots=True)
class Run:
    """One measured match."""

    result: MatchResult
    hands_per_s: float  # per second the machine had (wall time less what the host stole)
    ready: dict[str, Any] = field(default_factory=dict)  # the attacker's report once its attack was under way
    done: dict[str, Any] = field(default_factory=dict)  # and at the end
    stolen: float = 0.0  # the share of the machine's CPU time the host took while the hands were timed


class Attacker:
    """``python -m tests.integrity.stall_client MODE ADDRESS ARGS``, niced, stopped by closing its stdin."""

    def __init__(self, mode: str, args: Sequence[str]) -> None:
        self.mode = mode
        self.args = list(args)
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self, address: str) -> dict[str, Any]:
        self.proc = await asyncio.create_subprocess_exec(
            "nice", "-n", "19", sys.executable, "-m", "tests.integrity.stall_client", self.mode, address, *self.args,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, cwd=REPO)
        return await self._line("READY")

    async def _line(self, kind: str) -> dict[str, Any]:
        assert self.proc is not None and self.proc.stdout is not None
        line = (await asyncio.wait_for(self.proc.stdout.readline(), 60)).decode()
        assert line.startswith(kind + " "), line
        data: dict[str, Any] = json.loads(line[len(kind) + 1:])
        return data

    async def stop(self) -> dict[str, Any]:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            return await self._line("DONE")
        finally:
            try:
                await asyncio.wait_for(self.proc.wait(), 20)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    self.proc.kill()
                await self.proc.wait()


async def remote_bots(setup: MatchSetup) -> list[asyncio.subprocess.Process]:
    """Calling stations that connect over TCP, as remote bots do (unsandboxed: a sandbox has no network)."""
    processes = []
    for lane in setup.lanes:
        for seat in lane:
            env = {**os.environ, "ARENA_ADDRESS": setup.server.address, "ARENA_TOKEN": seat.token,
                   "ARENA_BOT_NAME": seat.name}
            processes.append(await asyncio.create_subprocess_exec(
                sys.executable, str(SAMPLES / "calling_station.py"), env=env, stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL))
    return processes


async def measured(attack: Attacker | None, limits: ServerLimits, policy: ClockPolicy = POLICY,
                   tcp_bots: bool = False, hold_s: float = 0.0) -> Run:
    """Two calling stations play ``HANDS`` duplicate hands (two tables), under ``attack`` if given; the referee
    keeps serving the attack for at least ``hold_s`` after it started (a fast match may end sooner)."""
    spec = MatchSpec("stall", "stall-seed", HANDS, policy=policy)
    times: list[tuple[float, tuple[int, int]]] = []  # each finished hand: when, and the machine's CPU ticks then
    setup = await prepare_match(spec, ["a", "b"], limits=limits, lanes=lanes_for(spec, 2), local=not tcp_bots,
                                tcp=True, on_hand=lambda record: times.append((time.monotonic(), cpu_ticks())))
    ready: dict[str, Any] = {}
    done: dict[str, Any] = {}
    remote: list[asyncio.subprocess.Process] = []
    attacked_at = time.monotonic()
    try:
        if attack is not None:
            ready = await attack.start(setup.server.address)
            attacked_at = time.monotonic()
        if tcp_bots:
            remote = await remote_bots(setup)
            result = await play(setup)
        else:
            await launch(setup, [BotSpec("a", CALLER), BotSpec("b", CALLER)], None, REPO, SandboxPolicy())
            result = await play_watched(setup)
    finally:
        await asyncio.gather(*(p.stop() for p in setup.processes))
        for process in remote:
            try:
                await asyncio.wait_for(process.wait(), 10)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
        if attack is not None:
            await asyncio.sleep(max(0.0, attacked_at + hold_s - time.monotonic()))
            done = await attack.stop()
        await setup.server.stop()
    assert result.reason == MatchStatus.COMPLETED and result.hands_played == HANDS, result
    (first, (total_0, stolen_0)), (last, (total_1, stolen_1)) = times[0], times[-1]
    stolen = (stolen_1 - stolen_0) / (total_1 - total_0) if total_1 > total_0 else 0.0
    rate = (len(times) - 1) / ((last - first) * (1 - min(stolen, 0.95)))
    return Run(result, rate, ready, done, stolen)


def cpu_ticks() -> tuple[int, int]:
    """The machine's CPU time so far, in clock ticks over all CPUs: in all, and of it what the host stole (the
    ``steal`` column of /proc/stat's ``cpu`` line; 0 where it is not kept)."""
    with open("/proc/stat") as stat:
        fields = [int(f) for f in stat.readline().split()[1:9]]
    return sum(fields), fields[7] if len(fields) > 7 else 0


def compare(make_attack: Any, limits: ServerLimits, label: str, tcp_bots: bool = False,
            hold_s: float = 0.0) -> list[Run]:
    """Unattacked and attacked runs in turn, starting and ending unattacked (more pairs when the first miss the bar);
    asserts the 80% bar and no violation;
    returns the attacked runs. Each attacked run is measured against the two unattacked runs beside it, so a drift
    of the machine's speed over the test (seen: 234 down to 132 hands/s within one test) cancels out."""
    if not tcp_bots:
        check_sandbox()

    def shares(plain: list[Run], attacked: list[Run]) -> list[float]:
        return [run.hands_per_s / ((before.hands_per_s + after.hands_per_s) / 2)
                for run, before, after in zip(attacked, plain[:-1], plain[1:], strict=True)]

    async def runs() -> tuple[list[Run], list[Run]]:
        plain: list[Run] = [await measured(None, limits, tcp_bots=tcp_bots)]
        attacked: list[Run] = []
        while len(attacked) < PAIRS or (statistics.median(shares(plain, attacked)) < KEEP
                                        and len(attacked) < PAIRS + MORE_PAIRS):
            attacked.append(await measured(make_attack(), limits, tcp_bots=tcp_bots, hold_s=hold_s))
            plain.append(await measured(None, limits, tcp_bots=tcp_bots))
        return plain, attacked

    plain, attacked = asyncio.run(runs())
    kept = shares(plain, attacked)
    print(f"{label}: {[round(r.hands_per_s, 1) for r in plain]} hands/s without the attack, "
          f"{[round(r.hands_per_s, 1) for r in attacked]} with it, in between: {[f'{k:.0%}' for k in kept]} "
          f"(stolen by the host: {[f'{r.stolen:.0%}' for r in [*plain, *attacked]]}); "
          f"attacker: {attacked[-1].ready} {attacked[-1].done}")
    for run in [*plain, *attacked]:
        assert all(r.violations == 0 and r.timeouts == 0 and r.absent == 0 for r in run.result.results), run.result
    assert statistics.median(kept) >= KEEP, f"{label}: the attacked runs kept {[f'{k:.0%}' for k in kept]}"
    return attacked


def test_two_thousand_spectators_are_capped_and_do_not_slow_the_tables() -> None:
    limits = ServerLimits()
    attacked = compare(lambda: Attacker("watch", ["stall", "2000"]), limits, "2,000 WatchMatch calls")
    for run in attacked:
        outcomes = run.ready["outcomes"]
        assert outcomes["admitted"] == limits.max_watchers
        # the rest refused by the referee; a few of a burst of 2,000 calls are shed by gRPC itself (CANCELLED: more
        # than its pending-request limit at once), before they reach the referee
        assert set(outcomes) <= {"admitted", "RESOURCE_EXHAUSTED", "CANCELLED"}, outcomes
        assert outcomes["RESOURCE_EXHAUSTED"] >= 1500 and sum(outcomes.values()) == 2000
        assert run.done["events"] >= limits.max_watchers  # the admitted ones were served


def test_a_flood_of_failed_joins_from_several_clients_neither_slows_nor_locks_out_the_bots() -> None:
    """The honest bots connect over TCP from the flood's own address (127.0.0.1): a cap on a peer's streams must
    not keep them out (it did: the match was a no-show), nor may the flood's refusals cost the tables."""
    attacked = compare(lambda: Attacker("joins", ["8", "16"]), ServerLimits(), "8 clients x 16 streams of bad Joins",
                       tcp_bots=True)
    limits = ServerLimits()
    for run in attacked:
        outcomes = run.done["outcomes"]
        # the first few refused at once (a bad token, or a stream over the 32 a peer may hold open), then a couple a
        # second, in turn, however many streams the 8 clients keep open (128): the flood is starved
        assert set(outcomes) <= {"UNAUTHENTICATED", "RESOURCE_EXHAUSTED"}, run.done
        assert limits.failed_joins_burst <= run.done["attempts"] < 60, run.done


def test_hundreds_of_idle_connections_are_closed_and_bots_still_connect() -> None:
    limits = ServerLimits(idle_connection_s=2.0)
    attacked = compare(lambda: Attacker("idle", ["300", "20"]), limits, "300 bare TCP + 20 idle gRPC connections",
                       tcp_bots=True, hold_s=limits.idle_connection_s + 1.5)  # served past the idle limit
    for run in attacked:
        assert run.ready == {"raw": 300, "channels": 20}
        assert run.done["raw_closed"] == 300 and run.done["channels_closed"] == 20, run.done
        assert run.done["raw_closed_after_s"] <= limits.idle_connection_s + 2.0, run.done
        assert run.done["channels_closed_after_s"] <= limits.idle_connection_s + 2.0, run.done


def test_the_referees_own_delay_is_not_charged_to_bots_under_spectator_load() -> None:
    """100 ms a decision and no time bank, while 64 spectators watch and 2,000 more are refused: no time-out."""
    policy = ClockPolicy(per_action_ms=100, time_bank_ms=0, max_violations=0, connect_timeout_ms=15000)
    check_sandbox()

    async def both() -> list[Run]:
        return [await measured(Attacker("watch", ["stall", "2000"]), ServerLimits(), policy) for _ in range(2)]

    for run in asyncio.run(both()):
        print(f"100 ms clock under 64 spectators: {run.hands_per_s:.1f} hands/s, "
              f"{sum(r.decisions for r in run.result.results)} decisions, "
              f"mean think {[round(r.mean_think_ms, 2) for r in run.result.results]} ms")
        assert all(r.timeouts == 0 and r.violations == 0 for r in run.result.results), run.result.results


class CutProxy:
    """A TCP proxy between one bot and the referee that can go silent: stop forwarding, in both directions, while
    keeping both connections open (a network cut nobody announces)."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.cut_at: float | None = None
        self.upstream_closed_at: float | None = None
        self.server: asyncio.Server | None = None
        self.writers: list[asyncio.StreamWriter] = []

    def cut(self) -> None:
        self.cut_at = time.monotonic()

    async def start(self) -> str:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return f"127.0.0.1:{self.server.sockets[0].getsockname()[1]}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(*self.target)
        self.writers += [writer, up_writer]

        async def pump(source: asyncio.StreamReader, sink: asyncio.StreamWriter, upstream: bool) -> None:
            while data := await source.read(65536):
                if self.cut_at is None:  # after the cut, whatever comes is read and dropped
                    sink.write(data)
                    await sink.drain()
            if upstream and self.upstream_closed_at is None:
                self.upstream_closed_at = time.monotonic()  # the referee closed the connection

        with contextlib.suppress(OSError):
            await asyncio.gather(pump(reader, up_writer, False), pump(up_reader, writer, True))

    async def close(self) -> None:
        for writer in self.writers:
            writer.close()
        if self.server is not None:
            self.server.close()


async def cut_bot(via_proxy: str, direct: str, token: str, proxy: CutProxy, after: int, log: list[str]) -> None:
    """A calling station that plays through the proxy until the network is cut after ``after`` answers, notices
    the silence (no message for a second), and joins again with its token, straight to the referee. The cut
    connection is left as it is: the referee has to find out by itself."""
    join = bot_pb2.BotMessage(join=bot_pb2.Join(token=token, bot_name="cut", protocol_version=1))
    channels: list[grpc.aio.Channel] = []

    async def session(target: str, cut_after: int | None) -> bool:
        """Play on one connection: True when the match ended, False when it went silent."""
        outbox: asyncio.Queue[bot_pb2.BotMessage | None] = asyncio.Queue()
        outbox.put_nowait(join)

        async def requests() -> Any:
            while (item := await outbox.get()) is not None:
                yield item

        channel = grpc.aio.insecure_channel(target, options=[("grpc.use_local_subchannel_pool", 1)])
        channels.append(channel)
        call = channel.stream_stream("/arena.v1.BotService/Play",
                                     request_serializer=bot_pb2.BotMessage.SerializeToString,
                                     response_deserializer=bot_pb2.RefereeMessage.FromString)(requests())
        answered = 0
        while True:
            try:
                message = await asyncio.wait_for(call.read(), 1.0)
            except TimeoutError:
                log.append(f"silent for a second after {answered} answers")
                return False
            if not isinstance(message, bot_pb2.RefereeMessage) or message.WhichOneof("msg") == "match_end":
                return True  # the end of the stream (grpc.aio.EOF), or of the match
            kind = message.WhichOneof("msg")
            if kind == "welcome":
                log.append("welcome" + (" through the proxy" if target == via_proxy else " directly"))
            elif kind == "action_request":
                request = message.action_request
                action = poker_pb2.ACTION_KIND_CHECK if request.legal.can_check else poker_pb2.ACTION_KIND_CALL
                outbox.put_nowait(bot_pb2.BotMessage(action=poker_pb2.Action(
                    table_id=request.table_id, hand_id=request.hand_id, request_id=request.request_id, kind=action)))
                answered += 1
                if answered == cut_after:
                    proxy.cut()
                    log.append(f"network cut after {answered} answers")

    try:
        if not await session(via_proxy, after):
            await session(direct, None)
    finally:
        for channel in channels:
            await channel.close(None)


def test_a_silent_network_cut_is_replaced_by_the_reconnect_and_found_by_keepalive(tmp_path: Path) -> None:
    """The bot's connection goes silent mid-match. It joins again with its token: the newest join takes the seat at
    once. The dead connection, which no packet ever closed, is found by keepalive within seconds and closed."""
    limits = ServerLimits(keepalive_s=1.0, keepalive_timeout_s=1.0)
    policy = ClockPolicy(per_action_ms=500, time_bank_ms=0, max_violations=0, connect_timeout_ms=15000)
    check_sandbox()

    async def scenario() -> tuple[MatchResult, list[str], CutProxy, int]:
        spec = MatchSpec("cut", "cut-seed", 60, policy=policy, duplicate=False)
        setup = await prepare_match(spec, ["steady", "cut"], limits=limits, local=True, tcp=True)
        assert setup.server.socket_path is not None
        proxy = CutProxy(("127.0.0.1", setup.server.port))
        via_proxy = await proxy.start()
        steady = BotProcess(BotSpec("steady", CALLER), tmp_path / "steady.log")
        await steady.start(setup.server.socket_path, setup.seats[0].token, REPO)
        log: list[str] = []
        try:
            bot = asyncio.create_task(cut_bot(via_proxy, setup.server.address, setup.seats[1].token, proxy, 40, log))
            result = await play(setup)
            await asyncio.wait_for(bot, 20)
            deadline = time.monotonic() + 10  # keepalive: pings every second, each answered within one
            while proxy.upstream_closed_at is None and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
            return result, log, proxy, setup.seats[1].joins
        finally:
            await steady.stop()
            await proxy.close()
            await setup.server.stop()

    result, log, proxy, joins = asyncio.run(scenario())
    assert proxy.cut_at is not None
    noticed = None if proxy.upstream_closed_at is None else proxy.upstream_closed_at - proxy.cut_at
    print(f"{log}; the referee closed the cut connection {noticed} s after the cut; {result.results}")
    assert result.reason == MatchStatus.COMPLETED and result.hands_played == 60
    assert log == ["welcome through the proxy", "network cut after 40 answers", "silent for a second after 40 answers",
                   "welcome directly"], log
    assert joins == 2  # the reconnect took the seat
    steady, cut = result.results
    assert steady.violations == 0 and steady.timeouts == 0 and steady.absent == 0
    assert cut.timeouts <= 3  # the requests that went into the cut, until it joined again
    assert noticed is not None and noticed < limits.keepalive_s + limits.keepalive_timeout_s + 2.0, noticed


def test_the_guard_lets_every_process_of_a_six_handed_local_match_join() -> None:
    """Every local bot reaches the referee through one socket, so the guard sees them all as one peer: the cap on a
    peer's streams must leave room for a process per seat (6 bots x 6 rotations = 36 streams; 32 were refused)."""
    check_sandbox()
    good = f"EVIL_MODE=good python {REPO / 'tests' / 'referee' / 'evil_bot.py'}"
    spec = MatchSpec("six", "six-seed", 6, policy=ClockPolicy(connect_timeout_ms=30000))
    bots = [BotSpec(f"bot{i}", good) for i in range(6)]
    result = asyncio.run(run_local_match(spec, bots, cwd=REPO))
    assert result.reason == MatchStatus.COMPLETED and result.hands_played == 6, [r.failure for r in result.results]
    assert all(r.violations == 0 for r in result.results)
