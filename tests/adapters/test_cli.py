"""ACPC clients in ``arena match`` (``--bot NAME=acpc:COMMAND``) and ``arena tournament`` (``acpc = true``), each
behind the bridge in its own sandbox: a client written in Python and one written in C (compiled here) meet arena
bots in duplicate matches with no violation, and the leaderboard ranks them like any bot; a match no ACPC game
expresses is refused with the reason, a game definition the arena cannot play with its line."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena.cli import main
from tests.adapters.harness import CLIENT, FL2, NL2, NL3
from tests.bots import caller, random_bot
from tests.cli.test_bad_inputs import run

ARENA = str(Path(sys.executable).parent / "arena")
CALLER = caller()
RANDOM = random_bot(3)
C_CLIENT = Path(__file__).resolve().parent / "acpc_caller.c"


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ARENA, *args], cwd=cwd, capture_output=True, text=True, timeout=240)


def leaderboard(db: Path) -> dict[str, dict[str, object]]:
    out = arena("leaderboard", "--db", str(db), "--json", "--block-deals", "10", cwd=db.parent)
    assert out.returncode == 0, out.stderr
    return {row["bot"]: row for row in json.loads(out.stdout)["rows"]}


def test_arena_match_seats_an_acpc_client_beside_an_arena_bot(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    out = arena("match", "--bot", f"acpc=acpc:python {CLIENT} {NL2}", "--bot", f"caller={CALLER}", "--hands", "40",
                "--acpc-game", str(NL2), "--db", str(db), "--json", "--log-dir", str(tmp_path / "logs"), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    results = {r["name"]: r for r in json.loads(out.stdout)["results"]}
    assert set(results) == {"acpc", "caller"}
    for r in results.values():
        assert (r["violations"], r["timeouts"], r["illegal"], r["absent"], r["hands"]) == (0, 0, 0, 0, 40), r
    assert results["acpc"]["joined"][0]["language"] == "acpc"
    rows = leaderboard(db)
    assert set(rows) == {"acpc", "caller"}
    assert all(row["rating_games"] == 2 and row["hands"] == 40 for row in rows.values())  # ranked alike
    assert rows["acpc"]["mbb_per_hand"] == results["acpc"]["mbb_per_hand"]
    log = (tmp_path / "logs").glob("*acpc.log")
    assert all("0 invalid actions" in p.read_text() for p in log)


def test_a_client_in_c_plays_unchanged_in_a_tournament(tmp_path: Path) -> None:
    if shutil.which("gcc") is None:
        pytest.skip("no gcc")
    tmp_path.chmod(0o755)  # the bot runs as a uid of its own: its folder must be readable by others
    subprocess.run(["gcc", "-O2", "-o", str(tmp_path / "acpc_caller"), str(C_CLIENT)], check=True, timeout=60)
    shutil.copy(FL2, tmp_path / FL2.name)
    (tmp_path / "cup.toml").write_text(f"""
name = "acpc-cup"
hands = 40
acpc_game = "{FL2.name}"
[[bots]]
name = "c-caller"
command = "./acpc_caller {FL2.name}"
acpc = true
[[bots]]
name = "random"
command = "{RANDOM}"
""")
    out = arena("tournament", "cup.toml", "--db", "cup.db", "--log-dir", "logs", "--no-progress", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    logs = sorted((tmp_path / "logs").glob("*c-caller.log"))
    assert len(logs) == 2  # one process per rotation
    for log in logs:
        text = log.read_text()
        assert "acpc_caller: answered" in text and "0 invalid actions" in text and "0 not answered" in text, text
    rows = leaderboard(tmp_path / "cup.db")
    assert set(rows) == {"c-caller", "random"}
    assert all(row["stats"]["violations"] == 0 and row["hands"] == 40 for row in rows.values())  # type: ignore[index]


@pytest.mark.parametrize(("args", "words"), [
    (["--game", "cash"], "a cash game carries the stacks over"),
    (["--ante", "10"], "no ACPC game can express this match: ante 10"),
    (["--structure", "pl"], "pot-limit"),
    (["--muck"], "every ACPC showdown shows all the hands"),
    (["--acpc-game", str(NL3)], "holdem.nolimit.3p.game:3: numPlayers = 3, but the table has 2 seats"),
    (["--acpc-game", str(FL2), "--stakes", "1/2"], "stakes = (1, 2), but the game's is (5, 10)"),
])
def test_a_match_no_acpc_game_expresses_is_refused_with_the_reason(args: list[str], words: str,
                                                                    tmp_path: Path) -> None:
    code, output = run(["match", "--bot", "a=acpc:true", "--bot", "b=true", "--no-sandbox", *args], tmp_path)
    assert code == 2 and words in " ".join(output.split()), output
    assert main is not None


def test_a_game_definition_the_arena_cannot_play_is_refused_naming_its_line(tmp_path: Path) -> None:
    (tmp_path / "leduc.game").write_text(NL2.read_text().replace("numHoleCards = 2", "numHoleCards = 1"))
    code, output = run(["match", "--bot", "a=true", "--bot", "b=true", "--acpc-game", "leduc.game"], tmp_path)
    assert code == 2 and "leduc.game:10: numHoleCards = 1: the arena plays Texas Hold'em (2 hole cards)" in output
    (tmp_path / "t.toml").write_text('name = "t"\n[[bots]]\nname = "a"\ncommand = "true"\nacpc = "yes"\n'
                                     '[[bots]]\nname = "b"\ncommand = "true"\n')
    code, output = run(["tournament", "t.toml", "--db", "t.db"], tmp_path)
    assert code == 2 and "acpc = 'yes': expected true" in output, output
    (tmp_path / "f.toml").write_text('name = "f"\ngame = "freezeout"\n[[bots]]\nname = "a"\ncommand = "true"\n'
                                     'acpc = true\n[[bots]]\nname = "b"\ncommand = "true"\n')
    code, output = run(["tournament", "f.toml", "--db", "f.db"], tmp_path)
    assert code == 2 and "a (ACPC client): a freezeout game carries the stacks over" in output, output
