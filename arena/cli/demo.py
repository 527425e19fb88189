"""``arena demo`` (what ``make demo`` runs): a real duplicate round-robin of the sample bots over gRPC, recorded
in SQLite, verified against its seed, ranked, and published as a static site.
"""

from __future__ import annotations

import logging
import shutil
import sys
import time
from pathlib import Path

import click

from arena.cli.leaderboard import console, print_leaderboard
from arena.cli.tournament import play_tournament
from arena.publish.site import publish
from arena.ratings.leaderboard import build_leaderboard
from arena.records.db import Database
from arena.records.verify import verify_match
from arena.referee import ClockPolicy
from arena.runner.bots import BotSpec
from arena.runner.tournament import TournamentConfig, matches_of

REPO = Path(__file__).resolve().parents[2]


def demo_config(hands: int, seed: str) -> TournamentConfig:
    """The sample bots of both languages, heads-up round-robin, no-limit 50/100 with 200 big blinds."""
    python = sys.executable
    bots = [
        BotSpec("equity", f"{python} sample_bots/python/equity_bot.py", "1.0"),
        BotSpec("caller", f"{python} sample_bots/python/calling_station.py", "1.0"),
        BotSpec("random", f"{python} sample_bots/python/random_bot.py --seed 7", "1.0"),
    ]
    if shutil.which("node") and (REPO / "sample_bots" / "javascript" / "node_modules").is_dir():
        bots.append(BotSpec("js-caller", "node sample_bots/javascript/bot.js", "0.1.0"))
    return TournamentConfig(
        name="demo", bots=tuple(bots), seed=seed, hands=hands, seats=2, workers=2, cwd=REPO,
        policy=ClockPolicy(per_action_ms=5000, time_bank_ms=60000, connect_timeout_ms=30000),
    )


@click.command()
@click.option("--hands", type=click.IntRange(min=2), default=300, show_default=True, help="Hands per pairing.")
@click.option("--seed", default="arena-demo", show_default=True, help="Tournament seed (published with the results).")
@click.option("--out", "out_dir", default="out/demo", show_default=True, type=click.Path(file_okay=False),
              help="Where the database, the bots' logs and the site go (replaced on every run).")
def demo(hands: int, seed: str, out_dir: str) -> None:
    """Run a duplicate round-robin of the sample bots, then print and publish the leaderboard."""
    logging.basicConfig(level=logging.ERROR)
    out = Path(out_dir)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    config = demo_config(hands, seed)
    db = Database(out / "demo.db")
    names = ", ".join(b.name for b in config.bots)
    click.echo(f"demo: heads-up duplicate round-robin of {names}; {hands} hands per pairing; seed {seed!r}")
    started = time.monotonic()
    play_tournament(config, db, resume=False, show_progress=sys.stdout.isatty(), log_dir=out / "logs")
    elapsed = time.monotonic() - started
    ids = list(matches_of(config))
    total = sum(db.hands_recorded(m) for m in ids)
    bad = [v for v in (verify_match(db, m) for m in ids) if not v.ok]
    click.echo(f"played {total} hands in {elapsed:.1f} s ({total / elapsed:.0f} hands/s); "
               f"{len(ids) - len(bad)}/{len(ids)} matches re-dealt from their seeds and verified")
    board = build_leaderboard(db, ids)
    print_leaderboard(board, "demo leaderboard")
    result = publish(db, out / "site", board=board)
    console().print(f"published site: {result.index}")
    console().print(f"database: {db.path}  (arena leaderboard --db {db.path}; arena verify --db {db.path})")
    if bad:
        raise SystemExit(1)


COMMANDS = [demo]
