"""What the integrity tests share: where things are, reading what the cheat bots report, running ``arena``."""

from __future__ import annotations

import json
import secrets
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.bots import caller

REPO = Path(__file__).resolve().parents[2]
CHEATS = REPO / "tests" / "integrity" / "cheats"
SAMPLES = REPO / "sample_bots" / "python"
CALLER = caller()  # the honest opponent of most cheats: the C++ calling station, which starts in milliseconds
# Cheat bots search (processes, files) before they join: on a loaded machine (seen: a CI run under heavy steal, whose
# token thief joined after the default 10 s) they are waited for longer
SLOW_JOIN = ("--connect-timeout-ms", "30000")


def cheat(name: str, args: str = "", env: str = "") -> str:
    """The command of a cheat bot of ``cheats/``."""
    return f"{env} python {CHEATS / name}.py {args}".strip()


def seed_marker() -> str:
    """A fresh seed the seed hunter would know when it saw it (see cheats/seed_hunter.py)."""
    return "SEED" + "HUNT-" + secrets.token_hex(16)


def reports(folder: Path, prefix: str, bot: str = "*") -> list[dict[str, Any]]:
    """Every ``PREFIX {json}`` line that the bot(s) ``bot`` wrote in the logs of ``folder`` (one log per process)."""
    out = []
    for path in sorted(folder.rglob(f"*-{bot}.log")):
        for line in path.read_text(errors="replace").splitlines():
            if line.startswith(prefix + " "):
                out.append(json.loads(line[len(prefix) + 1:]))
    return out


def copy_cheat(name: str, folder: Path) -> Path:
    """A copy of a cheat bot in a folder of its own (its own folder is what the sandbox binds)."""
    folder.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy(CHEATS / f"{name}.py", folder / f"{name}.py"))


def arena(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120,
          check: bool = True) -> subprocess.CompletedProcess[str]:
    """``python -m arena ARGS`` as a process of its own."""
    proc = subprocess.run([sys.executable, "-m", "arena", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)
    if check and proc.returncode != 0:
        raise AssertionError(f"arena {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def match_json(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """The result an ``arena match --json`` printed."""
    start = proc.stdout.index("{")
    data: dict[str, Any] = json.loads(proc.stdout[start:])
    return data


def by_name(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The results of an ``arena match --json`` by bot name."""
    return {r["name"]: r for r in result["results"]}
