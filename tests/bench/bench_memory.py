"""The referee's memory over a long match, and how soon its result follows the last hand: a real ``arena match``
subprocess (two cheap Python sample bots, ``--tables 64``, a database) of ``HANDS`` hands, its RSS (VmRSS of
/proc/PID/status) sampled every ``SAMPLE_S``; printed: the RSS after 5,000 hands, the peak (the kernel's
high-water mark, VmHWM, which the end of the match and its result computation are part of), the RSS at the end, the
ratio of peak to the level after 5,000 hands (goal: at most 1.5), the scoring worker's own peak, and the seconds from
the last hand (its ``finished_at`` in the database) to the result line on standard output. Beside it, the peer in
the same run: the same match on the code before sessions were scored as they finish (a detached ``git worktree``
of ``PEER_COMMIT``, run with this interpreter; skipped when git or that commit is not at hand). Never asserts.
Run it alone with ``python -c "from tests.bench.bench_memory import main; main()"``, or a shorter one with
``ARENA_BENCH_MEMORY_HANDS=20000``.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "sample_bots" / "python"
PEER_COMMIT = "3ff9849"  # main before sessions were scored as they finish (the tally read every hand back at the end)
HANDS = int(os.environ.get("ARENA_BENCH_MEMORY_HANDS", "100000"))
TABLES = 64
EARLY_HANDS = 5_000  # the level the peak is compared with
GOAL_RATIO = 1.5
GOAL_RESULT_S = 1.0
SAMPLE_S = 0.1
TIMEOUT_S = 1_800.0
SEED = "bench-memory-20261204"
MATCH_ID = "bench-memory"


@dataclass(slots=True)
class Run:
    """What one match showed: RSS samples (seconds, hands recorded, kB), and when things happened."""

    label: str
    samples: list[tuple[float, int, int, float]] = field(default_factory=list)  # + the referee's CPU seconds
    peak_kb: int = 0  # VmHWM of the referee, last seen
    worker_peak_kb: int = 0  # the largest VmHWM of a scoring worker (a multiprocessing child), if any
    worker_cpu_s: float = 0.0
    launched_at: float = 0.0  # wall time
    first_hand_at: float = 0.0  # wall time the first hand began
    last_hand_at: float = 0.0  # wall time of the last hand's end
    result_at: float = 0.0  # wall time the result line came out
    exited_at: float = 0.0
    hands: int = 0
    code: int | None = None
    error: str = ""

    def rss_after(self, hands: int) -> int:
        """The first RSS sample taken once ``hands`` hands were recorded (0 if none)."""
        return next((kb for _, n, kb, _ in self.samples if n >= hands), 0)

    def play_cpu_ms(self) -> float:
        """The referee's CPU per hand while the hands were played (from the first sample with a hand recorded to
        the first with all of them), in ms."""
        first = next(((n, cpu) for _, n, _, cpu in self.samples if n > 0), None)
        last = next(((n, cpu) for _, n, _, cpu in self.samples if n >= self.hands), None)
        if first is None or last is None or last[0] <= first[0]:
            return 0.0
        return 1000.0 * (last[1] - first[1]) / (last[0] - first[0])


def _cpu_s(pid: int) -> float:
    """User and system CPU seconds of a process so far (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _status(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM of a process, in kB (empty once it is gone)."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return {}
    out = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(value.split()[0])
    return out


def _workers(pid: int) -> list[int]:
    """The referee's children that score sessions (not bots): arena.ratings.scoring_worker."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []
    found = []
    for child in children:
        try:
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
        if b"arena.ratings.scoring_worker" in cmdline:
            found.append(int(child))
    return found


def _hands(db_path: Path) -> tuple[int, float, float]:
    """Hands recorded so far, the first one's start and the last one's end (0 if none or no file yet)."""
    try:
        conn = sqlite3.connect(f"{db_path.as_uri()}?mode=ro", uri=True, timeout=1.0)
        try:
            row = conn.execute("SELECT COUNT(*), MIN(started_at), MAX(finished_at) FROM hands WHERE match_id = ?",
                               (MATCH_ID,)).fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return 0, 0.0, 0.0
    return int(row[0] or 0), float(row[1] or 0.0), float(row[2] or 0.0)


def play(label: str, source: Path, hands: int, folder: Path) -> Run:
    """One ``arena match`` of ``hands`` hands on ``source``'s code, watched until it exits."""
    run = Run(label)
    folder.mkdir(parents=True, exist_ok=True)
    db_path = folder / "match.db"
    seed = folder / "seed"
    seed.write_text(SEED + "\n")
    python = sys.executable
    command = [
        python, "-c", "import sys; from arena.cli import main; sys.argv[0] = 'arena'; sys.exit(main())", "match",
        "--bot", f"caller='{python}' '{BOTS / 'calling_station.py'}'",
        "--bot", f"random='{python}' '{BOTS / 'random_bot.py'}' --seed 1",
        "--hands", str(hands), "--tables", str(TABLES), "--db", str(db_path), "--match-id", MATCH_ID,
        "--seed-file", str(seed), "--no-sandbox",
    ]
    env = dict(os.environ, PYTHONPATH=str(source), PYTHONUNBUFFERED="1")
    run.launched_at = time.time()
    process = subprocess.Popen(command, cwd=source, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    output: list[str] = []

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            if line.startswith(f"match {MATCH_ID}:") and not run.result_at:
                run.result_at = time.time()
            output.append(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    errors: list[str] = []
    threading.Thread(target=lambda: errors.extend(process.stderr or ()), daemon=True).start()
    started = time.monotonic()
    while process.poll() is None:
        if time.monotonic() - started > TIMEOUT_S:
            process.kill()
            run.error = f"killed after {TIMEOUT_S:.0f} s"
            break
        status = _status(process.pid)
        if status:
            recorded, _, _ = _hands(db_path) if db_path.exists() else (0, 0.0, 0.0)
            run.samples.append((time.monotonic() - started, recorded, status.get("VmRSS", 0), _cpu_s(process.pid)))
            run.peak_kb = max(run.peak_kb, status.get("VmHWM", 0))
            for worker in _workers(process.pid):
                run.worker_peak_kb = max(run.worker_peak_kb, _status(worker).get("VmHWM", 0))
                run.worker_cpu_s = max(run.worker_cpu_s, _cpu_s(worker))
        time.sleep(SAMPLE_S)
    run.exited_at = time.time()
    run.code = process.wait()
    reader.join(timeout=5)
    run.hands, run.first_hand_at, run.last_hand_at = _hands(db_path)
    if run.code != 0 and not run.error:
        run.error = f"exit status {run.code}: {''.join(errors)[-400:]}"
    return run


def peer_source(folder: Path, commit: str = PEER_COMMIT) -> Path | None:
    """A detached worktree of ``commit`` with this checkout's built evaluator, or None without git."""
    if shutil.which("git") is None:
        return None
    target = folder / "peer"
    done = subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(target), commit],
                          capture_output=True, text=True)
    if done.returncode != 0:
        print(f"(no peer: git worktree of {commit} failed: {done.stderr.strip()[:200]})")
        return None
    # the peer's evaluator was arena.cards._eval; the same C code is built now as the SDK's arena_sdk._eval
    for built in [*(ROOT / "arena" / "cards").glob("_eval*.so"), *(ROOT / "proto" / "python" / "arena_sdk").glob(
            "_eval*.so")]:
        shutil.copy2(built, target / "arena" / "cards" / built.name)
    return target


def remove_peer(target: Path) -> None:
    subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(target)], capture_output=True)


def _mb(kb: int) -> str:
    return f"{kb / 1024:,.0f} MB" if kb else "-"


def report(runs: list[Run], hands: int) -> None:
    """One row per run, then the goals."""
    print(f"arena match, 2 Python sample bots (calling station, random), --tables {TABLES}, --db, {hands:,} hands; "
          f"referee RSS sampled every {SAMPLE_S} s")
    print(f"{'code':<18} {'RSS @5k':>8} {'peak':>8} {'end':>8} {'peak/5k':>7} {'worker':>7} {'to result':>9} "
          f"{'to exit':>8} {'play h/s':>8} {'all h/s':>8} {'ref ms/h':>8} {'worker ms/h':>11}")
    for run in runs:
        early = run.rss_after(EARLY_HANDS)
        end = run.samples[-1][2] if run.samples else 0
        ratio = f"{run.peak_kb / early:.2f}" if early else "-"
        wait = f"{run.result_at - run.last_hand_at:.2f} s" if run.result_at and run.last_hand_at else "-"
        exit_wait = f"{run.exited_at - run.last_hand_at:.2f} s" if run.last_hand_at else "-"
        play = run.last_hand_at - run.first_hand_at
        overall = run.result_at - run.launched_at
        play_rate = f"{run.hands / play:,.0f}" if play > 0 else "-"
        overall_rate = f"{run.hands / overall:,.0f}" if run.result_at and overall > 0 else "-"
        worker = f"{1000 * run.worker_cpu_s / run.hands:.2f}" if run.worker_cpu_s and run.hands else "-"
        print(f"{run.label:<18} {_mb(early):>8} {_mb(run.peak_kb):>8} {_mb(end):>8} {ratio:>7} "
              f"{_mb(run.worker_peak_kb):>7} {wait:>9} {exit_wait:>8} {play_rate:>8} {overall_rate:>8} "
              f"{run.play_cpu_ms():>8.2f} {worker:>11}")
        if run.error:
            print(f"  {run.label}: {run.error}")
    print(f"RSS @5k: the referee's after {EARLY_HANDS:,} hands; peak: its VmHWM, the end and the result included; "
          "worker: the scoring worker's peak; to result / to exit: seconds from the last hand's end to the result "
          "line and to the process's end; play h/s: hands over the time from the first hand's start to the last "
          "one's end; all h/s: hands over the time from the command's start to its result line; ref ms/h: the "
          "referee's CPU per hand while the hands were played; worker ms/h: the worker's CPU per hand")
    print(f"goals: peak at most {GOAL_RATIO}x RSS @5k; the result line within {GOAL_RESULT_S:.0f} s of the last hand")


def main() -> None:
    """The match on this checkout's code and on the peer's, one after the other."""
    with tempfile.TemporaryDirectory(prefix="arena-bench-memory-") as tmp:
        folder = Path(tmp)
        runs = [play("this checkout", ROOT, HANDS, folder / "this")]
        peer = peer_source(folder)
        if peer is not None:
            try:
                runs.append(play(f"peer ({PEER_COMMIT})", peer, HANDS, folder / "peer-run"))
            finally:
                remove_peer(peer)
        report(runs, HANDS)


if __name__ == "__main__":
    main()
