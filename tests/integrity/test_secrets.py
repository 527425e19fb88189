"""The seed hunter (cheats/seed_hunter.py) in ``arena match`` and ``arena tournament``: whatever it reads, it never
sees the seed, the database, the seed file or the tournament file, also when they lie in its own folder (covered:
an empty device node is bound over each, which a sandbox without devices cannot open).

And the referee's secret files stay covered while it rewrites them (the seed vault changes at every match's start
and end), whether or not the bots run under a uid of their own.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

import arena.runner.sandbox as sandbox
from arena.records.db import Database
from arena.runner.bots import BotProcess, BotSpec
from arena.runner.sandbox import SandboxPolicy
from tests.integrity.harness import CALLER, SLOW_JOIN, arena, cheat, copy_cheat, match_json, reports, seed_marker

pytestmark = pytest.mark.timeout(120)


def secret_files(db: Path) -> list[Path]:
    """The database, its journal files and its seed vault."""
    return [db, *(db.with_name(db.name + suffix) for suffix in ("-wal", "-shm", "-journal", ".seeds"))]


def check_hunt(hunts: list[dict[str, Any]], secrets: list[Path], processes: int, masked: bool) -> None:
    """Nothing the hunters read held a seed or a database; the referee's files were unreadable."""
    assert len(hunts) == processes
    for hunt in hunts:
        assert hunt["uid"] != 0
        assert not hunt["truncated"] and hunt["files_walked"] > 10_000, hunt["files_walked"]
        assert hunt["seed_hits"] == [], hunt["seed_hits"]
        assert hunt["sqlite"] == []
        assert "ARENA_SEED" not in hunt["env_keys"]
        assert hunt["spectator_service"] == "StatusCode.UNIMPLEMENTED"
        named = hunt["named"]
        for path in map(str, secrets):
            seen = named.get(path)
            assert seen is None or not seen["readable"], (path, seen)
        if masked:  # the files were there to be found, and could not be read, even those anyone may read: covered
            present = [str(p) for p in secrets if p.exists()]
            assert present and all(named.get(p, {}).get("readable") is False for p in present), (present, named)


@pytest.mark.parametrize("inside", [False, True], ids=["apart", "in-the-bots-folder"])
def test_the_seed_hunter_finds_nothing_in_arena_match(tmp_path: Path, inside: bool) -> None:
    seed = seed_marker()
    if inside:  # the database, the seed file and the logs deliberately in the hunter's own folder
        folder = tmp_path / "hunter"
        hunter = copy_cheat("seed_hunter", folder)
        command = f"python {hunter}"
    else:
        folder = tmp_path / "referee"
        folder.mkdir()
        command = cheat("seed_hunter")
    seed_file, db, logs = folder / "match.seed", folder / "arena.db", folder / "logs"
    seed_file.write_text(seed + "\n")
    seed_file.chmod(0o644)  # readable to anyone: only the sandbox keeps it from the bots
    env = {**os.environ, "ARENA_SEED": seed_marker()}  # the referee's environment holds another one
    proc = arena("match", *SLOW_JOIN, "--hands", "20", "--seed-file", str(seed_file), "--db", str(db),
                 "--log-dir", str(logs), "--match-id", "hunt", "--json", "--bot", f"hunter={command}",
                 "--bot", f"caller={CALLER}",
                 cwd=tmp_path, env=env)
    result = match_json(proc)
    assert result["status"] == "completed" and result["seed"] == seed
    assert all(r["violations"] == 0 for r in result["results"])
    hunts = reports(logs, "HUNT", "hunter")
    check_hunt(hunts, [*secret_files(db), seed_file], processes=2, masked=inside)
    print(json.dumps({k: v for k, v in hunts[0].items() if k not in ("processes", "named")}))


def test_the_seed_hunter_finds_nothing_in_a_tournament(tmp_path: Path) -> None:
    """Tournament file, seed file and database all in the hunter's folder, which is the tournament's folder."""
    folder = tmp_path / "cup"
    copy_cheat("seed_hunter", folder)
    seed = seed_marker()
    (folder / "cup.seed").write_text(seed + "\n")
    (folder / "cup.seed").chmod(0o644)
    toml = folder / "cup.toml"
    toml.write_text(f'name = "cup"\nseed_file = "cup.seed"\nhands = 20\nworkers = 1\n'
                    f'[clock]\nconnect_timeout_ms = 30000\n'
                    f'[[bots]]\nname = "hunter"\ncommand = "python seed_hunter.py"\n'
                    f'[[bots]]\nname = "caller"\ncommand = "{CALLER}"\n')
    toml.chmod(0o644)
    db = folder / "arena.db"
    arena("tournament", str(toml), "--db", str(db), "--log-dir", str(folder / "logs"), "--no-progress",
          cwd=tmp_path)
    hunts = reports(folder / "logs", "HUNT", "hunter")
    check_hunt(hunts, [*secret_files(db), folder / "cup.seed", toml], processes=2, masked=True)
    assert str(toml) in hunts[0]["named"]  # it did find the tournament file: covered, empty


def test_without_the_sandbox_the_seed_hunter_does_find_the_seed(tmp_path: Path) -> None:
    """The control: the same hunter, unsandboxed, reads the seed file in its working directory at once."""
    seed = seed_marker()
    (tmp_path / "match.seed").write_text(seed + "\n")
    logs = tmp_path / "logs"
    arena("match", *SLOW_JOIN, "--hands", "4", "--seed-file", "match.seed", "--log-dir", str(logs), "--no-sandbox",
          "--bot", f"hunter={cheat('seed_hunter', env='HUNT_BUDGET_S=2')}", "--bot", f"caller={CALLER}",
          cwd=tmp_path)
    hits = [hit for hunt in reports(logs, "HUNT", "hunter") for hit in hunt["seed_hits"]]
    assert any(seed in hit["text"] for hit in hits), hits


@pytest.mark.parametrize("root", [True, False], ids=["own-uid", "same-uid-as-the-referee"])
def test_the_seed_vault_stays_covered_while_the_referee_rewrites_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, root: bool
) -> None:
    """A bot whose folder holds the database watches the vault while new matches start and end (each rewrites
    it). As root every bot has a uid of its own, so a 0600 file is unreadable anyway; run by an ordinary user the
    bot has the referee's uid, and only the cover stands between it and the seeds."""
    if not root:
        monkeypatch.setattr(sandbox, "is_root", lambda: False)
    folder = tmp_path / "bot"
    copy_cheat("peeker", folder)
    db = Database(folder / "arena.db")
    db.vault.put("first", seed_marker())
    secrets = db.vault.files
    policy = SandboxPolicy().hiding(db.path, *secrets)
    socket = tmp_path / "referee.sock"
    socket.touch()
    log = tmp_path / "peek.log"
    paths = " ".join(str(p) for p in secrets)

    async def scenario() -> None:
        bot = BotProcess(BotSpec("peek", f"python peeker.py 4 {paths}"), log, policy)
        await bot.start(socket, "token", folder)
        deadline = time.monotonic() + 20
        while "PEEK-READY" not in (log.read_text() if log.exists() else ""):
            assert time.monotonic() < deadline, log.read_text() if log.exists() else "no output"
            await asyncio.sleep(0.05)
        for n in range(5):  # matches start and end: the vault is written again each time
            db.vault.put(f"match-{n}", seed_marker())
            await asyncio.sleep(0.2)
            db.vault.pop("first" if n == 0 else f"match-{n - 1}")
            await asyncio.sleep(0.2)
        await bot.stop(10)

    asyncio.run(scenario())
    seen = [json.loads(line[5:]) for line in log.read_text().splitlines() if line.startswith("PEEK ")]
    assert seen and not any("seed" in s["read"] for s in seen), seen
    # covered (an empty device node on a mount without devices: unreadable), however often it was rewritten
    assert all(s["read"] == "error PermissionError" for s in seen), seen
