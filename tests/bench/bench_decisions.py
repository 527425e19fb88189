"""Decisions per second of wall time, start-up included, against the ACPC dealer: the figures issue 27 names. Each
row is one real ``arena match`` command (a subprocess, as a user runs it: interpreter start-up, imports, the bots'
launch and connection, the result line with all-in EV and AIVAT), heads-up no-limit, ``HANDS`` hands, unsandboxed
(the ACPC dealer has no sandbox either); its wall time runs from the command's launch to its exit, its decisions are
the bots' own (the ``decisions`` of ``--json``'s results).

Rows: two C++ sample bots at ``--tables 64``, two Python SDK random bots at ``--tables 64``, two C++ bots at one
table (the goals' three, unrecorded like the ACPC dealer's, which writes a plain log), two Python SDK calling
stations at ``--tables 64`` (the SDK with the cheapest strategy: the random bot hashes its seed, the hand and the
request for every decision's draws, and folds often, 3.7 decisions a hand where the stations play 8), and
the first again recorded to a database (``--db``: every hand in SQLite with its hash chain, read back by the scoring
worker). Beside them, the reference: the ACPC dealer (C) with its two C example players, heads-up no-limit over
loopback TCP, measured on this machine (issue 27): 2,131 to 2,680 hands/s at 6.3 decisions a hand, 13,400 to 16,900
decisions/s. No ACPC dealer is built here (its source is not on the package registries this project installs from),
so that line is the recorded figure, not one from this run. Prints a table and the goals; never asserts.
Every row is played ``RUNS`` times, the rows taking turns (all of them once, then again), and shown by its median
run with the range of its runs: a single run of a row varies by 10% from one to the next on this machine, and the
rows' turns spread a slow spell over all of them. The goals are judged on the medians.
Then every row is played once more with the CPU of each process counted (``report_cpu``; not with
``ARENA_BENCH_DECISIONS_CPU=0``): the referee's, each bot's (its command run under ``rusage_of.py``) and the scoring
worker's, a decision, which is how the SDK's goal is judged (a Python bot at 64 tables spends no more CPU a decision
than the referee). A speed probe at the start and the end (``bench_grpc.speed_probe``: a fixed Python loop's CPU)
says how fast the machine was, since its speed moves by a third from day to day and by half within a session. Run
it alone with ``python -c "from tests.bench.bench_decisions import main; main()"``, or shorter with
``ARENA_BENCH_DECISIONS_HANDS=4000`` and ``ARENA_BENCH_DECISIONS_RUNS=1``.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.bench.bench_grpc import BOTS, ROOT, print_load, print_machine, print_speed

HANDS = int(os.environ.get("ARENA_BENCH_DECISIONS_HANDS", "20000"))
RUNS = int(os.environ.get("ARENA_BENCH_DECISIONS_RUNS", "3"))  # of each row, taking turns
SEED = "bench-decisions-20261204"
MATCH_ID = "bench-decisions"  # fixed: the random bots seed their draws from the hand ids, so every run plays alike
TIMEOUT_S = 900.0
CPU_RUN = os.environ.get("ARENA_BENCH_DECISIONS_CPU", "1") != "0"  # one more run of each row, its CPU counted
RUSAGE_OF = Path(__file__).resolve().parent / "rusage_of.py"
# the referee's command: ``arena`` run as the CLI runs it; with ARENA_BENCH_CPU_FILE set, its process's own CPU (all
# its threads, none of its children's) is appended to that file as it exits
REFEREE = ("import os, sys, atexit, resource\n"
           "def _cpu():\n"
           "    u = resource.getrusage(resource.RUSAGE_SELF)\n"
           "    with open(os.environ['ARENA_BENCH_CPU_FILE'], 'a') as f:\n"
           "        f.write(f'referee {u.ru_utime + u.ru_stime:.6f} 0 {u.ru_nvcsw + u.ru_nivcsw}\\n')\n"
           "if os.environ.get('ARENA_BENCH_CPU_FILE'): atexit.register(_cpu)\n"
           "from arena.cli import main; sys.argv[0] = 'arena'; sys.exit(main())")
CPP_BOT = ROOT / "sample_bots" / "cpp" / "build" / "arena-cpp-bot"

ACPC_HANDS_S = (2_131.0, 2_680.0)  # the ACPC dealer with its two example players, measured here (issue 27)
ACPC_DECISIONS_PER_HAND = 6.3
ACPC_DECISIONS_S = (13_400.0, 16_900.0)


@dataclass(frozen=True, slots=True)
class Setup:
    """One row: which bots, at how many tables, whether the match is recorded (``--db``), and its goal as a
    multiple of the ACPC dealer's decisions/s (0: no goal, a row for comparison)."""

    label: str
    bots: str  # "cpp", "python" (random bots) or "station" (Python calling stations)
    tables: int
    goal: float
    db: bool = False


SETUPS = (
    Setup("2 C++ bots", "cpp", 64, 2.0),
    Setup("2 Python random bots", "python", 64, 1.0),
    Setup("2 C++ bots", "cpp", 1, 0.5),
    Setup("2 Python stations", "station", 64, 0.0),
    Setup("2 C++ bots, --db", "cpp", 64, 0.0, db=True),
)


@dataclass(frozen=True, slots=True)
class Cpu:
    """CPU seconds of one match: the referee's process (every thread of it, up to its exit handlers), each bot's
    processes (one a half of the duplicate match: every process its command started), and the rest (the scoring
    worker, anything else the referee started, and the referee's own teardown after its exit handlers; not the
    wrappers that count the bots' CPU)."""

    referee: float
    bots: dict[str, float]
    rest: float
    processes: dict[str, int]  # each bot's processes counted (a process killed before it was reaped is not)
    switches: dict[str, int] = field(default_factory=dict)  # context switches: the referee's and each bot's


def _children_cpu() -> float:
    """User and system seconds of this process's children that have exited (and of everything they waited for)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _cpu_of(path: Path, total: float) -> Cpu | None:
    """What the referee and the bots' wrappers wrote to ``path``, with ``total``, all the match's CPU (None if the
    referee's line is missing: it did not exit cleanly)."""
    referee = None
    bots: dict[str, float] = {}
    processes: dict[str, int] = {}
    wrappers = 0.0
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    switches: dict[str, int] = {}
    for line in lines:
        label, cpu, own, switched = line.split()
        switches[label] = switches.get(label, 0) + int(switched)
        if label == "referee":
            referee = float(cpu)
        else:
            bots[label] = bots.get(label, 0.0) + float(cpu)
            processes[label] = processes.get(label, 0) + 1
            wrappers += float(own)
    if referee is None:
        return None
    return Cpu(referee, bots, max(0.0, total - referee - sum(bots.values()) - wrappers), processes, switches)


@dataclass(slots=True)
class Outcome:
    """What one ``arena match`` came to."""

    setup: Setup
    seconds: float = 0.0
    hands: int = 0
    decisions: int = 0
    error: str = ""
    bot_decisions: dict[str, int] = field(default_factory=dict)  # each bot's, by name
    cpu: Cpu | None = None  # counted (``play``'s ``count_cpu``)

    @property
    def decisions_s(self) -> float:
        return self.decisions / self.seconds if self.seconds > 0 else 0.0

    @property
    def hands_s(self) -> float:
        return self.hands / self.seconds if self.seconds > 0 else 0.0


def bot_flags(kind: str, cpu_file: Path | None = None) -> list[str]:
    """The two ``--bot`` flags of a row; with ``cpu_file``, each bot's command runs under ``rusage_of.py``, which
    appends its CPU to that file when it exits."""
    python = sys.executable
    if kind == "cpp":
        bots = [("cpp1", f"'{CPP_BOT}' --max-tables 64"), ("cpp2", f"'{CPP_BOT}' --max-tables 64")]
    elif kind == "station":
        bots = [(f"station{n}", f"'{python}' '{BOTS / 'calling_station.py'}'") for n in (1, 2)]
    else:
        bots = [(f"random{n}", f"'{python}' '{BOTS / 'random_bot.py'}' --seed {n}") for n in (1, 2)]
    flags = []
    for name, command in bots:
        if cpu_file is not None:
            command = f"'{python}' '{RUSAGE_OF}' '{cpu_file}' {name} {command}"
        flags += ["--bot", f"{name}={command}"]
    return flags


def play(setup: Setup, hands: int, folder: Path, count_cpu: bool = False) -> Outcome:
    """One ``arena match --json`` of ``hands`` hands, timed from its launch to its exit; with ``count_cpu`` its CPU
    counted too, the referee's, each bot's and the rest's (``Outcome.cpu``)."""
    folder.mkdir(parents=True, exist_ok=True)
    seed = folder / "seed"
    seed.write_text(SEED + "\n")
    cpu_file = folder / "cpu.txt" if count_cpu else None
    command = [
        sys.executable, "-c", REFEREE,
        "match", *bot_flags(setup.bots, cpu_file), "--hands", str(hands), "--tables", str(setup.tables),
        *(["--db", str(folder / "match.db")] if setup.db else []), "--seed-file", str(seed), "--no-sandbox", "--json",
        "--match-id", MATCH_ID,
    ]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if cpu_file is not None:
        env["ARENA_BENCH_CPU_FILE"] = str(cpu_file)
    outcome = Outcome(setup)
    children = _children_cpu()
    started = time.perf_counter()
    try:
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT_S, env=env)
    except subprocess.TimeoutExpired:
        outcome.error = f"killed after {TIMEOUT_S:.0f} s"
        return outcome
    outcome.seconds = time.perf_counter() - started
    if cpu_file is not None:
        outcome.cpu = _cpu_of(cpu_file, _children_cpu() - children)
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        outcome.error = f"exit status {done.returncode}: {done.stderr.strip()[-300:]}"
        return outcome
    outcome.hands = int(report["hands"]["played"])
    outcome.decisions = sum(int(row["decisions"]) for row in report["results"])
    outcome.bot_decisions = {str(row["name"]): int(row["decisions"]) for row in report["results"]}
    if report["errors"]:
        outcome.error = "; ".join(report["errors"])[:300]
    return outcome


def median_run(runs: list[Outcome]) -> Outcome:
    """The run of a row with the median wall time (of those that finished), else its first failure."""
    done = sorted((o for o in runs if o.seconds and o.decisions), key=lambda o: o.seconds)
    return done[len(done) // 2] if done else runs[0]


def report(rows: list[list[Outcome]], hands: int) -> None:
    """One line per row (its median run, and the range of its runs' decisions/s), the ACPC dealer's reference line,
    then the goals."""
    low, high = ACPC_DECISIONS_S
    print(f"\narena match, heads-up no-limit, {hands:,} hands, --no-sandbox (--db where the row says so); wall time "
          f"from launch to exit; each row's median of {max(len(r) for r in rows)} run(s), with their range")
    print(f"{'bots':<22} {'tables':>6} {'seconds':>8} {'hands/s':>11} {'decisions':>10} {'dec/hand':>8} "
          f"{'decisions/s':>13} {'runs':>15} {'× ACPC':>10}")
    outcomes = []
    for runs in rows:
        o = median_run(runs)
        outcomes.append(o)
        if o.error and not o.seconds:
            print(f"{o.setup.label:<22} {o.setup.tables:>6}  failed: {o.error}")
            continue
        rates = [r.decisions_s for r in runs if r.seconds and r.decisions]
        spread = f"{min(rates):,.0f}-{max(rates):,.0f}"
        per_hand = o.decisions / o.hands if o.hands else 0.0
        ratio = f"{o.decisions_s / high:.2f}-{o.decisions_s / low:.2f}"
        print(f"{o.setup.label:<22} {o.setup.tables:>6} {o.seconds:>8.1f} {o.hands_s:>11,.0f} {o.decisions:>10,} "
              f"{per_hand:>8.2f} {o.decisions_s:>13,.0f} {spread:>15} {ratio:>10}")
        for r in runs:
            if r.error:
                print(f"  ({r.error})")
    hands_s = f"{ACPC_HANDS_S[0]:,.0f}-{ACPC_HANDS_S[1]:,.0f}"
    print(f"{'ACPC dealer (recorded)':<22} {'1':>6} {'-':>8} {hands_s:>11} {'-':>10} {ACPC_DECISIONS_PER_HAND:>8.1f} "
          f"{f'{low:,.0f}-{high:,.0f}':>13} {'-':>15} {'1':>10}")
    print("ACPC dealer: its C dealer and two C example players, heads-up no-limit over loopback TCP, measured on this "
          "machine (issue 27), not in this run; × ACPC: this row's decisions/s over the dealer's high and low figure")
    print("goals (decisions/s against the ACPC dealer's, judged on the medians): C++ bots at 64 tables ≥ 2×, Python "
          "bots at 64 tables ≥ 1×, C++ bots at one table ≥ 0.5× (the aim 1×)")
    for o in outcomes:
        if not o.seconds or not o.setup.goal:
            continue
        worst, best = o.decisions_s / high, o.decisions_s / low
        verdict = "met" if worst >= o.setup.goal else ("met against the low figure only" if best >= o.setup.goal
                                                        else "NOT met")
        print(f"  {o.setup.label}, {o.setup.tables} table(s): {worst:.2f}-{best:.2f}× (goal ≥ {o.setup.goal:g}×): "
              f"{verdict}")


def report_cpu(outcomes: list[Outcome]) -> None:
    """Each row's CPU a decision: the referee's (its process, per decision of the match), each bot's (its processes,
    per decision it made), and the rest's per hand; then the SDK's goal, judged on the Python rows: a Python bot at
    64 tables spends no more CPU a decision than the referee."""
    print("\nCPU a decision, one more run of each row with every process's CPU counted (each bot's command run under "
          "tests/bench/rusage_of.py): the referee's process, all its threads, per decision of the match; each bot's "
          "processes (one a half), per decision it made; the rest (the scoring worker, and the referee's teardown "
          "after its exit handlers), per hand; and the context switches of the referee's process (all its threads) "
          "per decision of the match and of each bot's per decision it made (a thread's sleep and wake-up, or its "
          "preemption: what a decision's round trip waits on at one table)")
    print(f"{'bots':<22} {'tables':>6} {'referee µs':>11} {'bots µs':>17} {'rest µs/hand':>13} "
          f"{'switches a decision: referee, bots':>35}")
    verdicts = []
    for o in outcomes:
        cpu = o.cpu
        if cpu is None or not o.decisions:
            print(f"{o.setup.label:<22} {o.setup.tables:>6}  not counted: {o.error or 'no CPU figures'}")
            continue
        referee = 1e6 * cpu.referee / o.decisions
        each = {name: 1e6 * seconds / o.bot_decisions[name] for name, seconds in cpu.bots.items()
                if o.bot_decisions.get(name)}
        bots = ", ".join(f"{us:.1f}" for us in each.values()) or "-"
        woken = [cpu.switches.get("referee", 0) / o.decisions] + [
            cpu.switches.get(name, 0) / o.bot_decisions[name] for name in cpu.bots if o.bot_decisions.get(name)]
        print(f"{o.setup.label:<22} {o.setup.tables:>6} {referee:>11.1f} {bots:>17} "
              f"{1e6 * cpu.rest / max(o.hands, 1):>13.1f} {', '.join(f'{w:.2f}' for w in woken):>35}")
        if len(set(cpu.processes.values())) > 1 or len(cpu.processes) < len(o.bot_decisions):
            print(f"  (processes counted per bot: {cpu.processes}: a bot's process that was killed is missing, and "
                  "its bot's figure is low)")
        if o.setup.bots != "cpp" and o.setup.tables > 1 and each:
            worst = max(each.values())
            verdicts.append(f"{o.setup.label}: {worst:.1f} µs against the referee's {referee:.1f}: "
                            + ("met" if worst <= referee else "NOT met"))
    if verdicts:
        print("the SDK's goal (a Python bot at 64 tables spends no more CPU a decision than the referee): "
              + "; ".join(verdicts))


def main() -> None:
    """Every row ``RUNS`` times, the rows taking turns; then each once more with its CPU counted."""
    print_machine()
    print_speed("at start")
    setups = []
    for setup in SETUPS:
        if setup.bots == "cpp" and not (CPP_BOT.is_file() and os.access(CPP_BOT, os.X_OK)):
            print(f"(no {setup.label} row: {CPP_BOT.relative_to(ROOT)} is missing; `make install` builds it)")
            continue
        setups.append(setup)
    rows: list[list[Outcome]] = [[] for _ in setups]
    with tempfile.TemporaryDirectory(prefix="arena-bench-decisions-") as tmp:
        for run in range(max(RUNS, 1)):
            for i, setup in enumerate(setups):
                outcome = play(setup, HANDS, Path(tmp) / f"row{i}-run{run}")
                print(f"  run {run + 1}: {setup.label}, {setup.tables} table(s): {outcome.seconds:.1f} s"
                      + (f"; {outcome.error}" if outcome.error else ""), flush=True)
                rows[i].append(outcome)
        report(rows, HANDS)
        if CPU_RUN:
            counted = []
            for i, setup in enumerate(setups):
                outcome = play(setup, HANDS, Path(tmp) / f"row{i}-cpu", count_cpu=True)
                print(f"  CPU run: {setup.label}, {setup.tables} table(s): {outcome.seconds:.1f} s"
                      + (f"; {outcome.error}" if outcome.error else ""), flush=True)
                counted.append(outcome)
            report_cpu(counted)
    print_load("at end")
    print_speed("at end")


if __name__ == "__main__":
    main()
