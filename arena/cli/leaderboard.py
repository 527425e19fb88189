"""``arena leaderboard``: the ratings table in the terminal, or JSON for machines."""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from arena.cli.exits import ArenaCommand
from arena.cli.options import rating_options, rules_from_flags
from arena.cli.output import add_row, cell, echo
from arena.ratings.games import Standing
from arena.ratings.leaderboard import Leaderboard, build_leaderboard, flag_text, leaderboard_json
from arena.ratings.stats import WinRate
from arena.records import queries
from arena.records.db import Database
from arena.records.errors import DatabaseError

DEFAULT_DB = "arena.db"
HISTORY_POINTS = 30  # in the JSON: the rating after the first n rating games, for this many values of n


def console() -> Console:
    """A console that keeps tables readable when the output is a pipe or a log (rich assumes 80 columns)."""
    return Console(width=None if sys.stdout.isatty() else 160)


def open_db(path: str | Path, create: bool = False, upgrade: bool = False) -> Database:
    """Open a database (an existing one, read-only, unless ``create``; ``upgrade``: an existing one, upgraded in
    place if an older arena wrote it), or fail with a clear message."""
    writable = create or (upgrade and os.access(path, os.W_OK))  # a file it may not write is verified as it is
    try:
        return Database(path, read_only=not writable, create=create)
    except DatabaseError as exc:
        raise click.ClickException(str(exc)) from None


def _ci(low: float, high: float) -> str:
    if not (math.isfinite(low) and math.isfinite(high)):
        return "(one session)"
    return f"[{low:+.0f}, {high:+.0f}]"


def sorted_by_text(board: Leaderboard) -> str:
    """The table's caption: what it is sorted by, what a rating game is, and what the win rate is."""
    return (f"sorted by {board.system.sorted_by()} · games: {board.rules.describe()} ({board.games} games) · "
            "mbb/hand: mean over duplicate sessions (a deal, or a game, in all its rotations), with its 95% CI · "
            "all-in EV: the same with every all-in before the river scored by its expectation over the rest of the "
            "board · "
            "AIVAT: the same with the luck of the cards and of the referee's draws taken out (README, Ratings)")


def _rate_cells(rate: WinRate | None) -> tuple[str, str]:
    """An adjusted win rate's two cells: the mean and its 95% CI (a dash when there is none)."""
    return (f"{rate.mean:+.1f}", _ci(rate.low, rate.high)) if rate else ("–", "")


def print_leaderboard(board: Leaderboard, title: str = "leaderboard") -> None:
    """The leaderboard as a terminal table: the rating system's columns (its sort column marked ▼) beside mbb/hand
    with its 95% CI, and play statistics."""
    system = board.system
    table = Table(title=cell(f"{title}: {board.sessions} duplicate sessions"), caption=sorted_by_text(board))
    table.add_column("#", justify="right")
    table.add_column("bot", justify="left")
    for column in system.columns:
        table.add_column(f"{column.label} ▼" if column.key == system.sort_key else column.label, justify="right")
    table.add_column("games", justify="right")
    for header in ("mbb/hand", "95% CI", "all-in EV", "EV 95% CI", "AIVAT", "AIVAT 95% CI", "sessions", "hands",
                   "VPIP", "PFR", "AF", "viol."):
        table.add_column(header, justify="right")
    played = any(row.games for row in board.rows)
    if played:  # cash games and freezeouts: games, wins, in the money, mean place (arena.ratings.games)
        for header in ("played", "wins", "ITM", "mean place"):
            table.add_column(header, justify="right")
    flagged = any(row.flags for row in board.rows)
    if flagged:
        table.add_column("flags", justify="left")
    for row in board.rows:
        stats = row.stats
        add_row(
            table, str(row.rank), row.bot, *(column.format(row.rating[column.key]) for column in system.columns),
            f"{row.rating_games} provisional" if row.provisional else str(row.rating_games),
            f"{row.win_rate.mean:+.1f}", _ci(row.win_rate.low, row.win_rate.high),
            *_rate_cells(row.allin), *_rate_cells(row.aivat),
            str(row.win_rate.sessions),
            str(row.win_rate.hands),
            f"{stats.vpip:.0%}" if stats else "", f"{stats.pfr:.0%}" if stats else "",
            f"{stats.aggression:.2f}" if stats and stats.aggression is not None else "–",
            str(stats.violations) if stats else "",
            *(_games(row.games) if played else []),
            *([row.flag_text] if flagged else []),
        )
    console().print(table)
    for bot, flags in board.unrated.items():
        console().print(cell(f"{bot}: not rated: {flag_text(flags)}"), style="red")
    print_consistency(board)


def print_consistency(board: Leaderboard) -> None:
    """What the leaderboard's check of its order against the head-to-head results found."""
    out = console()
    if board.consistency.ok:
        out.print("order checked: no pair is ranked against a significant head-to-head result", highlight=False)
        return
    for line in board.consistency.lines():
        out.print(cell(f"CHECK: {line}"), style="yellow", highlight=False)


def _games(standing: Standing | None) -> list[str]:
    if standing is None:
        return ["", "", "", ""]
    mean = f"{standing.mean_place:.2f}" if standing.mean_place is not None else "–"
    return [str(standing.games), str(standing.wins), str(standing.itm), mean]


@click.command(cls=ArenaCommand)
@click.option("--db", "db_path", default=DEFAULT_DB, show_default=True, type=click.Path(dir_okay=False))
@click.option("--match", "match_ids", multiple=True, help="Only these matches (repeat); default: all.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@rating_options
def leaderboard(db_path: str, match_ids: tuple[str, ...], as_json: bool, **kw: Any) -> None:
    """Rank the bots of a database: TrueSkill over blocks of duplicate deals, all fitted at once (sorted by
    mu - 3 sigma), beside mbb/hand with 95% CIs; then check the order against every head-to-head result."""
    rules = rules_from_flags(kw)
    db = open_db(db_path)
    unknown = [m for m in match_ids if queries.match_info(db, m) is None]
    if unknown:
        raise click.ClickException(f"no match {', '.join(unknown)} in {db_path}")
    board = build_leaderboard(db, list(match_ids) or None, history_points=HISTORY_POINTS if as_json else 0,
                              rules=rules)
    if as_json:
        echo(json.dumps(leaderboard_json(board), indent=2))
    else:
        print_leaderboard(board)
