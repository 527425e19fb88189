"""``arena validate`` as a command, on real bots in the real sandbox: a good bot, a syntax error, a bot that never
joins, one that sends illegal actions and one that goes over its memory cap, each with its exit status and its
words, never a traceback. Each plays two hands against the calling station (one duplicate set)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from arena.runner.sandbox_cgroup import layout
from tests.bots import CPP_BOT, caller

REPO = Path(__file__).resolve().parents[2]
BOTS = Path(__file__).resolve().parent / "validate_bots"

pytestmark = pytest.mark.timeout(120)


def validate(folder: Path, command: str, *flags: str) -> subprocess.CompletedProcess[str]:
    out = subprocess.run([sys.executable, "-m", "arena", "validate", "--folder", str(folder), "--command", command,
                          "--hands", "2", "--against", "caller", *flags],
                         capture_output=True, text=True, timeout=100, cwd=REPO)
    assert "Traceback" not in out.stderr.replace("| Traceback", ""), out.stderr
    return out


def test_a_good_bot_is_ready() -> None:
    out = validate(CPP_BOT.parent, caller())  # the C++ sample bot's calling station, from its build folder
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.startswith("ready: it started, joined and answered all")
    assert "time a decision:" in out.stdout and "ms at most" in out.stdout
    assert "played by 2 processes of it" in out.stdout  # one per rotation
    assert "exit status 0 (ready)" in out.stdout


def readable(folder: Path) -> Path:
    """A folder the bot's unprivileged uid may read (pytest's are its owner's only)."""
    folder.chmod(0o755)
    for path in folder.iterdir():
        path.chmod(0o644)
    return folder


def test_a_syntax_error_did_not_start(tmp_path: Path) -> None:
    (tmp_path / "bot.py").write_text("def broken(:\n    pass\n")
    readable(tmp_path)
    out = validate(tmp_path, "python bot.py")
    assert out.returncode == 10, out.stdout + out.stderr
    assert "not ready: its process exited with status 1 before it joined" in out.stdout
    assert "SyntaxError" in out.stdout and "| Traceback" not in out.stdout.split("SyntaxError")[1]


def test_a_missing_file_did_not_start(tmp_path: Path) -> None:
    out = validate(readable(tmp_path), "python nowhere.py")
    assert out.returncode == 10, out.stdout + out.stderr
    assert "before it joined" in out.stdout and "nowhere.py" in out.stdout


def test_a_bot_that_never_joins() -> None:
    out = validate(BOTS, "python silent.py", "--connect-timeout-ms", "1000")
    assert out.returncode == 11, out.stdout + out.stderr
    assert "never joined within 1 s (clock.connect_timeout_ms)" in out.stdout


def test_illegal_actions_are_named_with_their_rule() -> None:
    out = validate(BOTS, "python illegal.py")
    assert out.returncode == 14, out.stdout + out.stderr
    assert "were refused by the rules (the first: R7.2:" in out.stdout
    assert "exit status 14 (sent illegal actions)" in out.stdout


@pytest.mark.skipif(layout()[0] is None, reason="no cgroup for the bots on this host: nothing caps a bot as a whole")
def test_a_bot_over_its_memory_cap() -> None:
    out = validate(BOTS, "python hog.py --mb 320", "--bot-memory-mb", "512", "--per-action-ms", "10000")
    assert out.returncode == 12, out.stdout + out.stderr
    assert "it was killed: exceeded its memory cap of 512 MB (sandbox.memory_mb" in out.stdout
    assert "exit status 12 (went over its limits)" in out.stdout
