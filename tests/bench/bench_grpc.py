"""Referee speed over real gRPC: the transport's ceiling, one heads-up table, and many tables in one referee.

Run with ``python -c "from tests.bench.bench_grpc import main; main()"`` (or ``python -m tests.bench``). Prints
tables; never asserts. Everything runs on this machine over 127.0.0.1, so the referee, the bots and the ping-pong
client share its cores (their number is printed first); CPU figures are CPU seconds per wall second (100% = one
core), the referee's including gRPC's own threads; "others CPU" is what the rest of the machine used meanwhile,
since any other work on a machine this small skews every figure.

1. Transport ceiling: a grpc.aio server in this process and a synchronous grpc client (as arena_sdk uses) in a
   subprocess play ping-pong on one bidirectional stream: the server sends a serialized RefereeMessage holding a
   real ActionRequest (taken from a short in-process match), the client answers with a BotMessage holding an
   Action. ``Bare`` awaits write/read in one coroutine; ``Pattern`` has the referee's shape (generator handler,
   reader task, driver awaiting a future under ``wait_for``); see tests/bench/grpc_pingpong.py.
2. One heads-up match (calling station against the random bot, both Python SDK bots as subprocesses) through
   ``run_local_match``; rates are measured over its first rotation (the second one is played after it by fresh
   processes), between its first and its last finished hand, so bot start-up and the connect phase are left out.
3. Several such matches at once on one shared RefereeServer in one event loop (``prepare_match`` + ``play``);
   rates are measured over their first rotations, while every table is playing.

The server's per-connection rate limit is raised for 2 and 3: the default ``ServerLimits`` (200 messages/s, burst
400) cuts off a fast bot after a few hundred actions, which would measure the limit rather than the referee.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import grpc

from arena.engine import Action, ActionKind
from arena.referee import ClockPolicy, Decision, FunctionSeat, HandRecord, Match, MatchResult, MatchSpec
from arena.runner.bots import BotSpec
from arena.runner.remote_match import MatchSetup, lanes_for, launch, play, prepare_match, run_local_match
from arena.runner.sandbox import SandboxPolicy
from arena.transport import convert
from arena.transport.server import RefereeServer, ServerLimits
from arena_sdk.pb import bot_pb2, poker_pb2
from tests.bench.grpc_pingpong import PingPongService, machine_busy_s

ROOT = Path(__file__).resolve().parents[2]
PINGPONG_CLIENT = Path(__file__).resolve().parent / "grpc_pingpong.py"
BOTS = ROOT / "sample_bots" / "python"
SEED = "bench-grpc-20240607"

PINGPONG_SECONDS = 2.0
PINGPONG_ROUNDS = 2  # each method this many times, interleaved: the machine may be shared with other work
HISTORY_EVENTS = 15  # the sample request: the first one in the sample match with at least this much history
HEADS_UP_HANDS = 2_000
TABLES = 8
HANDS_PER_TABLE = 300
MATCH_TIMEOUT_S = 150.0  # a hung match is cancelled (and its bots stopped) rather than waited for forever

POLICY = ClockPolicy(per_action_ms=10_000, time_bank_ms=120_000, connect_timeout_ms=60_000)
LIMITS = ServerLimits(messages_per_second=1_000_000.0, burst=1_000_000)
SERVER_OPTIONS = [  # as RefereeServer.start
    ("grpc.max_receive_message_length", 64 * 1024),
    ("grpc.max_send_message_length", 16 * 1024 * 1024),
    ("grpc.so_reuseport", 0),
]


def bot_specs(label: str = "") -> list[BotSpec]:
    """Calling station against the seeded random bot, run with this interpreter."""
    python = sys.executable
    return [
        BotSpec(f"caller{label}", f"'{python}' '{BOTS / 'calling_station.py'}'"),
        BotSpec(f"random{label}", f"'{python}' '{BOTS / 'random_bot.py'}' --seed 7"),
    ]


# ----------------------------------------------------------------------------------------------- CPU accounting


def descendants_cpu_s() -> float | None:
    """CPU seconds (user + system) used so far by every live descendant process of this one (Linux /proc)."""
    try:
        tick = os.sysconf("SC_CLK_TCK")
        children: dict[int, list[int]] = {}
        cpu: dict[int, int] = {}
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                text = Path(entry.path, "stat").read_text()
            except OSError:
                continue
            fields = text[text.rindex(")") + 2 :].split()
            pid = int(entry.name)
            children.setdefault(int(fields[1]), []).append(pid)
            cpu[pid] = int(fields[11]) + int(fields[12])
    except (OSError, ValueError):
        return None
    total, todo = 0, list(children.get(os.getpid(), []))
    while todo:
        pid = todo.pop()
        total += cpu.get(pid, 0)
        todo.extend(children.get(pid, []))
    return total / tick


@dataclass(slots=True)
class Snapshot:
    """A moment: wall clock, this process's CPU, its descendants' CPU, the whole machine's busy CPU."""

    wall: float
    cpu: float
    bots_cpu: float | None
    machine_cpu: float | None

    @classmethod
    def now(cls) -> Snapshot:
        return cls(time.perf_counter(), time.process_time(), descendants_cpu_s(), machine_busy_s())


@dataclass(slots=True)
class Window:
    """Work done between two snapshots."""

    hands: int
    decisions: int
    start: Snapshot
    end: Snapshot

    @property
    def seconds(self) -> float:
        return self.end.wall - self.start.wall

    def rate(self, count: int) -> float:
        return count / self.seconds if self.seconds > 0 else 0.0

    @property
    def referee_cpu(self) -> float:
        return (self.end.cpu - self.start.cpu) / self.seconds if self.seconds > 0 else 0.0

    @property
    def bots_cpu(self) -> float | None:
        if self.start.bots_cpu is None or self.end.bots_cpu is None or self.seconds <= 0:
            return None
        return (self.end.bots_cpu - self.start.bots_cpu) / self.seconds

    @property
    def others_cpu(self) -> float | None:
        """CPU the rest of the machine used meanwhile (other people's work skews these figures)."""
        bots = self.bots_cpu
        if bots is None or self.start.machine_cpu is None or self.end.machine_cpu is None or self.seconds <= 0:
            return None
        machine = (self.end.machine_cpu - self.start.machine_cpu) / self.seconds
        return max(0.0, machine - self.referee_cpu - bots)


def percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.0f}%"


# ----------------------------------------------------------------------------------------------- the sample request


@dataclass(frozen=True, slots=True)
class Sample:
    """The ping-pong's messages and what real requests look like."""

    request: bytes
    answer: bytes
    history: int
    mean_size: float
    max_size: int


async def sample_messages() -> Sample:
    """Play a short in-process match and serialize its requests as the referee sends them."""
    rng = random.Random(SEED)
    decisions: list[Decision] = []

    def choose(decision: Decision) -> Action:
        decisions.append(decision)
        legal = decision.view.legal
        assert legal is not None
        if legal.can_raise and rng.random() < 0.2:
            return Action(ActionKind.RAISE, legal.min_raise_to)
        return Action(ActionKind.CHECK) if legal.can_check else Action(ActionKind.CALL)

    spec = MatchSpec("sample", SEED, 40, policy=POLICY)
    await Match(spec, [("a", FunctionSeat("a", choose)), ("b", FunctionSeat("b", choose))]).run()
    messages = [
        (d, bot_pb2.RefereeMessage(action_request=convert.action_request(d, d.timeouts)).SerializeToString())
        for d in decisions
    ]
    sizes = [len(m) for _, m in messages]
    chosen, request = next(((d, m) for d, m in messages if len(d.view.history) >= HISTORY_EVENTS), messages[-1])
    action = poker_pb2.Action(
        table_id=chosen.table_id, hand_id=chosen.hand_id, request_id=chosen.request_id, kind=poker_pb2.ACTION_KIND_CALL
    )
    answer = bot_pb2.BotMessage(action=action).SerializeToString()
    return Sample(request, answer, len(chosen.view.history), sum(sizes) / len(sizes), max(sizes))


# ----------------------------------------------------------------------------------------------- 1. ping-pong


@dataclass(frozen=True, slots=True)
class PingPong:
    method: str
    round: int
    round_trips: int
    seconds: float
    server_cpu: float
    client_cpu: float
    others_cpu: float | None

    @property
    def rate(self) -> float:
        return self.round_trips / self.seconds if self.seconds > 0 else 0.0


async def bench_pingpong(
    sample: Sample, seconds: float = PINGPONG_SECONDS, rounds: int = PINGPONG_ROUNDS
) -> list[PingPong]:
    """Each server method against a fresh client process, ``rounds`` times, the methods taking turns."""
    service = PingPongService(sample.request, seconds)
    server = grpc.aio.server(options=SERVER_OPTIONS)
    server.add_generic_rpc_handlers((service.handler(),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    rows = []
    try:
        for round_number in range(1, rounds + 1):
            for method in ("Bare", "Pattern"):
                process = await asyncio.create_subprocess_exec(
                    sys.executable, str(PINGPONG_CLIENT), f"127.0.0.1:{port}", method, sample.answer.hex(),
                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                )
                try:
                    out, err = await asyncio.wait_for(process.communicate(), seconds + 30)
                finally:
                    if process.returncode is None:
                        with contextlib.suppress(ProcessLookupError):
                            process.kill()
                        await process.wait()
                if process.returncode != 0:
                    raise RuntimeError(f"ping-pong client failed ({process.returncode}): {err.decode()[-2000:]}")
                client = json.loads(out)
                stats = service.stats
                client_cpu = client["cpu_s"] / client["seconds"] if client["seconds"] else 0.0
                server_cpu = stats.cpu_s / stats.seconds if stats.seconds else 0.0
                others = None
                if stats.machine_cpu_s is not None and stats.seconds:
                    others = max(0.0, stats.machine_cpu_s / stats.seconds - server_cpu - client_cpu)
                rows.append(PingPong(method, round_number, stats.round_trips, stats.seconds, server_cpu, client_cpu,
                                     others))
    finally:
        await server.stop(0)
    return rows


# ----------------------------------------------------------------------------------------------- 2 and 3. matches


@dataclass(slots=True)
class HandClock:
    """``on_hand`` callback of one match: snapshots at its first and last hand, decisions in between."""

    hands_total: int
    first: Snapshot | None = None
    last: Snapshot | None = None
    hands: int = 0
    times: list[tuple[float, int]] = field(default_factory=list)  # (wall, decisions) per finished hand

    def __call__(self, record: HandRecord) -> None:
        self.hands += 1
        self.times.append((time.perf_counter(), len(record.decisions)))
        if self.hands == 1:
            self.first = Snapshot.now()
        if self.hands == self.hands_total:
            self.last = Snapshot.now()

    def window(self) -> Window | None:
        """From the end of the first hand to the end of the last (the rest of the match at full speed)."""
        if self.first is None or self.last is None or self.hands < 2:
            return None
        return Window(self.hands - 1, sum(d for _, d in self.times[1:]), self.first, self.last)


def first_rotation(on_hand: Callable[[HandRecord], None]) -> Callable[[HandRecord], None]:
    """``on_hand`` for the hands of a match's first rotation only: a local match plays its rotations one after the
    other, each by fresh processes, so its first rotation is its steady part."""
    def hand(record: HandRecord) -> None:
        if record.rotation == 0:
            on_hand(record)
    return hand


@dataclass(slots=True)
class HeadsUp:
    result: MatchResult
    window: Window | None
    startup_s: float
    total_s: float


def tail(path: Path, lines: int = 5) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def report_problems(results: list[MatchResult], log_dir: Path) -> None:
    """Say so when a bot timed out, broke the rules or went missing: the figures are then not clean."""
    for result in results:
        for r in result.results:
            if r.violations or r.timeouts or r.absent or r.forfeited or result.reason != "completed":
                print(f"  note: {result.match_id} {r.name}: {result.reason}, {r.violations} violations, "
                      f"{r.timeouts} time-outs, {r.absent} absent, notes {r.notes[:3]}")
                for log in sorted(log_dir.glob(f"{result.match_id}*-{r.name}.log")):
                    print("    " + tail(log).replace("\n", "\n    "))


async def bench_heads_up(hands: int = HEADS_UP_HANDS, log_dir: Path | None = None) -> HeadsUp:
    """One match through run_local_match, timed over its first rotation, from its first finished hand to its last
    (the second rotation is played after it by fresh processes: their start-up is left out, as the first's is)."""
    spec = MatchSpec("heads-up", SEED, hands, policy=POLICY)
    clock = HandClock(sum(1 for p in spec.plan(2) if p.rotation == 0))
    started = time.perf_counter()
    result = await asyncio.wait_for(
        run_local_match(spec, bot_specs(), on_hand=first_rotation(clock), limits=LIMITS, log_dir=log_dir),
        MATCH_TIMEOUT_S)
    total = time.perf_counter() - started
    startup = (clock.times[0][0] - started) if clock.times else total
    return HeadsUp(result, clock.window(), startup, total)


@dataclass(slots=True)
class ManyTables:
    results: list[MatchResult]
    steady: Window | None  # while every table was playing
    overall: Window | None  # from the first hand anywhere to the last
    per_table: list[Window | None]
    startup_s: float


async def bench_many_tables(
    tables: int = TABLES, hands: int = HANDS_PER_TABLE, log_dir: Path | None = None
) -> ManyTables:
    """``tables`` matches on one shared RefereeServer, each with its two bot processes, played concurrently."""
    server = RefereeServer(limits=LIMITS, tcp=False, local=True)
    await server.start()
    assert server.socket_path is not None
    setups: list[MatchSetup] = []
    clocks: list[HandClock] = []
    marks: list[Snapshot] = []  # whole-referee snapshots: taken when all tables run, and when the first one ends
    try:
        started = time.perf_counter()

        def on_hand_for(clock: HandClock) -> Callable[[HandRecord], None]:
            def on_hand(record: HandRecord) -> None:
                clock(record)
                all_playing = not marks and all(c.hands >= 1 for c in clocks)
                first_over = len(marks) == 1 and clock.hands == clock.hands_total
                if all_playing or first_over:
                    marks.append(Snapshot.now())
            return on_hand

        for index in range(tables):
            spec = MatchSpec(f"table-{index + 1}", f"{SEED}-{index}", hands, policy=POLICY)
            clock = HandClock(sum(1 for p in spec.plan(2) if p.rotation == 0))
            clocks.append(clock)
            setup = await prepare_match(spec, [b.name for b in bot_specs()], server=server,
                                        on_hand=first_rotation(on_hand_for(clock)), lanes=lanes_for(spec, 2))
            setups.append(setup)
            await launch(setup, bot_specs(), log_dir, None, SandboxPolicy())
        results = list(await asyncio.wait_for(asyncio.gather(*(play(s) for s in setups)), MATCH_TIMEOUT_S))
    finally:
        for setup in setups:
            setup.match.stop()
        await asyncio.gather(*(p.stop() for s in setups for p in s.processes), return_exceptions=True)
        await server.stop()
    steady = None
    if len(marks) == 2:
        begin, end = marks[0].wall, marks[1].wall
        inside = [(t, d) for c in clocks for t, d in c.times if begin < t <= end]
        steady = Window(len(inside), sum(d for _, d in inside), marks[0], marks[1])
    overall = None
    firsts = [c.first for c in clocks if c.first is not None]
    lasts = [c.last for c in clocks if c.last is not None]
    if firsts and lasts:
        begin_s = min(firsts, key=lambda s: s.wall)
        end_s = max(lasts, key=lambda s: s.wall)
        inside = [(t, d) for c in clocks for t, d in c.times if t > begin_s.wall]
        end_s = Snapshot(end_s.wall, end_s.cpu, None, None)  # bots of the tables that ended first are gone by then
        overall = Window(len(inside), sum(d for _, d in inside), begin_s, end_s)
    startup = min((c.times[0][0] for c in clocks if c.times), default=time.perf_counter()) - started
    return ManyTables(results, steady, overall, [c.window() for c in clocks], startup)


# ----------------------------------------------------------------------------------------------- report


WINDOW_HEADER = ("", "hands", "decisions", "seconds", "hands/s", "decisions/s", "referee CPU", "bots CPU",
                 "others CPU", "referee µs/dec")
WINDOW_FORMAT = "{:<22} {:>7} {:>10} {:>8} {:>8} {:>12} {:>12} {:>9} {:>11} {:>15}"


def window_row(label: str, w: Window) -> str:
    cpu_per_decision = (w.end.cpu - w.start.cpu) / w.decisions * 1e6 if w.decisions else 0.0
    return WINDOW_FORMAT.format(
        label, f"{w.hands:,}", f"{w.decisions:,}", f"{w.seconds:.2f}", f"{w.rate(w.hands):,.0f}",
        f"{w.rate(w.decisions):,.0f}", percent(w.referee_cpu), percent(w.bots_cpu), percent(w.others_cpu),
        f"{cpu_per_decision:,.0f}",
    )


def print_machine() -> None:
    import google.protobuf
    from google.protobuf.internal import api_implementation

    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"Machine: {os.cpu_count()} cores ({usable} usable by this process), shared by the referee, the bots and "
          f"the ping-pong client; Python {sys.version.split()[0]}, grpcio {grpc.__version__}, "
          f"protobuf {google.protobuf.__version__} ({api_implementation.Type()})")
    print_load("at start")


def print_load(when: str) -> None:
    """Other work on the machine skews every figure here: show how busy it was."""
    if hasattr(os, "getloadavg"):
        one, five, _ = os.getloadavg()
        print(f"Load average {when}: {one:.2f} (1 min), {five:.2f} (5 min)")


PROBE_STEPS = 1_000_000


def speed_probe() -> float:
    """CPU milliseconds this process takes for a fixed pure-Python loop, best of five: the machine's speed now.
    This shared two-core machine runs the same work a third slower on some days, and half as fast in some spells of
    a session, with nothing else running and no steal time shown in /proc/stat; a figure is read beside this one."""
    best = float("inf")
    for _ in range(5):
        start = time.process_time()
        total = 0
        for i in range(PROBE_STEPS):
            total += i & 7
        best = min(best, time.process_time() - start)
    return 1000 * best


def print_speed(when: str) -> None:
    """The machine's speed (``speed_probe``), to compare the figures of runs in different spells by."""
    print(f"Speed probe {when}: {speed_probe():.1f} ms of CPU for {PROBE_STEPS:,} steps of a Python loop, best of 5 "
          "(lower is faster)")


async def run_all() -> None:
    print_machine()
    sample = await sample_messages()
    print(f"Messages: RefereeMessage(action_request) of {len(sample.request)} bytes ({sample.history} history "
          f"events; requests in a sample match: mean {sample.mean_size:.0f}, max {sample.max_size} bytes), "
          f"answered by BotMessage(action) of {len(sample.answer)} bytes")

    print(f"\n1. Transport ceiling: one stream over 127.0.0.1, grpc.aio server here, sync grpc client in a "
          f"subprocess, {PINGPONG_ROUNDS} rounds of {PINGPONG_SECONDS:g} s per method")
    pingpong: dict[str, PingPong] = {}  # the best round of each method
    try:
        rows = await bench_pingpong(sample)
    except Exception as exc:
        print(f"  ping-pong failed: {exc!r}")
        rows = []
    if rows:
        print("{:<8} {:>5} {:>12} {:>8} {:>14} {:>11} {:>11} {:>11} {:>15}".format(
            "method", "round", "round trips", "seconds", "round trips/s", "server CPU", "client CPU", "others CPU",
            "server µs/trip"))
        for row in rows:
            server_us = row.server_cpu * row.seconds / row.round_trips * 1e6 if row.round_trips else 0.0
            print(f"{row.method:<8} {row.round:>5} {row.round_trips:>12,} {row.seconds:>8.2f} {row.rate:>14,.0f} "
                  f"{percent(row.server_cpu):>11} {percent(row.client_cpu):>11} {percent(row.others_cpu):>11} "
                  f"{server_us:>15,.0f}")
            if row.method not in pingpong or row.rate > pingpong[row.method].rate:
                pingpong[row.method] = row

    with tempfile.TemporaryDirectory(prefix="bench-grpc-") as tmp:
        log_dir = Path(tmp)
        print(f"\n2. Referee, heads-up, one table: calling station vs random bot (Python SDK subprocesses), "
              f"{HEADS_UP_HANDS:,} hands, rates from the first finished hand to the last")
        try:
            heads_up = await bench_heads_up(log_dir=log_dir)
        except Exception as exc:
            print(f"  heads-up match failed: {exc!r}")
        else:
            result = heads_up.result
            total_decisions = sum(r.decisions for r in result.results)
            print(f"match: {result.reason}, {result.hands_played:,} hands, {total_decisions:,} decisions "
                  f"(ParticipantResult.decisions), {heads_up.total_s:.2f} s in all, of which "
                  f"{heads_up.startup_s:.2f} s until the first hand ended (bot start-up and connect)")
            report_problems([result], log_dir)
            if heads_up.window is not None:
                print(WINDOW_FORMAT.format(*WINDOW_HEADER))
                print(window_row("heads-up", heads_up.window))
                rate = heads_up.window.rate(heads_up.window.decisions)
                for method, row in pingpong.items():
                    if row.rate:
                        print(f"decisions/s ÷ best {method} ping-pong round trips/s = {rate / row.rate:.2f} "
                              "(goal ≥ 0.7)")

        print(f"\n3. Many tables in one referee: {TABLES} heads-up matches of {HANDS_PER_TABLE:,} hands on one "
              f"RefereeServer / event loop, {2 * TABLES} bot processes")
        try:
            many = await bench_many_tables(log_dir=log_dir)
        except Exception as exc:
            print(f"  many-table run failed: {exc!r}")
        else:
            hands_played = sum(r.hands_played for r in many.results)
            decisions = sum(d.decisions for r in many.results for d in r.results)
            print(f"matches: {sum(r.reason == 'completed' for r in many.results)}/{len(many.results)} completed, "
                  f"{hands_played:,} hands, {decisions:,} decisions; {many.startup_s:.2f} s until the first hand ended")
            report_problems(many.results, log_dir)
            print(WINDOW_FORMAT.format(*WINDOW_HEADER))
            if many.steady is not None:
                print(window_row(f"all {TABLES} tables playing", many.steady))
            if many.overall is not None:
                print(window_row("first hand to last", many.overall))
            rates = [w.rate(w.decisions) for w in many.per_table if w is not None]
            if rates:
                print(f"per table, own first to last hand: decisions/s min {min(rates):,.0f}, "
                      f"max {max(rates):,.0f}")
    print()
    print_load("at end")


def main() -> None:
    """Run the three benchmarks and print their tables."""
    asyncio.run(run_all())


if __name__ == "__main__":
    main()
