"""``arena validate --folder DIR --command CMD``: is a bot ready to submit? (arena.runner.validate)"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import click

from arena.cli.exits import ArenaCommand
from arena.cli.options import sandbox_options, sandbox_policy, settings_from_flags, settings_options
from arena.cli.output import echo
from arena.runner.sandbox import SandboxError
from arena.runner.settings import MatchSettings
from arena.runner.validate import DEFAULT_OPPONENTS, OPPONENTS, ValidationError, ValidationSettings, validate

CLOCK_KEYS = ["clock.per_action_ms", "clock.time_bank_ms", "clock.max_retries", "clock.connect_timeout_ms"]
SANDBOX_KEYS = ["sandbox.memory_mb", "sandbox.cpu_seconds", "sandbox.processes", "sandbox.open_files",
                "sandbox.cpus", "sandbox.seccomp", "sandbox.proc_views", "sandbox.cgroup"]


@click.command(cls=ArenaCommand)
@click.option("--folder", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="The bot's folder: what a submission uploads, and the one folder of its own the bot can read.")
@click.option("--command", "command", required=True, help="How to start the bot, run from its folder (e.g. "
              "'python bot.py', './bot').")
@click.option("--against", "opponents", multiple=True, type=click.Choice(sorted(OPPONENTS)),
              help=f"A sample bot to play (repeat; default: {', '.join(DEFAULT_OPPONENTS)}).")
@click.option("--hands", type=click.IntRange(1, 10_000), default=20, show_default=True,
              help="Hands against each opponent (rounded up to whole duplicate sets).")
@settings_options(CLOCK_KEYS + SANDBOX_KEYS)
@sandbox_options
def validate_command(folder: Path, command: str, opponents: tuple[str, ...], hands: int, no_sandbox: bool,
                     **kw: Any) -> None:
    """Check that a bot is ready to submit: start it in the sandbox the league host uses, play a short duplicate
    match against sample bots, and say in plain words whether it started, joined and answered every request
    legally and in time, how long it took a decision and how much memory it used.

    Exit status: 0 ready; 10 did not start (exited before it joined: a syntax error, a missing file); 11 never
    joined; 12 went over its limits (memory); 13 crashed or was disconnected while it played; 14 sent illegal
    actions; 15 too slow (time-outs); 1 the check itself could not run (no sandbox here); 2 bad arguments.
    """
    settings: MatchSettings = settings_from_flags(kw)
    policy = sandbox_policy(no_sandbox, settings)
    try:
        check = ValidationSettings(tuple(opponents) or DEFAULT_OPPONENTS, hands, settings.clock(), policy)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    echo(f"validating {command!r} from {folder.resolve()}: {check.hands} hands against "
         f"{', '.join(check.opponents)} each, sandboxed as a league host runs it...", err=True)
    try:
        report = asyncio.run(validate(folder, command, check))
    except (ValidationError, SandboxError) as exc:
        raise click.ClickException(str(exc)) from None
    echo(report.text())
    raise SystemExit(report.exit_code)
