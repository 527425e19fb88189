"""``arena tournament``: a resumable round-robin of duplicate matches, ending with the leaderboard."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import sys
from pathlib import Path
from typing import Any

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from arena.cli.exits import EXIT_BOT_FAILED, EXIT_ERROR, EXIT_INTERRUPTED, EXIT_OK, ArenaCommand
from arena.cli.leaderboard import DEFAULT_DB, console, open_db, print_leaderboard
from arena.cli.options import (
    ConfigurationError,
    checked_outputs,
    rating_options,
    rules_from_flags,
    sandbox_options,
    sandbox_policy,
    settings_from_flags,
    settings_options,
)
from arena.cli.output import echo, secho
from arena.deals import commitment
from arena.ratings.leaderboard import build_leaderboard, leaderboard_json
from arena.ratings.scoring_worker import RecordedScoring
from arena.ratings.settings import rules_from_mapping
from arena.records import queries
from arena.records.db import Database
from arena.records.ledger import Ledger
from arena.referee import HandRecord, MatchResult
from arena.runner.executor import ExecutorError, ExecutorKind, MatchExecutor, make_executor
from arena.runner.settings import SANDBOX_SETTINGS, MatchSettings, SettingsError, read_toml
from arena.runner.tournament import (
    MatchesLost,
    ScheduledMatch,
    TournamentConfig,
    TournamentError,
    TournamentProgress,
    hands_to_play,
    matches_of,
    run_tournament,
    schedule,
)


def play_tournament(
    config: TournamentConfig, db: Database, resume: bool, show_progress: bool, log_dir: Path | None,
    executor: MatchExecutor | None = None,
) -> list[MatchResult]:
    """Run a tournament with a progress bar for hands and matches (when asked for), its matches played by
    ``executor`` (here by default). A reset game's hands are rescored by all-in EV and AIVAT in a worker process as
    they are recorded (arena.ratings.scoring_worker), so the leaderboard that follows finds them worked out."""
    scheduled = schedule(config)
    logging.getLogger("arena.ratings.scoring").setLevel(logging.WARNING)  # a scoring worker that failed: said
    scoring = None if config.game.is_game else RecordedScoring(db)
    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=console(), disable=not show_progress, transient=False,
    ) as bars:
        # a cash game's or a freezeout's length is known only once it is over: no total for those hands
        total = None if config.game.is_game else hands_to_play(config, lambda m: queries.hands_recorded(db, m))
        hands = bars.add_task("hands", total=total)
        matches = bars.add_task("matches", total=len(scheduled))

        def hand_done(record: HandRecord) -> None:  # the database has the hand already
            bars.advance(hands)
            if scoring is not None:
                scoring.add(record)

        def match_done(match: ScheduledMatch, result: MatchResult | None) -> None:
            bars.advance(matches)

        progress = TournamentProgress(hand_done, match_done)
        try:
            results = asyncio.run(run_tournament(config, Ledger(db), resume, progress, log_dir, executor))
            if scoring is not None:
                scoring.finish()
            return results
        finally:
            if scoring is not None:
                scoring.close()


@click.command(cls=ArenaCommand)
@click.argument("config_path", metavar="CONFIG.toml", type=click.Path(dir_okay=False))
@click.option("--db", "db_path", default=DEFAULT_DB, show_default=True, type=click.Path(dir_okay=False))
@click.option("--resume", is_flag=True, help="Finish a tournament already started in the database.")
@click.option("--progress/--no-progress", "show_progress", default=None,
              help="Progress bars (default: when the output is a terminal).")
@click.option("--log-dir", type=click.Path(file_okay=False), default=None, help="Keep each bot's output here.")
@click.option("--json", "json_out", is_flag=True, help="Print the outcome as JSON (leaderboard, errors) instead.")
@click.option("--executor", "executor_name", type=click.Choice([k.value for k in ExecutorKind]), default=None,
              help="Where the matches are played: here (local), or as tasks on a Ray cluster (ray; pip install -e "
                   "'.[ray]'). Default: the file's executor key, else local.")
@click.option("--ray-address", default=None, metavar="ADDR",
              help="The Ray cluster to play on: host:port of its head, or auto (the one started on this machine); "
                   "default: RAY_ADDRESS, else a new one here for the run.")
@settings_options(SANDBOX_SETTINGS)
@sandbox_options
@rating_options
def tournament(config_path: str, db_path: str, resume: bool, show_progress: bool | None, log_dir: str | None,
               json_out: bool, executor_name: str | None, ray_address: str | None, **kw: Any) -> None:
    """Play a round-robin of duplicate matches between the bots of CONFIG.toml and print the leaderboard.

    See arena.runner.tournament.TournamentConfig.from_toml for the file's keys.
    """
    logging.basicConfig(level=logging.ERROR)
    try:
        config = TournamentConfig.from_toml(config_path)
        rules = rules_from_mapping(read_toml(Path(config_path), TournamentError).get("ratings", {}), config_path)
    except (TournamentError, SettingsError) as exc:
        raise ConfigurationError(str(exc)) from None
    rules = rules_from_flags(kw, rules)
    from_file = MatchSettings().with_sandbox(config.sandbox)
    sandbox = sandbox_policy(kw.pop("no_sandbox"), settings_from_flags(kw, from_file))
    sandbox = checked_outputs(sandbox, config.bots, config.cwd, {"--log-dir": log_dir}, {"--db": db_path})
    config = dataclasses.replace(config, sandbox=sandbox)
    if executor_name is not None:
        config = dataclasses.replace(config, executor=ExecutorKind(executor_name))
    if ray_address and config.executor is not ExecutorKind.RAY:
        raise ConfigurationError("--ray-address is for the Ray executor: add --executor ray (or executor = \"ray\" "
                                 "in the file)")
    logging.getLogger("arena.runner").setLevel(logging.WARNING)  # a lost worker, and the replay of its match
    executor: MatchExecutor | None = None
    try:
        db = open_db(db_path, create=True)
        config = config.with_seed(Ledger(db))
    except TournamentError as exc:
        raise ConfigurationError(str(exc)) from None
    try:
        executor = make_executor(config.executor, ray_address)
    except ExecutorError as exc:
        secho(f"error: {exc}", fg="red", err=True)
        raise SystemExit(EXIT_ERROR) from None
    try:
        results = play_tournament(config, db, resume,
                                  sys.stdout.isatty() if show_progress is None else show_progress,
                                  Path(log_dir) if log_dir else None, executor)
    except TournamentError as exc:
        raise ConfigurationError(str(exc)) from None
    except (ExecutorError, MatchesLost) as exc:
        secho(f"error: {exc}; every finished hand is recorded: finish with arena tournament {config_path} "
                    f"--db {db_path} --resume", fg="red", err=True)
        raise SystemExit(EXIT_ERROR) from None
    except KeyboardInterrupt:
        secho(f"interrupted: every finished hand is recorded; finish with arena tournament {config_path} "
                    f"--db {db_path} --resume", fg="yellow", err=True)
        raise SystemExit(EXIT_INTERRUPTED) from None
    finally:
        if executor is not None:
            executor.close()
    board = build_leaderboard(db, list(matches_of(config)), rules=rules)
    if json_out:
        failures = [failure for result in results for failure in result.failures()]
        code = EXIT_BOT_FAILED if failures else EXIT_OK
        echo(json.dumps({
            "summary": f"tournament {config.name}: {len(results)} matches played, {board.sessions} duplicate sessions"
                       + (f"; {len(failures)} bot failure(s)" if failures else ""),
            "exit_code": code, "tournament": config.name, "commitment": commitment(config.seed),
            "seed": queries.published_seed(db, config.seed_key),
            "final_hashes": {m.match_id: m.final_hash or None for m in board.matches},
            "leaderboard": leaderboard_json(board), "errors": failures,
        }, indent=2))
        raise SystemExit(code)
    print_leaderboard(board, f"tournament {config.name}")
    for m in board.matches:  # each match's seal: arena verify --match ID --final HASH checks a copy against it
        echo(f"final hash {m.match_id}: {m.final_hash or '(not sealed: ' + m.status + ')'}")
    raise SystemExit(report_failures(results))


def report_failures(results: list[MatchResult]) -> int:
    """Say loudly which bots never connected, crashed, forfeited or dropped out; the exit status that follows."""
    failures = [failure for result in results for failure in result.failures()]
    for failure in failures:
        secho(f"error: {failure}", fg="red", err=True)
    return EXIT_BOT_FAILED if failures else EXIT_OK
