"""Every subcommand on a table of bad inputs: each gets a clear message naming what is wrong, the documented exit
status, and never a traceback. Read-only commands never change a file that is not an arena database."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
import traceback
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.records.db import Database
from tests.bots import caller
from tests.publish import helpers
from tests.publish.helpers import play

REPO = Path(__file__).resolve().parents[2]
CALLER = caller()
USAGE, ERROR, DAMAGED = 2, 1, 5


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Bad files of every kind a user might point arena at."""
    root = tmp_path_factory.mktemp("bad")
    out: dict[str, Path] = {"root": root}
    out["folder"] = root / "a-folder"
    out["folder"].mkdir()
    out["garbage"] = root / "garbage.db"
    out["garbage"].write_bytes(os.urandom(4096))
    out["empty"] = root / "empty.db"
    out["empty"].write_bytes(b"")
    foreign = root / "foreign.db"
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    conn.execute("INSERT INTO invoices VALUES (1, 9.5)")
    conn.commit()
    conn.close()
    out["foreign"] = foreign
    truncated = root / "truncated.db"
    good = sqlite3.connect(truncated)
    good.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    good.execute("INSERT INTO meta VALUES ('schema_version', '2')")
    good.commit()
    good.close()
    out["truncated"] = truncated
    game_db = Database(root / "game.db")  # a real database with hands in it, for the commands that write them out
    play(game_db, "m1", [("a", "", helpers.caller), ("b", "", helpers.raiser)], hands=2)
    game_db.close()
    out["game_db"] = root / "game.db"
    toml = {
        "unknown-key": 'name = "x"\nstrcture = "fl"\n',
        "typo-hands": 'name = "x"\nhnads = 4\n',
        "clock-key": 'name = "x"\n[clock]\nper_action_msec = 3\n',
        "stakes": 'name = "x"\nstakes = "50-100"\n',
        "hands-text": 'name = "x"\nhands = "ten"\n',
        "hands-zero": 'name = "x"\nhands = 0\n',
        "seats-text": 'name = "x"\nseats = "two"\n',
        "seed-in-file": 'name = "x"\nseed = "secret"\n',
        "not-toml": "name = \n[[[",
        "no-command": 'name = "x"\n[[bots]]\nname = "a"\n[[bots]]\nname = "b"\ncommand = "true"\n',
        "bot-typo": 'name = "x"\n[[bots]]\nname = "a"\ncomand = "true"\n',
        "small-blind": 'name = "x"\nstakes = "200/100"\n',
    }
    for name, text in toml.items():
        (root / f"{name}.toml").write_text(text)
    return out


def run(args: list[str], cwd: Path) -> tuple[int, str]:
    """The command in this process (click's runner: fast); an exception other than an exit is a traceback."""
    runner = CliRunner()
    env = {"ARENA_SEED": None}
    old = Path.cwd()
    os.chdir(cwd)
    try:
        result = runner.invoke(main, args, env=env, catch_exceptions=True)
    finally:
        os.chdir(old)
    output = result.output
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        output += "\nTraceback: " + "".join(traceback.format_exception(*result.exc_info))  # type: ignore[arg-type]
    return result.exit_code, output


def run_process(args: list[str], cwd: Path) -> tuple[int, str]:
    """The command as a user runs it: a process of its own."""
    env = {k: v for k, v in os.environ.items() if k != "ARENA_SEED"}
    proc = subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=120)
    return proc.returncode, proc.stdout + proc.stderr


BOTS = ["--bot", f"a={CALLER}", "--bot", f"b={CALLER}"]

CASES: list[tuple[str, list[str], int, str]] = [
    # arena match
    ("match hands text", ["match", *BOTS, "--hands", "ten"], USAGE, "'ten': expected a whole number"),
    ("match hands huge", ["match", *BOTS, "--hands", str(10**18)], USAGE, "at most 1,000,000"),
    ("match hands zero", ["match", *BOTS, "--hands", "0"], USAGE, "at least 1"),
    ("match stakes", ["match", *BOTS, "--stakes", "50-100"], USAGE, "SMALL/BIG"),
    ("match structure", ["match", *BOTS, "--structure", "fx"], USAGE, "nl (no-limit)"),
    ("match blinds", ["match", *BOTS, "--stakes", "200/100"], USAGE, "R3.1"),
    ("match one bot", ["match", "--bot", f"a={CALLER}"], USAGE, "at least two --bot"),
    ("match 23 bots", ["match", *[a for i in range(23) for a in ("--bot", f"b{i}={CALLER}")]], USAGE, "R2.1"),
    ("match bot spec", ["match", "--bot", "a", "--bot", f"b={CALLER}"], USAGE, "NAME=COMMAND"),
    ("match seed", ["match", *BOTS, "--seed", "x"], USAGE, "--seed-file"),
    ("match seed file", ["match", *BOTS, "--seed-file", "missing.seed"], USAGE, "cannot read the seed file"),
    ("match db folder", ["match", *BOTS, "--db", "{folder}"], USAGE, "is a directory"),
    ("match db garbage", ["match", *BOTS, "--db", "{garbage}"], ERROR, "not an arena database"),
    ("match db foreign", ["match", *BOTS, "--db", "{foreign}"], ERROR, "database of something else"),
    ("match resume", ["match", *BOTS, "--resume"], USAGE, "--resume needs --db"),
    ("match raise cap", ["match", *BOTS, "--raise-cap", "0"], USAGE, "at least 1"),
    ("match chip", ["match", *BOTS, "--chip", "0"], USAGE, "at least 1"),
    ("match game", ["match", *BOTS, "--game", "sitngo"], USAGE, "reset (stacks reset every hand)"),
    ("match levels", ["match", *BOTS, "--game", "freezeout", "--levels", "100/50"], USAGE, "R11.4"),
    ("match level text", ["match", *BOTS, "--levels", "50-100"], USAGE, "SMALL/BIG/ANTE"),
    ("match buy-in", ["match", *BOTS, "--game", "cash", "--stack", "100", "--buy-in", "200..400"], USAGE, "R11.1"),
    ("match join list", ["match", *BOTS, "--game", "cash", "--join-at", "0,0,3"], USAGE, "R11.3"),
    ("serve game seats", ["serve", "--bot", "a", "--bot", "b", "--bot", "c", "--bot", "d", "--seats", "2",
                          "--game", "freezeout"], USAGE, "one table"),
    # arena serve
    ("serve tls half", ["serve", "--bot", "a", "--bot", "b", "--tls-cert", "{garbage}"], USAGE, "go together"),
    ("serve tables", ["serve", "--bot", "a", "--bot", "b", "--bot", "c", "--seats", "2"], USAGE, "cannot fill"),
    ("serve one bot", ["serve", "--bot", "a"], USAGE, "at least two"),
    # arena tournament
    ("tournament missing", ["tournament", "missing.toml"], USAGE, "cannot read"),
    ("tournament not toml", ["tournament", "{root}/not-toml.toml"], USAGE, "not valid TOML"),
    ("tournament unknown", ["tournament", "{root}/unknown-key.toml"], USAGE, "did you mean structure"),
    ("tournament typo", ["tournament", "{root}/typo-hands.toml"], USAGE, "did you mean hands"),
    ("tournament clock", ["tournament", "{root}/clock-key.toml"], USAGE, "clock.per_action_ms"),
    ("tournament stakes", ["tournament", "{root}/stakes.toml"], USAGE, "SMALL/BIG"),
    ("tournament hands", ["tournament", "{root}/hands-text.toml"], USAGE, "hands = 'ten'"),
    ("tournament zero", ["tournament", "{root}/hands-zero.toml"], USAGE, "at least 1"),
    ("tournament seats", ["tournament", "{root}/seats-text.toml"], USAGE, "R2.1"),
    ("tournament seed", ["tournament", "{root}/seed-in-file.toml"], USAGE, "seed_file"),
    ("tournament command", ["tournament", "{root}/no-command.toml"], USAGE, "needs a command"),
    ("tournament bot key", ["tournament", "{root}/bot-typo.toml"], USAGE, "did you mean command"),
    ("tournament blinds", ["tournament", "{root}/small-blind.toml"], USAGE, "R3.1"),
    # read-only commands on files that are not arena databases
    *[(f"{cmd} {kind}", [cmd, "--db", "{" + kind + "}", *extra], status, message)
      for cmd, extra in (("leaderboard", []), ("verify", []), ("export", ["--phh", "{root}/out"]),
                         ("publish", ["--out", "{root}/site"]))
      for kind, status, message in (("garbage", ERROR, "not an arena database"),
                                    ("foreign", ERROR, "database of something else"), ("empty", ERROR, "is empty"),
                                    ("truncated", DAMAGED, "lacks the tables"))],
    *[(f"{cmd} folder", [cmd, "--db", "{folder}"], USAGE, "is a directory") for cmd in ("leaderboard", "verify")],
    ("leaderboard missing", ["leaderboard", "--db", "nothing-here.db"], ERROR, "no database at"),
    # arena compare (its own exit statuses: 2 for errors)
    ("compare bounds", ["compare", "--candidate", f"a={CALLER}", "--baseline", f"b={CALLER}", "--mbb1", "-5"], USAGE,
     "M0 < M1"),
    ("compare seed", ["compare", "--candidate", f"a={CALLER}", "--baseline", f"b={CALLER}", "--seed", "x"], USAGE,
     "--seed-file"),
    # an output whose folder runs through a file: refused before any bot starts, with the file named
    *[(f"{cmd} {flag} through a file", [cmd, *bots, flag, "{garbage}/inside/x"], USAGE,
       "garbage.db is a file, not a folder")
      for cmd, bots in (("match", BOTS), ("compare", ["--candidate", f"a={CALLER}", "--baseline", f"b={CALLER}"]))
      for flag in ("--db", "--log-dir", *(("--phh-dir",) if cmd == "match" else ("--json",)))],
    ("export phh through a file", ["export", "--db", "{game_db}", "--phh", "{garbage}/s"], ERROR,
     "cannot write the hand histories under"),
    # arena demo
    ("demo out is a file", ["demo", "--out", "{garbage}"], USAGE, "is a file"),
    # arena replay
    ("replay nothing", ["replay", "{folder}"], USAGE, "no .phh files"),
]


@pytest.mark.parametrize(("args", "status", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_bad_input_gets_a_clear_message_and_the_documented_status(
    files: dict[str, Path], args: list[str], status: int, message: str
) -> None:
    args = [a.format(**{k: str(v) for k, v in files.items()}) for a in args]
    code, output = run(args, files["root"])
    assert "Traceback" not in output, output
    assert message in output, output
    assert code == status, output


def test_read_only_commands_never_change_a_foreign_file(files: dict[str, Path]) -> None:
    before = hashlib.sha256(files["foreign"].read_bytes()).hexdigest()
    for command in (["leaderboard"], ["verify"], ["export", "--phh", str(files["root"] / "x")]):
        run([*command, "--db", str(files["foreign"])], files["root"])
    assert hashlib.sha256(files["foreign"].read_bytes()).hexdigest() == before
    assert not (files["root"] / "foreign.db-wal").exists()


def test_as_a_user_runs_them_processes_fail_the_same_way(files: dict[str, Path]) -> None:
    for args, status, message in (
        (["match", *BOTS, "--hands", "ten"], USAGE, "'ten': expected a whole number"),
        (["tournament", str(files["root"] / "typo-hands.toml")], USAGE, "did you mean hands"),
        (["leaderboard", "--db", str(files["garbage"])], ERROR, "not an arena database"),
    ):
        code, output = run_process(args, files["root"])
        assert "Traceback" not in output and message in output and code == status, output


def test_replay_reads_on_past_a_file_that_is_too_big_or_too_deep(files: dict[str, Path]) -> None:
    folder = files["root"] / "phh"
    folder.mkdir()
    n = 30
    (folder / "a-thirty.phh").write_text(
        f'variant = "NT"\nantes = {[0] * n}\nblinds_or_straddles = {[50, 100] + [0] * (n - 2)}\nmin_bet = 100\n'
        f"starting_stacks = {[10000] * n}\nactions = []\n"
    )
    (folder / "b-nested.phh").write_text('variant = "NT"\nactions = ' + "[" * 5000 + "]" * 5000 + "\n")
    (folder / "c-good.phh").write_text(
        'variant = "NT"\nantes = [0, 0]\nblinds_or_straddles = [50, 100]\nmin_bet = 100\n'
        'starting_stacks = [1000, 1000]\nactions = ["d dh p1 AsKs", "d dh p2 7c2d", "p2 f"]\n'
        "finishing_stacks = [1050, 950]\n"
    )
    code, output = run(["replay", str(folder), "--summary"], files["root"])
    assert "Traceback" not in output
    assert "R2.1" in output and "nested too deeply" in output
    assert "1 ok, 0 not ok, 2 unreadable" in output
    assert code == USAGE


@pytest.mark.parametrize(("variable", "named"), [("ARENA_ENGINE", "compiled, python"),
                                               ("ARENA_TABLE_LOOP", "fast, reference"),
                                               ("ARENA_BOT_SERVER", "native, grpcio"),
                                               ("ARENA_LANES", "on, off"),
                                               ("ARENA_HAND_CHAIN", "on, off")])
def test_a_bad_engine_or_table_loop_variable_is_refused_by_name(tmp_path: Path, variable: str, named: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "arena", "match", *BOTS, "--hands", "2", "--no-sandbox"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=60,
                          env={**os.environ, variable: "bogus"})
    assert proc.returncode == USAGE, proc.stderr
    assert f"{variable} must be one of {named}; got 'bogus'" in proc.stderr and "Traceback" not in proc.stderr


def test_the_readme_documents_every_setting_with_its_key_and_flag() -> None:
    from arena.runner.settings import SETTINGS

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for setting in SETTINGS:
        assert f"| `{setting.key}` | `{setting.flag}` |" in readme, setting.key
