"""Hostile names through the real commands (issue 25): operator-given bot names and match ids with ANSI and OSC
sequences, a forged line, a direction override, ``../`` and great length go through ``arena match``,
``tournament``, ``leaderboard``, ``verify``, ``export``, ``bots list`` and the site. Nothing a name says reaches a
terminal as a control character, every file lands inside the folder it was given, and names over their cap are
refused naming the limit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bots import caller

REPO = Path(__file__).resolve().parents[2]
CALLER = caller()
EVIL = "\x1b]0;pwned\x07\x1b[31m\u202eevil"  # sets the title, turns red, reverses what follows
FORGED = "bot\nverify ok"
RAW = ("\x1b", "\x07", "\u202e", "\x9b")


def arena(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    return subprocess.run([sys.executable, "-m", "arena", *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=180, check=False)


def clean(proc: subprocess.CompletedProcess[str]) -> None:
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out, out
    found = [c for c in RAW if c in out]
    assert not found, (found, out[-2000:])


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database holding one match between two bots with hostile names, its id climbing out of folders."""
    root = tmp_path_factory.mktemp("hostile")
    proc = arena("match", "--bot", f"{EVIL}={CALLER}", "--bot", f"{FORGED}={CALLER}", "--hands", "6",
                 "--db", root / "h.db", "--match-id", "../../escape\x1b", "--phh-dir", root / "phh",
                 "--log-dir", root / "logs", cwd=root)
    assert proc.returncode == 2 and "printable characters" in proc.stderr  # a control character in an id: refused
    clean(proc)
    proc = arena("match", "--bot", f"{EVIL}={CALLER}", "--bot", f"{FORGED.replace(chr(10), ' ')}={CALLER}",
                 "--hands", "6", "--db", root / "h.db", "--match-id", "../../escape", "--phh-dir", root / "phh",
                 "--log-dir", root / "logs", cwd=root)
    assert proc.returncode == 0, proc.stderr
    clean(proc)
    assert "\\x1b]0;pwned\\x07" in proc.stdout  # shown, escaped
    return root


def test_the_match_wrote_only_inside_its_folders(played: Path) -> None:
    for path in played.rglob("*"):
        assert played in path.resolve().parents or path.resolve() == played
    assert not (played.parent / "escape").exists() and not (played.parent.parent / "escape").exists()
    assert len(list((played / "phh").rglob("*.phh"))) == 6  # three deals, each in two rotations
    assert len(list((played / "logs").glob("*.log"))) == 4  # two bots, two rotations


@pytest.mark.parametrize("command", [["leaderboard"], ["leaderboard", "--json"], ["verify"], ["export", "--phh"]])
def test_reading_commands_escape_every_name(played: Path, command: list[str]) -> None:
    args = [*command, played / "out"] if command[-1] == "--phh" else command
    proc = arena(*args, "--db", played / "h.db", cwd=played)
    assert proc.returncode == 0, proc.stderr
    clean(proc)


def test_the_site_shows_names_isolated_with_their_controls_visible(played: Path) -> None:
    proc = arena("publish", "--db", played / "h.db", "--out", played / "site", cwd=played)
    assert proc.returncode == 0, proc.stderr
    clean(proc)
    for page in (played / "site").rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert not any(c in text for c in RAW), page
    for data in (played / "site").rglob("data-*.js"):  # the hand viewer's: JSON, its escapes read as the names
        block = json.loads(data.read_text(encoding="utf-8").removeprefix("arenaHands(").removesuffix(");\n"))
        assert not any(c in name for name in [*block["bots"], block["match"]] for c in RAW), block["bots"]
        assert any("\\u202e" in name for name in block["bots"]), block["bots"]  # shown as an escape, as on pages
    index = (played / "site" / "index.html").read_text(encoding="utf-8")
    assert "<bdi>" in index and "\\u202eevil" in index


def test_a_tournament_of_hostile_names(tmp_path: Path) -> None:
    (tmp_path / "cup.toml").write_text(f"""
name = "cup\\u001b[2J"
hands = 4
[[bots]]
name = {json.dumps(EVIL)}
command = "{CALLER}"
[[bots]]
name = "../../../{'x' * 55}"
command = "{CALLER}"
""")
    proc = arena("tournament", "cup.toml", "--db", tmp_path / "cup.db", "--log-dir", tmp_path / "logs", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    clean(proc)
    assert all(tmp_path in p.resolve().parents for p in (tmp_path / "logs").iterdir())


def test_names_over_their_cap_are_refused_naming_the_limit(tmp_path: Path) -> None:
    proc = arena("match", "--bot", f"{'n' * 65}={CALLER}", "--bot", f"b={CALLER}", cwd=tmp_path)
    assert proc.returncode == 2 and "name is at most 64 characters, got 65" in proc.stderr
    proc = arena("match", "--bot", f"a@{'v' * 10240}={CALLER}", "--bot", f"b={CALLER}", cwd=tmp_path)
    assert proc.returncode == 2 and "version is at most 64 characters, got 10240" in proc.stderr
    clean(proc)
    (tmp_path / "cup.toml").write_text(f'name = "c"\n[[bots]]\nname = "{"n" * 90}"\ncommand = "x"\n'
                                       f'[[bots]]\nname = "b"\ncommand = "x"\n')
    proc = arena("tournament", "cup.toml", "--db", tmp_path / "c.db", cwd=tmp_path)
    assert proc.returncode == 2 and "bots[0]: a bot's name is at most 64 characters, got 90" in proc.stderr


def test_bots_list_escapes_an_owner(tmp_path: Path) -> None:
    proc = arena("bots", "add", "alice", "--db", tmp_path / "l.db", "--owner", EVIL, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    clean(proc)
    listed = arena("bots", "list", "--db", tmp_path / "l.db", cwd=tmp_path)
    assert listed.returncode == 0 and "alice" in listed.stdout
    clean(listed)
