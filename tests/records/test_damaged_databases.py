"""No traceback from any command on any database (issue 25): damaged databases (rows deleted or edited to any value,
truncated files, random bytes, a damaged seed file, a foreign SQLite schema, an empty file) are fed to every command
that reads one, through the real CLI; each ends with a message and its documented exit status (5: records damaged),
never a traceback."""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.cli import main
from arena.ratings.sprt import SprtParams
from arena.records.db import Database
from arena.records.ledger import Ledger
from arena.records.registry import Registry
from arena.referee import FunctionSeat, Match, MatchKind
from arena.runner.tournament import TournamentConfig, schedule
from tests.publish.helpers import caller, compare, raiser
from tests.records.evidence_helpers import POLICY, record
from tests.referee.test_mixed_action import mixer

TABLES = ("matches", "match_bots", "bots", "joins", "hands", "hand_seats", "actions", "violations", "game_results",
          "comparisons", "comparison_matches", "registered_bots", "meta")
CUP = """name = "cup"
hands = 8
stakes = "50/100"
stack = 10000
seed_file = "cup.seed"
[clock]
per_action_ms = 40
time_bank_ms = 0
max_retries = 1
max_violations = 0
connect_timeout_ms = 3000
[[bots]]
name = "alice"
command = "false"
version = "1.0"
[[bots]]
name = "bob"
command = "false"
version = "2.0"
"""
CLOCK = ["--per-action-ms", "40", "--time-bank-ms", "0", "--max-retries", "1", "--max-violations", "0",
         "--connect-timeout-ms", "3000", "--no-sandbox"]
COMMANDS: dict[str, tuple[list[str], set[int]]] = {
    "leaderboard": (["leaderboard", "--db", "{db}"], {0, 1, 5}),
    "verify": (["verify", "--db", "{db}"], {0, 1, 5}),
    "export": (["export", "--db", "{db}", "--phh", "{out}"], {0, 1, 5}),
    "publish": (["publish", "--db", "{db}", "--out", "{out}"], {0, 1, 5}),
    "compare --verify": (["compare", "--verify", "cmp", "--db", "{db}"], {0, 1, 2, 3, 5}),
    "bots list": (["bots", "list", "--db", "{db}"], {0, 1, 5}),
    "match --resume": (["match", "--bot", "alice@1.0=false", "--bot", "bob@2.0=false", "--db", "{db}", "--match-id",
                        "cut", "--resume", *CLOCK], {0, 1, 2, 4, 5}),
    "tournament --resume": (["tournament", "{cup}", "--db", "{db}", "--resume", "--no-sandbox", "--no-progress"],
                            {0, 1, 2, 4, 5}),
}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database with something for every command: a finished match, one cut short (still running, its seed in
    the vault), a comparison, a tournament cut short, a registered bot."""
    folder = tmp_path_factory.mktemp("base")
    path = folder / "arena.db"
    record(path)  # "ev", finished
    record(path, "cut", stop_after=4)
    db = Database(path)
    compare(db, "cmp", ("new", raiser), ("old", caller), 8, SprtParams())
    (folder / "cup.seed").write_text("cup-seed")
    (folder / "cup.toml").write_text(CUP)
    config = TournamentConfig.from_toml(folder / "cup.toml")
    config = config.with_seed(Ledger(db))
    [scheduled] = schedule(config)
    spec = scheduled.spec
    entry = Ledger(db).open(spec, scheduled.bots, MatchKind.TOURNAMENT, "cup")
    match = Match(spec, [("alice", FunctionSeat("alice", mixer)), ("bob", FunctionSeat("bob", caller))], [entry])
    match.on_hand = lambda _: match.stop() if match.hands_played >= 3 else None
    asyncio.run(match.run())  # never finished: as SIGKILL leaves it
    Registry(db).add("leaguebot", "someone")
    db.close()
    assert POLICY.per_action_ms == 40
    return path


Damage = tuple[Any, ...]
VALUES = st.one_of(st.integers(-(2**40), 2**40), st.text(max_size=12), st.none(), st.floats(allow_nan=False),
                   st.binary(max_size=6), st.sampled_from(["", "running", "FOLD", "[]", "{}", "ok", "AsKs", "-1"]))
DAMAGE = st.one_of(
    st.tuples(st.just("delete"), st.sampled_from(TABLES), st.integers(0, 10_000)),
    st.tuples(st.just("update"), st.sampled_from(TABLES), st.integers(0, 50), st.integers(0, 10_000), VALUES),
    st.tuples(st.just("truncate"), st.floats(0.0, 1.0)),
    st.tuples(st.just("bytes"), st.floats(0.0, 1.0), st.binary(min_size=1, max_size=64)),
    st.tuples(st.just("vault"), st.text(max_size=20)),
    st.tuples(st.sampled_from(["foreign", "empty"])),
)


def damage(path: Path, how: Damage) -> None:
    """Do one kind of damage to a database file (an edit the database refuses, e.g. NULL in NOT NULL, is none)."""
    kind = how[0]
    if kind == "sql":
        conn = sqlite3.connect(path)
        conn.execute(how[1])
        conn.commit()
        conn.close()
    elif kind in ("delete", "update"):
        conn = sqlite3.connect(path)
        try:
            table = how[1]
            rowids = [r[0] for r in conn.execute(f"SELECT rowid FROM {table} ORDER BY rowid")]
            if rowids:
                rowid = rowids[how[-1 if kind == "delete" else 3] % len(rowids)]
                if kind == "delete":
                    conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,))
                else:
                    columns = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
                    conn.execute(f"UPDATE {table} SET {columns[how[2] % len(columns)]} = ? WHERE rowid = ?",
                                 (how[4], rowid))
            conn.commit()
        except sqlite3.DatabaseError:
            pass  # refused by a constraint, or the file is damaged already
        finally:
            conn.close()
    elif kind == "truncate":
        data = path.read_bytes()
        path.write_bytes(data[:int(len(data) * how[1])])
    elif kind == "bytes":
        data = bytearray(path.read_bytes())
        at = int(len(data) * how[1])
        data[at:at + len(how[2])] = how[2]
        path.write_bytes(bytes(data[:max(len(data), 1)]))
    elif kind == "vault":
        for name in (path.name + ".seeds", path.name + ".seeds.bak"):
            (path.parent / name).write_text(how[1])
    elif kind == "foreign":
        path.unlink()
        conn = sqlite3.connect(path)
        conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
        conn.commit()
        conn.close()
    else:
        path.write_bytes(b"")


def run(args: list[str], cwd: Path) -> Result:
    return CliRunner().invoke(main, args, catch_exceptions=True, env={"ARENA_SEED": None})


def check(name: str, result: Result, allowed: set[int]) -> None:
    exception = result.exception
    if exception is not None and not isinstance(exception, SystemExit):
        trace = "".join(traceback.format_exception(*result.exc_info))  # type: ignore[arg-type]
        pytest.fail(f"{name}: a traceback\n{result.output}\n{trace}")
    assert "Traceback" not in result.output, (name, result.output)
    assert result.exit_code in allowed, (name, result.exit_code, result.output)
    if result.exit_code == 5:
        assert "records damaged" in result.output, (name, result.output)


def each_command(base: Path, folder: Path, hurt: Callable[[Path], None]) -> dict[str, int]:
    """Every command on its own damaged copy of ``base``; their exit statuses."""
    codes = {}
    for name, (args, allowed) in COMMANDS.items():
        work = folder / name.replace(" ", "_").replace("-", "")
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        for item in base.parent.iterdir():
            if item.is_file():
                shutil.copy(item, work / item.name)
        db = work / base.name
        hurt(db)
        words = [a.format(db=db, out=work / "out", cup=work / "cup.toml") for a in args]
        result = run(words, work)
        check(name, result, allowed)
        codes[name] = result.exit_code
    return codes


def test_every_command_reads_the_undamaged_database(base: Path, tmp_path: Path) -> None:
    """The positive control: on the database as recorded each command does its work."""
    codes = each_command(base, tmp_path, lambda db: None)
    assert codes["leaderboard"] == codes["verify"] == codes["export"] == codes["publish"] == codes["bots list"] == 0
    assert codes["compare --verify"] in (0, 1, 3) and codes["match --resume"] == codes["tournament --resume"] == 4


@pytest.mark.parametrize("how", [("delete", "actions", 7), ("delete", "hands", 3),
                                 ("update", "actions", 6, 11, "FOLD"), ("truncate", 0.5), ("foreign",), ("empty",),
                                 ("vault", "{not json"),
                                 ("sql", "UPDATE matches SET hands_total = 1000 WHERE status = 'running'")])
def test_known_damage_ends_each_command_with_its_status(base: Path, tmp_path: Path, how: Damage) -> None:
    codes = each_command(base, tmp_path, lambda db: damage(db, how))
    if how[0] in ("foreign", "empty"):  # not an arena database: refused (a tournament begins afresh in an empty one)
        expected = {name: 2 if name.startswith("compare") else 1 for name in COMMANDS}
        assert {**codes, "tournament --resume": 1} == {**expected, "tournament --resume": 1}, codes
    elif how[0] in ("vault", "sql"):  # the seed file, the schedule of the matches cut short: read by a resume
        assert codes["match --resume"] == codes["tournament --resume"] == 5, codes
    else:
        assert codes["verify"] in (1, 5), codes
    if how == ("truncate", 0.5):
        assert codes["leaderboard"] == codes["verify"] == 5, codes


EXAMPLES = int(os.environ.get("ARENA_FUZZ_EXAMPLES", "10"))  # a few seconds; more to hunt (150: about 7 minutes)


@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(hurts=st.lists(DAMAGE, min_size=1, max_size=3))
def test_no_command_prints_a_traceback_on_a_damaged_database(base: Path, tmp_path: Path, hurts: list[Damage]) -> None:
    def hurt(db: Path) -> None:
        for how in hurts:
            if db.exists() or how[0] in ("foreign", "empty"):
                damage(db, how)

    each_command(base, tmp_path / str(os.getpid()), hurt)
