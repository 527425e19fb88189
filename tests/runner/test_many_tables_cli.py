"""Many tables per bot connection (``--tables N``, the TOML key ``tables``) over the real command line: real
``python -m arena`` processes, sandboxed bots, SQLite. The records are those of ``--tables 1`` (same hands, cards,
actions and payoffs; only the table ids differ), also after a SIGKILL and ``--resume``; a bot that crashes with many
tables open leaves a finished, fully recorded match; bad values of the setting are refused naming it."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from arena import scratch
from arena.cli.exits import EXIT_BOT_FAILED, EXIT_OK, EXIT_USAGE
from arena.engine import ActionKind
from arena.records import queries
from arena.records.db import Database
from arena.records.verify import verify_match
from arena.referee import HandRecord
from arena.runner.tournament import TournamentConfig, TournamentError
from tests.bots import caller, random_bot

PY = sys.executable
# two seeded random bots and a calling station (the C++ sample bot's styles: cheap to start, reproducible)
BOTS = {"r1": random_bot(1), "r2": random_bot(2), "cs": caller()}
BOT_ARGS = [arg for name, command in BOTS.items() for arg in ("--bot", f"{name}={command}")]
HANDS = 300  # 100 duplicate sessions of three rotations: 100 hands per lane
MATCH = "m"
# Fields of `arena leaderboard --json` that depend on the run, not on the hands: when the board and the match were
# made (wall-clock times) and the bots' mean think time (measured; with 16 tables a bot's requests queue behind
# each other, so it is several times that of one table)
# the final hash seals one run's record, its timings and table ids included (arena.records.evidence)
RUN_DEPENDENT = frozenset({"generated_at", "created_at", "think_ms", "final_hash"})
# the same in a match's --json: its duration and the bots' mean think time
MATCH_RUN_DEPENDENT = frozenset({"seconds", "mean_think_ms", "final_hash"})


def arena(*args: str | Path, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``python -m arena ARGS`` as a user runs it (without an ARENA_SEED of the caller's)."""
    env = {k: v for k, v in os.environ.items() if k != "ARENA_SEED"}
    return subprocess.run([PY, "-m", "arena", *map(str, args)], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=timeout, check=False)


def match_args(db: Path, tables: int, seed_file: Path | None = None) -> list[str]:
    """``arena match`` with the three bots of ``BOTS``, recording into ``db``, on ``tables`` tables per connection."""
    args = ["match", *BOT_ARGS, "--hands", str(HANDS), "--db", str(db), "--match-id", MATCH, "--tables", str(tables),
            "--json"]
    return args + (["--seed-file", str(seed_file)] if seed_file is not None else [])


def play(db: Path, tables: int, seed_file: Path) -> dict[str, Any]:
    """Play the match to the end; its --json report."""
    proc = arena(*match_args(db, tables, seed_file), cwd=db.parent)
    assert proc.returncode == EXIT_OK, proc.stdout + proc.stderr
    report: dict[str, Any] = json.loads(proc.stdout)
    return report


def records(db: Path, match_id: str = MATCH) -> list[HandRecord]:
    database = Database(db, read_only=True)
    try:
        return list(queries.hand_records(database, match_id))
    finally:
        database.close()


def essence(record: HandRecord) -> tuple[object, ...]:
    """Everything of a hand that must not depend on the tables it was played on (not its table, not its times)."""
    return (
        record.hand_id, record.hand_number, record.deal, record.rotation, record.seating, record.button, record.deck,
        record.hole, record.board, record.events, record.starting_stacks, record.payoffs, record.final_stacks,
        record.names, tuple((d.seat, d.participant, d.request_id, d.action, d.how, d.event_index, d.rejected)
                            for d in record.decisions),
    )


def table_ids(db: Path) -> Counter[str]:
    conn = sqlite3.connect(db)
    try:
        return Counter(row[0] for row in conn.execute("SELECT table_id FROM hands"))
    finally:
        conn.close()


def tables_of(lanes: int, tables: int) -> set[str]:
    """The table ids of a local match of ``lanes`` rotations, each played on ``tables`` tables side by side."""
    if tables == 1:
        return {f"table-1-r{lane}" for lane in range(lanes)}
    return {f"table-1-r{lane}.{k}" for lane in range(lanes) for k in range(1, tables + 1)}


def without(data: Any, keys: frozenset[str]) -> Any:
    """``data`` (parsed JSON) with every field named in ``keys`` dropped, at any depth."""
    if isinstance(data, dict):
        return {k: without(v, keys) for k, v in data.items() if k not in keys}
    if isinstance(data, list):
        return [without(v, keys) for v in data]
    return data


def leaderboard(db: Path) -> dict[str, Any]:
    proc = arena("leaderboard", "--db", db, "--json", cwd=db.parent)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    board: dict[str, Any] = json.loads(proc.stdout)
    return board


@pytest.fixture(scope="module")
def seed_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("seed") / "many.seed"
    path.write_text("many-tables-seed\n")
    return path


@pytest.fixture(scope="module")
def one_table(tmp_path_factory: pytest.TempPathFactory, seed_file: Path) -> tuple[Path, dict[str, Any]]:
    """The match played on one table per connection: the reference every run on many tables must equal."""
    db = tmp_path_factory.mktemp("one") / "one.db"
    return db, play(db, 1, seed_file)


@pytest.mark.timeout(240)
def test_sixteen_tables_record_exactly_the_hands_and_leaderboard_of_one(
    tmp_path: Path, seed_file: Path, one_table: tuple[Path, dict[str, Any]]
) -> None:
    one_db, one_report = one_table
    many_db = tmp_path / "sixteen.db"
    many_report = play(many_db, 16, seed_file)

    one, many = records(one_db), records(many_db)
    assert len(one) == len(many) == HANDS
    assert [r.hand_number for r in one] == list(range(HANDS))
    for a, b in zip(one, many, strict=True):
        assert essence(a) == essence(b), a.hand_number
    assert sum(len(r.decisions) for r in one) > HANDS  # the bots really played: not only blinds and folds
    assert {d.how for r in many for d in r.decisions} == {"ok"}

    # they really were played on many tables: every one of the 16 tables of each of the 3 lanes took hands, the
    # lanes one after the other (every hand of a rotation over before the next rotation's first began)
    assert set(table_ids(one_db)) == tables_of(3, 1)
    assert set(table_ids(many_db)) == tables_of(3, 16)
    for lane in range(2):
        assert max(r.finished_at for r in many if r.rotation == lane) <= min(
            r.started_at for r in many if r.rotation == lane + 1)

    assert without(one_report, MATCH_RUN_DEPENDENT) == without(many_report, MATCH_RUN_DEPENDENT)
    one_board, many_board = leaderboard(one_db), leaderboard(many_db)
    assert {r["bot"] for r in many_board["rows"]} == set(BOTS)
    assert many_board["sessions"] == HANDS // 3
    assert without(one_board, RUN_DEPENDENT) == without(many_board, RUN_DEPENDENT)
    assert verify_match(Database(many_db, read_only=True), MATCH).ok


def wait_for_hands(db: Path, target: int, process: subprocess.Popen[bytes], limit_s: float = 120) -> int:
    """Poll the database of a running match until ``target`` hands are recorded (or the process ended)."""
    deadline = time.monotonic() + limit_s
    done = 0
    while time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.02)
        if not db.exists():
            continue
        try:
            conn = sqlite3.connect(db)
            try:
                done = conn.execute("SELECT COUNT(*) FROM hands").fetchone()[0]
            finally:
                conn.close()
        except sqlite3.Error:
            continue
        if done >= target:
            break
    return done


def scratch_folders_of(pid: int) -> list[Path]:
    """The scratch folders process ``pid`` holds (``arena.scratch``: their owner files, which it keeps open)."""
    held = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            target = Path(os.readlink(fd))
            if target.name == scratch.OWNER:
                held.append(target.parent)
    return held


@pytest.mark.timeout(240)
def test_a_referee_killed_on_eight_tables_resumes_to_the_uninterrupted_records(
    tmp_path: Path, seed_file: Path, one_table: tuple[Path, dict[str, Any]]
) -> None:
    whole_db = tmp_path / "whole.db"
    whole_report = play(whole_db, 8, seed_file)

    cut = tmp_path / "cut.db"
    env = {k: v for k, v in os.environ.items() if k != "ARENA_SEED"}
    victim = subprocess.Popen([PY, "-m", "arena", *match_args(cut, 8, seed_file)], cwd=tmp_path, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    target = random.Random(os.getpid()).randint(110, 190)  # in rotation 1 (hands 100 to 199 of play)
    try:
        wait_for_hands(cut, 1, victim)
        left = scratch_folders_of(victim.pid)  # its socket's, its bots' sandboxes', its logs': read while nothing
        # hurries (read right before the kill, they delayed it enough for the rotation to end first, once)
        wait_for_hands(cut, target, victim)
        assert victim.poll() is None, "the match ended before it could be killed"
        os.kill(victim.pid, signal.SIGKILL)  # the referee alone: its sandboxed bots die with it
        victim.wait(timeout=30)
    finally:
        if victim.poll() is None:
            victim.kill()
            victim.wait()
        with contextlib.suppress(ProcessLookupError):  # anything left in its process group
            os.killpg(victim.pid, signal.SIGKILL)
    assert victim.returncode == -signal.SIGKILL
    left = [f for f in left if f.exists()]  # what the kill left behind (its socket's folder at least)
    before = records(cut)
    assert 0 < len(before) < HANDS, len(before)
    conn = sqlite3.connect(cut)
    status = conn.execute("SELECT status FROM matches WHERE id = ?", (MATCH,)).fetchone()[0]
    conn.close()
    assert status == "running"
    assert {r.table_id for r in before} <= tables_of(3, 8)
    # the rotations are played one after the other: every hand of rotation 0, some of rotation 1, none of 2
    numbers = {r.hand_number for r in before}
    assert {n for n in numbers if n % 3 == 0} == set(range(0, HANDS, 3)) and not any(n % 3 == 2 for n in numbers)
    assert numbers != set(range(len(numbers)))  # not a prefix: a set

    # --resume (no seed file: the seed is the recorded match's) plays exactly the rest, starting no process for the
    # rotation that is done
    logs = tmp_path / "resumed-logs"
    resumed = arena(*match_args(cut, 8), "--resume", "--log-dir", logs, cwd=tmp_path)
    assert resumed.returncode == EXIT_OK, resumed.stdout + resumed.stderr
    assert left and not [f for f in left if f.exists()]  # what the killed referee left in /tmp: swept by the resume
    resumed_report = json.loads(resumed.stdout)
    # the kill lands in rotation 1; on a loaded machine, now and then, just after its last hand was recorded and
    # before rotation 2 began: then only rotation 2 is left to start
    rotation_1_done = {n for n in numbers if n % 3 == 1} == set(range(1, HANDS, 3))
    started = ["r2"] * 3 if rotation_1_done else ["r1"] * 3 + ["r2"] * 3
    assert sorted(p.name.split("-")[1] for p in logs.glob("*.log")) == started

    after = {r.hand_number: r for r in records(cut)}
    for record in before:  # every hand recorded before the kill is still there, unchanged (table, times and all)
        assert after[record.hand_number] == record, record.hand_number
    whole, one = records(whole_db), records(one_table[0])
    assert len(after) == len(whole) == len(one) == HANDS
    assert [essence(after[n]) for n in sorted(after)] == [essence(r) for r in whole] == [essence(r) for r in one]
    assert set(table_ids(whole_db)) == tables_of(3, 8) != set(table_ids(one_table[0]))
    assert set(table_ids(cut)) <= tables_of(3, 8)
    assert verify_match(Database(cut, read_only=True), MATCH).ok

    assert resumed_report["status"] == "completed"
    assert resumed_report["hands"] == {"played": HANDS, "total": HANDS}
    assert without(resumed_report, MATCH_RUN_DEPENDENT) == without(whole_report, MATCH_RUN_DEPENDENT)


CRASHER = '''"""Answers LIMIT requests on as many as 64 tables at once, then dies without a word to the referee."""
import os
import sys

from arena_sdk import Action, Bot, Request, call, check, run

LIMIT = int(sys.argv[1])


class Crasher(Bot):
    max_tables = 64

    def __init__(self) -> None:
        self.answered = 0

    def act(self, request: Request) -> Action:
        if self.answered >= LIMIT:
            print(f"crasher: dying after {self.answered} answers", file=sys.stderr, flush=True)
            os._exit(3)
        self.answered += 1
        return check() if request.legal.can_check else call()


if __name__ == "__main__":
    raise SystemExit(run(Crasher(), name="crasher").exit_code)
'''


@pytest.mark.timeout(180)
def test_a_bot_that_crashes_with_many_tables_open_leaves_a_finished_match(tmp_path: Path, seed_file: Path) -> None:
    folder = tmp_path / "crasher"  # the sandbox binds the bot's folder; its uid must be able to read it
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    script = folder / "crasher.py"
    script.write_text(CRASHER)
    script.chmod(0o644)
    limit, hands, tables = 25, 160, 16
    db = tmp_path / "crash.db"
    proc = arena("match", "--bot", f"crasher={PY} {script} {limit}", "--bot", f"cs={BOTS['cs']}", "--hands", hands,
                 "--tables", tables, "--seed-file", seed_file, "--db", db, "--match-id", "c", "--json",
                 "--reconnect-grace-ms", 300, cwd=tmp_path)
    assert proc.returncode == EXIT_BOT_FAILED, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["exit_code"] == EXIT_BOT_FAILED
    assert report["status"] == "completed"
    assert report["hands"] == {"played": hands, "total": hands}
    crasher, caller = report["results"]
    assert crasher["outcome"] == "crashed" and crasher["failure"].startswith("crashed")
    assert "exited with status 3" in crasher["crashed"] and "dying after" in crasher["crashed"]
    # one violation per dead process (one per rotation), not one per table it had open: it does not forfeit
    assert crasher["violations"] <= 2 and not crasher["forfeited"], crasher
    assert caller["outcome"] == "ok" and caller["failure"] is None
    assert report["errors"] and all("crasher" in e and "crashed" in e for e in report["errors"])
    assert "error: crasher crashed" in proc.stderr

    database = Database(db, read_only=True)
    assert queries.require(database, "c").hands_total == hands
    database.close()
    played = records(db, "c")
    assert [r.hand_number for r in played] == list(range(hands))  # every hand recorded
    assert set(table_ids(db)) == tables_of(2, tables)  # with all 16 tables of both lanes in use
    ours = [d for r in played for d in r.decisions if d.participant == 0]
    theirs = [d for r in played for d in r.decisions if d.participant == 1]
    assert {d.how for d in theirs} == {"ok"}
    hows = Counter(d.how for d in ours)
    # each of its two processes (one per rotation) answered at most ``limit`` requests; the time-out policy
    # (check if free, else fold) played every later decision of it
    assert 0 < hows["ok"] <= 2 * limit, hows
    assert set(hows) <= {"ok", "absent", "timeout", "forfeited"} and hows["absent"] > 0, hows
    assert sum(n for how, n in hows.items() if how != "ok") > 2 * limit, hows
    for decision in ours:
        if decision.how != "ok":
            assert decision.action.kind in (ActionKind.CHECK, ActionKind.FOLD), decision
    for lane in range(2):  # its last hand in each rotation came after its death
        last = max((r for r in played if r.rotation == lane), key=lambda r: r.hand_number)
        assert all(d.how != "ok" for d in last.decisions if d.participant == 0), last.decisions
    assert crasher["absent"] == hows["absent"]
    assert verify_match(Database(db, read_only=True), "c").ok


def bad_tables_args(command: str, value: str) -> list[str]:
    if command == "match":
        return ["match", "--bot", f"a={BOTS['cs']}", "--bot", f"b={BOTS['cs']}", "--db", "x.db", "--tables", value]
    return ["compare", "--candidate", f"a={BOTS['cs']}", "--baseline", f"b={BOTS['cs']}", "--db", "x.db", "--tables",
            value]


BAD_TABLES = [("0", "at least 1"), ("x", "expected a whole number"), ("-3", "at least 1"), ("1025", "at most 1,024")]


@pytest.mark.parametrize("command", ["match", "compare"])
@pytest.mark.parametrize(("value", "message"), BAD_TABLES)
def test_a_bad_tables_flag_is_refused_naming_it(tmp_path: Path, command: str, value: str, message: str) -> None:
    """In this process (click's runner, as tests/cli/test_bad_inputs.py does: a process costs seconds)."""
    from click.testing import CliRunner

    from arena.cli import main

    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        result = CliRunner().invoke(main, bad_tables_args(command, value), env={"ARENA_SEED": None})
    finally:
        os.chdir(old)
    assert isinstance(result.exception, SystemExit | None), result.exc_info
    assert result.exit_code == EXIT_USAGE, result.output
    assert "'--tables'" in result.output and message in result.output, result.output
    assert not (tmp_path / "x.db").exists()  # refused before anything was started


@pytest.mark.parametrize(("command", "value"), [("match", "0"), ("match", "x"), ("compare", "0")])
def test_as_a_user_runs_them_bad_tables_flags_fail_the_same_way(tmp_path: Path, command: str, value: str) -> None:
    proc = arena(*bad_tables_args(command, value), cwd=tmp_path)
    output = proc.stdout + proc.stderr
    assert proc.returncode == EXIT_USAGE, output
    assert "'--tables'" in output and dict(BAD_TABLES)[value] in output, output
    assert "Traceback" not in output
    assert not (tmp_path / "x.db").exists()


def tournament_file(folder: Path, name: str, tables: object) -> Path:
    folder.mkdir(exist_ok=True)
    (folder / "cup.seed").write_text("many-tables-cup\n")
    text = f'name = "{name}"\nseed_file = "cup.seed"\nhands = 20\nworkers = 2\ntables = {json.dumps(tables)}\n'
    for bot, command in BOTS.items():
        text += f'[[bots]]\nname = "{bot}"\ncommand = "{command}"\n'
    path = folder / f"{name}.toml"
    path.write_text(text)
    return path


def tournament_hands(db: Path) -> dict[str, list[tuple[object, ...]]]:
    database = Database(db, read_only=True)
    try:
        return {m: [essence(r) for r in queries.hand_records(database, m)] for m in queries.match_ids(database)}
    finally:
        database.close()


@pytest.mark.timeout(180)
def test_a_tournament_with_tables_4_plays_the_hands_of_tables_1(tmp_path: Path) -> None:
    outcomes = {}
    for tables in (1, 4):
        config = tournament_file(tmp_path / f"t{tables}", "cup", tables)
        db = config.parent / "cup.db"
        proc = arena("tournament", config, "--db", db, "--no-progress", "--json", cwd=config.parent)
        assert proc.returncode == EXIT_OK, proc.stdout + proc.stderr
        report = json.loads(proc.stdout)
        assert report["errors"] == [] and report["exit_code"] == EXIT_OK
        conn = sqlite3.connect(db)
        rows = conn.execute("SELECT id, status FROM matches ORDER BY id").fetchall()
        per_match = {m: {t for (t,) in conn.execute("SELECT table_id FROM hands WHERE match_id = ?", (m,))}
                     for m, _ in rows}
        conn.close()
        assert len(rows) == 3 and {s for _, s in rows} == {"completed"}
        assert all(ids == tables_of(2, tables) for ids in per_match.values()), per_match
        hands = tournament_hands(db)
        assert sum(len(h) for h in hands.values()) == 60
        outcomes[tables] = (hands, without(report["leaderboard"], RUN_DEPENDENT))
    assert outcomes[1] == outcomes[4]


def test_a_tournament_file_with_tables_0_is_refused_naming_the_key(tmp_path: Path) -> None:
    config = tournament_file(tmp_path, "bad", 0)
    proc = arena("tournament", config, "--db", tmp_path / "bad.db", "--no-progress", cwd=tmp_path)
    output = proc.stdout + proc.stderr
    assert proc.returncode == EXIT_USAGE, output
    assert f"{config}: tables = 0: must be at least 1" in output, output
    assert "Traceback" not in output
    assert not (tmp_path / "bad.db").exists()


@pytest.mark.parametrize(("value", "message"), [("four", "tables = 'four': expected a whole number"),
                                                  (True, "tables = True: expected a whole number"),
                                                  (2.5, "tables = 2.5: expected a whole number"),
                                                  (1025, "tables = 1025: must be at most 1,024")])
def test_other_bad_tables_in_a_tournament_file_are_refused_naming_the_key(tmp_path: Path, value: object,
                                                                          message: str) -> None:
    config = tournament_file(tmp_path, "bad", value)
    with pytest.raises(TournamentError) as refused:
        TournamentConfig.from_toml(config)
    assert message in str(refused.value) and str(config) in str(refused.value)


@pytest.mark.timeout(120)
def test_a_comparison_on_four_tables_reaches_the_verdict_of_one(tmp_path: Path, seed_file: Path) -> None:
    reports = {}
    for tables in (1, 4):
        db, out = tmp_path / f"c{tables}.db", tmp_path / f"c{tables}.json"
        proc = arena("compare", "--candidate", f"r1={BOTS['r1']}", "--baseline", f"cs={BOTS['cs']}", "--hands", 60,
                     "--seed-file", seed_file, "--db", db, "--id", "c", "--json", out, "-q", "--tables", tables,
                     cwd=tmp_path)
        report = json.loads(out.read_text())
        assert report["errors"] == [], report["errors"]
        assert proc.returncode == report["exit_code"] and proc.returncode in (0, 1, 3), proc.stdout + proc.stderr
        assert report["hands"]["played"] == 60
        assert set(table_ids(db)) == tables_of(2, tables)
        reports[tables] = report
        hands = records(db, "c-h2h")
        assert len(hands) == 60
        reports[tables]["hand_records"] = [essence(r) for r in hands]
    drop = MATCH_RUN_DEPENDENT | {"db"}
    assert without(reports[1], drop) == without(reports[4], drop)
