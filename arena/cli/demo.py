"""``arena demo`` (what ``make demo`` runs): a real duplicate round-robin of the sample bots over gRPC, recorded
in SQLite, verified against its seed, ranked, and published as a static site.
"""

from __future__ import annotations

import dataclasses
import logging
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import click

from arena.cli.exits import EXIT_ERROR, ArenaCommand
from arena.cli.leaderboard import open_db, print_leaderboard
from arena.cli.options import (
    checked_outputs,
    rating_options,
    rules_from_flags,
    sandbox_options,
    sandbox_policy,
    seed_options,
    settings_from_flags,
    settings_options,
)
from arena.cli.output import echo
from arena.cli.tournament import play_tournament, report_failures
from arena.deals import commitment
from arena.publish.site import publish
from arena.ratings.leaderboard import build_leaderboard
from arena.records import queries
from arena.records.ledger import Ledger
from arena.records.verify import verify_match
from arena.referee import ClockPolicy
from arena.runner.bots import BotSpec
from arena.runner.settings import SANDBOX_SETTINGS
from arena.runner.tournament import TournamentConfig, matches_of

REPO = Path(__file__).resolve().parents[2]
DEMO_DB = "demo.db"
CPP_BOT = Path("sample_bots/cpp/build/arena-cpp-bot")
DEMO_FILES = (DEMO_DB, f"{DEMO_DB}-wal", f"{DEMO_DB}-shm", f"{DEMO_DB}-journal", f"{DEMO_DB}.seeds")
DEMO_FOLDERS = ("logs", "site")


def clear_demo(out: Path) -> None:
    """Remove what an earlier demo wrote in ``out`` (its database, logs and site), and nothing else."""
    if out.exists() and not out.is_dir():
        raise click.UsageError(f"--out {out} is a file, not a folder")
    out.mkdir(parents=True, exist_ok=True)
    for name in DEMO_FILES:
        (out / name).unlink(missing_ok=True)
    for name in DEMO_FOLDERS:
        if (out / name).is_dir():
            shutil.rmtree(out / name)


def demo_config(hands: int, seed_file: Path | None = None) -> TournamentConfig:
    """The sample bots of both languages, heads-up round-robin, no-limit 50/100 with 200 big blinds."""
    python = sys.executable
    bots = [
        BotSpec("equity", f"{python} sample_bots/python/equity_bot.py", "1.0"),
        BotSpec("caller", f"{python} sample_bots/python/calling_station.py", "1.0"),
        BotSpec("random", f"{python} sample_bots/python/random_bot.py --seed 7", "1.0"),
    ]
    if shutil.which("node") and (REPO / "sample_bots" / "javascript" / "node_modules").is_dir():
        bots.append(BotSpec("js-caller", "node sample_bots/javascript/bot.js", "0.1.0"))
    if (REPO / CPP_BOT).is_file():
        bots.append(BotSpec("cpp", str(CPP_BOT), "1.0.0"))
    return TournamentConfig(
        name="demo", bots=tuple(bots), hands=hands, seats=2, workers=2, cwd=REPO, seed_file=seed_file,
        policy=ClockPolicy(per_action_ms=5000, time_bank_ms=60000, connect_timeout_ms=30000),
    )


@click.command(cls=ArenaCommand)
@click.option("--hands", type=click.IntRange(min=2), default=300, show_default=True, help="Hands per pairing.")
@seed_options
@click.option("--out", "out_dir", default="out/demo", show_default=True, type=click.Path(file_okay=False),
              help="Where the database, the bots' logs and the site go (what an earlier demo wrote there is replaced; "
                   "nothing else is touched).")
@settings_options(SANDBOX_SETTINGS)
@sandbox_options
@rating_options
def demo(hands: int, seed_file: Path | None, out_dir: str, **kw: Any) -> None:
    """Run a duplicate round-robin of the sample bots, then print and publish the leaderboard."""
    logging.basicConfig(level=logging.ERROR)
    rules = rules_from_flags(kw)
    sandbox = sandbox_policy(kw.pop("no_sandbox"), settings_from_flags(kw))
    out = Path(out_dir)
    config = demo_config(hands, seed_file)
    sandbox = checked_outputs(sandbox, config.bots, config.cwd, {"--out": out})
    clear_demo(out)
    config = dataclasses.replace(config, sandbox=sandbox)
    db = open_db(out / DEMO_DB, create=True)
    config = config.with_seed(Ledger(db))
    names = ", ".join(b.name for b in config.bots)
    echo(f"demo: heads-up duplicate round-robin of {names}; {hands} hands per pairing; "
               f"commitment {commitment(config.seed)} (the seed is published when it is over)")
    started = time.monotonic()
    results = play_tournament(config, db, resume=False, show_progress=sys.stdout.isatty(), log_dir=out / "logs")
    elapsed = time.monotonic() - started
    ids = list(matches_of(config))
    total = sum(queries.hands_recorded(db, m) for m in ids)
    bad = [v for v in (verify_match(db, m) for m in ids) if not v.ok]
    echo(f"played {total} hands in {elapsed:.1f} s ({total / elapsed:.0f} hands/s); "
               f"{len(ids) - len(bad)}/{len(ids)} matches re-dealt from their seeds and verified")
    board = build_leaderboard(db, ids, rules=rules)
    print_leaderboard(board, "demo leaderboard")
    result = publish(db, out / "site", board=board)
    arena = command_hint()
    echo(f"published site: {result.index}")
    echo(f"database: {db.path}")
    echo(f"next: {arena} leaderboard --db {db.path}\n      {arena} verify --db {db.path}")
    if arena != "arena":
        echo(f"      (or `source {Path(arena).parent}/activate` once, then plain `arena ...`)")
    code = report_failures(results)
    if bad:
        raise SystemExit(EXIT_ERROR)
    raise SystemExit(code)


def command_hint() -> str:
    """How to call ``arena`` from here: plain ``arena`` when it is on PATH, else its path in the venv."""
    here = Path(sys.executable).parent / "arena"
    found = shutil.which("arena")
    if found and Path(found).resolve() == here.resolve():
        return "arena"
    try:
        return str(here.relative_to(Path.cwd()))
    except ValueError:
        return str(here)
