"""How soon a tournament's leaderboard follows its last hand: a real ``arena tournament --json`` subprocess (two
cheap Python sample bots, heads-up, ``HANDS`` hands at ``tables = 64``, a database), timed from the last hand's end
(its ``finished_at`` in the database) to the leaderboard's first line on standard output. The leaderboard shows
each bot's all-in EV and AIVAT, worked out from every hand (0.5-1 ms a hand); this checkout rescores the hands in a
worker process as they are recorded (arena.ratings.scoring_worker.RecordedScoring). Beside it, the peer in the same
run: the same tournament on the code before (a detached ``git worktree`` of ``PEER_COMMIT``, run with this
interpreter; skipped when git or that commit is not at hand), whose leaderboard rescored every hand after the last
one. Never asserts. Run it alone with ``python -c "from tests.bench.bench_scoring import main; main()"``, or a
shorter one with ``ARENA_BENCH_SCORING_HANDS=20000``.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from tests.bench.bench_memory import BOTS, ROOT, _cpu_s, _workers, peer_source, remove_peer

PEER_COMMIT = "56604c8"  # main before a tournament's hands were rescored as they were recorded
HANDS = int(os.environ.get("ARENA_BENCH_SCORING_HANDS", "100000"))
TABLES = 64
TIMEOUT_S = 1_800.0
SEED = "bench-scoring-20261204"
GOAL_S = 1.0


@dataclass(slots=True)
class Run:
    """When things happened in one tournament (wall times)."""

    label: str
    launched_at: float = 0.0
    first_hand_at: float = 0.0
    last_hand_at: float = 0.0
    board_at: float = 0.0  # the leaderboard's first line
    exited_at: float = 0.0
    hands: int = 0
    worker_cpu_s: float = 0.0
    error: str = ""


def _hands(db_path: Path) -> tuple[int, float, float]:
    """Hands recorded, the first one's start and the last one's end (zeros if the file cannot be read)."""
    try:
        conn = sqlite3.connect(f"{db_path.as_uri()}?mode=ro", uri=True, timeout=1.0)
        try:
            row = conn.execute("SELECT COUNT(*), MIN(started_at), MAX(finished_at) FROM hands").fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return 0, 0.0, 0.0
    return int(row[0] or 0), float(row[1] or 0.0), float(row[2] or 0.0)


def config_file(folder: Path, hands: int) -> Path:
    """The tournament's file: the calling station against the random bot, run with this interpreter."""
    python = sys.executable
    (folder / "seed").write_text(SEED + "\n")
    path = folder / "cup.toml"
    path.write_text(f'''name = "bench-scoring"
seed_file = "seed"
hands = {hands}
tables = {TABLES}

[[bots]]
name = "caller"
command = "'{python}' '{BOTS / 'calling_station.py'}'"

[[bots]]
name = "random"
command = "'{python}' '{BOTS / 'random_bot.py'}' --seed 1"
''')
    return path


def play(label: str, source: Path, hands: int, folder: Path) -> Run:
    """One ``arena tournament --json`` on ``source``'s code, watched until it exits."""
    run = Run(label)
    folder.mkdir(parents=True, exist_ok=True)
    db_path = folder / "cup.db"
    command = [sys.executable, "-c", "import sys; from arena.cli import main; sys.argv[0] = 'arena'; sys.exit(main())",
               "tournament", str(config_file(folder, hands)), "--db", str(db_path), "--no-progress", "--json",
               "--no-sandbox"]
    env = dict(os.environ, PYTHONPATH=str(source), PYTHONUNBUFFERED="1")
    run.launched_at = time.time()
    process = subprocess.Popen(command, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)

    def read() -> None:
        assert process.stdout is not None
        for _ in process.stdout:
            if not run.board_at:
                run.board_at = time.time()

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
        for worker in _workers(process.pid):
            run.worker_cpu_s = max(run.worker_cpu_s, _cpu_s(worker))
        time.sleep(0.1)
    run.exited_at = time.time()
    code = process.wait()
    reader.join(timeout=5)
    run.hands, run.first_hand_at, run.last_hand_at = _hands(db_path)
    if code not in (0,) and not run.error:
        run.error = f"exit status {code}: {''.join(errors)[-400:]}"
    return run


def report(runs: list[Run], hands: int) -> None:
    """One row per run, then the goal."""
    print(f"arena tournament --json, 2 Python sample bots (calling station, random), tables = {TABLES}, --db, "
          f"{hands:,} hands")
    print(f"{'code':<22} {'hands':>8} {'play h/s':>8} {'to board':>9} {'to exit':>8} {'all s':>7} {'worker ms/h':>11}")
    for run in runs:
        play_s = run.last_hand_at - run.first_hand_at
        wait = f"{run.board_at - run.last_hand_at:.2f} s" if run.board_at and run.last_hand_at else "-"
        exit_wait = f"{run.exited_at - run.last_hand_at:.2f} s" if run.last_hand_at else "-"
        rate = f"{run.hands / play_s:,.0f}" if play_s > 0 else "-"
        whole = f"{run.board_at - run.launched_at:.1f}" if run.board_at else "-"
        worker = f"{1000 * run.worker_cpu_s / run.hands:.2f}" if run.worker_cpu_s and run.hands else "-"
        print(f"{run.label:<22} {run.hands:>8,} {rate:>8} {wait:>9} {exit_wait:>8} {whole:>7} {worker:>11}")
        if run.error:
            print(f"  {run.label}: {run.error}")
    print("to board / to exit: seconds from the last hand's end to the leaderboard's first line and to the process's "
          "end; play h/s: hands over the time from the first hand's start to the last one's end; all s: from the "
          "command's launch to the leaderboard; worker ms/h: the scoring worker's CPU per hand")
    print(f"goal: the leaderboard within {GOAL_S:.0f} s of the last hand")


def main() -> None:
    """The tournament on this checkout's code and on the peer's, one after the other."""
    with tempfile.TemporaryDirectory(prefix="arena-bench-scoring-") as tmp:
        folder = Path(tmp)
        runs = [play("this checkout", ROOT, HANDS, folder / "this")]
        peer = peer_source(folder, PEER_COMMIT)
        if peer is not None:
            try:
                runs.append(play(f"peer ({PEER_COMMIT})", peer, HANDS, folder / "peer-run"))
            finally:
                remove_peer(peer)
        report(runs, HANDS)


if __name__ == "__main__":
    main()
