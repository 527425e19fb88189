"""Many tables per bot connection (``MatchSpec(tables=N)``, ``arena match --tables N``): how fast a match of two Python
SDK random bots, two C++ sample bots, and a Python batch bot (tests/bench/batch_bot.py, ``act_batch``) against the
random bot is played at 1, 8, 64 and 256 tables, next to the bare gRPC ping-pong's round trips/s (one short round of
bench_grpc's ping-pong). Each row is one ``run_local_match`` (unsandboxed, a clock nothing hits, bench_grpc's raised
rate limit), i.e. one process per bot and rotation (two lanes, one after the other), each process hosting N tables;
rates are measured over the first lane, from its first finished hand (bot start-up and connect left out) to its
last; a pair's first row plays 1,000 hands, each next one about 5 s at the rate of the one
before (the hands are printed), so the run stays short however fast the referee gets. Referee µs/decision is this
process's CPU (gRPC's threads included) per decision, bot µs/decision the bot processes' CPU per decision, the C++
bot's own figure comes from its log (its whole match), "others CPU" is what the rest of the machine used meanwhile.
Prints a table and the goals; never asserts. Run it alone with
``python -c "from tests.bench.bench_tables import main; main()"`` (or everything with ``python -m tests.bench``).
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from arena.referee import HandRecord, MatchResult, MatchSpec
from arena.runner.bots import BotSpec
from arena.runner.remote_match import run_local_match
from arena.runner.sandbox import SandboxPolicy
from tests.bench.bench_grpc import (
    BOTS,
    LIMITS,
    POLICY,
    ROOT,
    HandClock,
    PingPong,
    Window,
    bench_pingpong,
    percent,
    print_load,
    print_machine,
    report_problems,
    sample_messages,
)

SEED = "bench-tables-20240607"
TABLE_COUNTS = (1, 8, 64, 256)
PINGPONG_SECONDS = 2.0
FIRST_HANDS = 1_000  # the tables=1 row of each pair
ROW_SECONDS = 5.0  # what each further row aims at
HANDS_PER_TABLE = 4  # at least this many hands at every table of a row
MAX_HANDS = 50_000
LANES = 2  # a heads-up duplicate match: one process per bot and rotation (arena.runner.remote_match.lanes_for)
NOISY_OTHERS = 0.3  # "others CPU" above this: say that the figures are skewed
ROW_TIMEOUT_S = 60.0  # a hung row is cancelled (its bots stopped) and the next one played
CPP_BOT = ROOT / "sample_bots" / "cpp" / "build" / "arena-cpp-bot"
BATCH_BOT = Path(__file__).resolve().parent / "batch_bot.py"
CPP_FIGURE = re.compile(r"cpp-bot: decisions=(\d+) bot_us_per_decision=([0-9.]+)")

PYTHON_GOAL_HANDS_S = 3_300.0  # two Python bots at --tables 64
PYTHON_GOAL_RATIO = 10.0  # ... and this many times their --tables 1 rate
CPP_GOAL_DECISIONS_S = 20_000.0  # two C++ bots


@dataclass(frozen=True, slots=True)
class Pair:
    """Two bots to play each other."""

    key: str
    label: str
    bots: Callable[[], list[BotSpec]]


def python_pair() -> list[BotSpec]:
    python = sys.executable
    return [BotSpec("random1", f"'{python}' '{BOTS / 'random_bot.py'}' --seed 1"),
            BotSpec("random2", f"'{python}' '{BOTS / 'random_bot.py'}' --seed 2")]


def cpp_pair() -> list[BotSpec]:
    return [BotSpec("cpp1", f"'{CPP_BOT}' --max-tables 256"), BotSpec("cpp2", f"'{CPP_BOT}' --max-tables 256")]


def batch_pair() -> list[BotSpec]:
    python = sys.executable
    return [BotSpec("batch", f"'{python}' '{BATCH_BOT}'"),
            BotSpec("random", f"'{python}' '{BOTS / 'random_bot.py'}' --seed 1")]


PAIRS = (
    Pair("python", "2 Python random", python_pair),
    Pair("cpp", "2 C++", cpp_pair),
    Pair("batch", "batch vs random", batch_pair),
)


# ----------------------------------------------------------------------------------------------- one row


class LaneClocks:
    """``on_hand`` of a match played in lanes (one per rotation): a bench_grpc ``HandClock`` per lane."""

    def __init__(self, spec: MatchSpec) -> None:
        per_lane = Counter(plan.rotation for plan in spec.plan(2))
        self.clocks = {lane: HandClock(count) for lane, count in per_lane.items()}

    def __call__(self, record: HandRecord) -> None:
        self.clocks[record.rotation](record)

    @property
    def startup_s(self) -> float:
        """When the first hand of the match ended (perf_counter; inf if none did)."""
        return min((c.times[0][0] for c in self.clocks.values() if c.times), default=float("inf"))

    def window(self) -> Window | None:
        """The first lane at full speed, from its first finished hand to its last (the lanes are played one after
        the other, each by fresh processes: the next lane's start-up is left out, as the first one's is)."""
        return self.clocks[0].window() if 0 in self.clocks else None


@dataclass(slots=True)
class Row:
    pair: Pair
    tables: int
    hands: int  # the match's hands
    result: MatchResult | None
    window: Window | None
    startup_s: float
    total_s: float
    cpp_us: float | None  # the C++ bots' own µs per decision (their whole match), from their logs
    error: str = ""

    @property
    def hands_s(self) -> float:
        return self.window.rate(self.window.hands) if self.window is not None else 0.0

    @property
    def decisions_s(self) -> float:
        return self.window.rate(self.window.decisions) if self.window is not None else 0.0


def hands_for(tables: int, previous: Row | None) -> int:
    """The first row of a pair plays FIRST_HANDS; each next one about ROW_SECONDS at the previous row's rate (so the
    file's run stays short however fast the referee gets), at least HANDS_PER_TABLE at each of its tables."""
    if previous is None or previous.hands_s <= 0:
        return FIRST_HANDS
    hands = max(previous.hands_s * ROW_SECONDS, HANDS_PER_TABLE * LANES * tables, FIRST_HANDS)
    return min(MAX_HANDS, -(-int(hands) // 100) * 100)


def cpp_own_us(log_dir: Path, match_id: str) -> float | None:
    """The decision-weighted mean of the ``bot_us_per_decision`` lines in this match's bot logs."""
    decisions, total_us = 0, 0.0
    for log in log_dir.glob(f"{match_id}-*.log"):
        for match in CPP_FIGURE.finditer(log.read_text(errors="replace")):
            count = int(match.group(1))
            decisions += count
            total_us += count * float(match.group(2))
    return total_us / decisions if decisions else None


async def bench_row(pair: Pair, tables: int, hands: int, log_dir: Path) -> Row:
    """One match of ``hands`` hands between ``pair`` at ``tables`` tables per connection."""
    spec = MatchSpec(f"{pair.key}-t{tables}", SEED, hands, policy=POLICY, tables=tables)
    clocks = LaneClocks(spec)
    started = time.perf_counter()
    result: MatchResult | None = None
    error = ""
    try:
        result = await asyncio.wait_for(
            run_local_match(spec, pair.bots(), on_hand=clocks, limits=LIMITS, sandbox=SandboxPolicy(enabled=False),
                            log_dir=log_dir),
            ROW_TIMEOUT_S,
        )
    except Exception as exc:
        error = repr(exc) or type(exc).__name__
    total = time.perf_counter() - started
    cpp_us = cpp_own_us(log_dir, spec.match_id) if pair.key == "cpp" else None
    return Row(pair, tables, hands, result, clocks.window(), clocks.startup_s - started, total, cpp_us, error)


# ----------------------------------------------------------------------------------------------- report


HEADER = ("bots", "tables", "hands", "window s", "hands/s", "decisions/s", "referee µs/dec", "bots µs/dec",
          "C++ own µs/dec", "referee CPU", "bots CPU", "others CPU", "× tables 1")
FORMAT = "{:<17} {:>6} {:>7} {:>8} {:>8} {:>11} {:>14} {:>11} {:>14} {:>11} {:>8} {:>10} {:>10}"


def us_per(seconds: float | None, count: int) -> str:
    return "n/a" if seconds is None or not count else f"{seconds / count * 1e6:,.1f}"


def pingpong_line(row: PingPong) -> str:
    return FORMAT.format(
        f"ping-pong {row.method}", "-", "-", f"{row.seconds:.2f}", "-", f"{row.rate:,.0f}",
        us_per(row.server_cpu * row.seconds, row.round_trips), us_per(row.client_cpu * row.seconds, row.round_trips),
        "-", percent(row.server_cpu), percent(row.client_cpu), percent(row.others_cpu), "-",
    )


def row_line(row: Row, base: Row | None) -> str:
    w = row.window
    if w is None:
        return FORMAT.format(row.pair.label, row.tables, f"{row.hands:,}", *["n/a"] * 10)
    bots_s = None if w.start.bots_cpu is None or w.end.bots_cpu is None else w.end.bots_cpu - w.start.bots_cpu
    ratio = f"{row.hands_s / base.hands_s:.2f}×" if base is not None and base.hands_s > 0 else "-"
    return FORMAT.format(
        row.pair.label, row.tables, f"{row.hands:,}", f"{w.seconds:.2f}", f"{row.hands_s:,.0f}",
        f"{row.decisions_s:,.0f}", us_per(w.end.cpu - w.start.cpu, w.decisions), us_per(bots_s, w.decisions),
        "-" if row.cpp_us is None else f"{row.cpp_us:.2f}", percent(w.referee_cpu), percent(w.bots_cpu),
        percent(w.others_cpu), ratio,
    )


def print_goals(rows: list[Row]) -> None:
    print("\ngoal: two Python bots ≥ 3,300 hands/s at --tables 64 and ≥ 10× --tables 1; "
          "two C++ bots ≥ 20,000 decisions/s")
    by = {(r.pair.key, r.tables): r for r in rows if r.window is not None}
    python64, python1 = by.get(("python", 64)), by.get(("python", 1))
    if python64 is None:
        print("  Python, --tables 64: no figure this run")
    else:
        met = python64.hands_s >= PYTHON_GOAL_HANDS_S
        print(f"  Python, --tables 64: {python64.hands_s:,.0f} hands/s (goal ≥ {PYTHON_GOAL_HANDS_S:,.0f}): "
              f"{'met' if met else 'NOT met'}")
        if python1 is not None and python1.hands_s > 0:
            ratio = python64.hands_s / python1.hands_s
            print(f"  Python, --tables 64 ÷ --tables 1: {ratio:.1f}× ({python1.hands_s:,.0f} hands/s at 1 table; "
                  f"goal ≥ {PYTHON_GOAL_RATIO:.0f}×): {'met' if ratio >= PYTHON_GOAL_RATIO else 'NOT met'}")
    cpp = [r for (key, _), r in by.items() if key == "cpp"]
    if not cpp:
        print("  C++: no figure this run")
    else:
        best = max(cpp, key=lambda r: r.decisions_s)
        met = best.decisions_s >= CPP_GOAL_DECISIONS_S
        at64 = by.get(("cpp", 64))
        also = f"; {at64.decisions_s:,.0f} at --tables 64" if at64 is not None and at64 is not best else ""
        print(f"  C++: best {best.decisions_s:,.0f} decisions/s at --tables {best.tables}{also} "
              f"(goal ≥ {CPP_GOAL_DECISIONS_S:,.0f}): {'met' if met else 'NOT met'}")


async def run_all() -> None:
    print_machine()
    sample = await sample_messages()
    pingpong: list[PingPong] = []
    try:
        pingpong = await bench_pingpong(sample, seconds=PINGPONG_SECONDS, rounds=1)
    except Exception as exc:
        print(f"  ping-pong failed: {exc!r}")
    have_cpp = CPP_BOT.is_file() and os.access(CPP_BOT, os.X_OK)
    print(f"\nOne row per match (run_local_match, {LANES} lanes of N tables each, no sandbox; {FIRST_HANDS:,} hands "
          f"at 1 table, then about {ROW_SECONDS:g} s at the previous row's rate); ping-pong: {PINGPONG_SECONDS:g} s "
          "per method, referee µs = server µs/trip, bots µs = client µs/trip")
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="bench-tables-") as tmp:
        log_dir = Path(tmp)
        for pair in PAIRS:
            if pair.key == "cpp" and not have_cpp:
                continue
            previous: Row | None = None
            for tables in TABLE_COUNTS:
                row = await bench_row(pair, tables, hands_for(tables, previous), log_dir)
                rows.append(row)
                previous = row
                print(f"  {pair.label}, {tables} tables, {row.hands:,} hands: {row.total_s:.1f} s in all, "
                      f"{row.startup_s:.1f} s until the first hand ended" + (f"; failed: {row.error}"
                                                                             if row.error else ""), flush=True)
                if row.result is not None:
                    report_problems([row.result], log_dir)
    print()
    print(FORMAT.format(*HEADER))
    for ping in pingpong:
        print(pingpong_line(ping))
    for row in rows:
        base = next((r for r in rows if r.pair is row.pair and r.tables == 1), None)
        print(row_line(row, base))
    if not have_cpp:
        print(f"(no C++ rows: {CPP_BOT.relative_to(ROOT)} is missing; `make install` builds it)")
    noisy = [r for r in rows if r.window is not None and (r.window.others_cpu or 0.0) > NOISY_OTHERS]
    if noisy:
        print(f"(other work on the machine used over {NOISY_OTHERS:.0%} of a core during {len(noisy)} of the "
              f"{len(rows)} rows: their figures are low and uneven)")
    print_goals(rows)
    print()
    print_load("at end")


def main() -> None:
    """Play every row and print the table and the goals."""
    asyncio.run(run_all())


if __name__ == "__main__":
    main()
