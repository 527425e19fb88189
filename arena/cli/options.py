"""Options several commands share: where the seed comes from, and how local bots are sandboxed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from arena.runner.sandbox import UNSANDBOXED_WARNING, SandboxError, SandboxLimits, SandboxPolicy, check_sandbox
from arena.runner.seed_source import SEED_ON_COMMAND_LINE, SeedError, choose_seed


class ConfigurationError(click.ClickException):
    """A configuration (a tournament file, a setting) that cannot be used: exit status 2, like a usage error."""

    exit_code = 2


def _refuse_seed(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    if value is not None:
        raise click.UsageError(SEED_ON_COMMAND_LINE, ctx)


def seed_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--seed-file PATH`` (and a ``--seed`` that explains why it is refused)."""
    func = click.option("--seed", hidden=True, expose_value=False, callback=_refuse_seed,
                        help="Refused: a seed on the command line is readable by every process.")(func)
    return click.option(
        "--seed-file", type=click.Path(dir_okay=False, path_type=Path), default=None,
        help="Read the seed from this file (default: $ARENA_SEED, else a fresh secret seed; published at the end).",
    )(func)


def resolve_seed(seed_file: Path | None, kept: str | None = None) -> str:
    """The seed to deal from (see arena.runner.seed_source), or a usage error saying what is wrong."""
    try:
        return choose_seed(seed_file, kept)
    except SeedError as exc:
        raise click.BadParameter(str(exc), param_hint="--seed-file") from None


_LIMITS = SandboxLimits()


def sandbox_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--no-sandbox`` and the per-process limits of sandboxed bots."""
    options = [
        click.option("--no-sandbox", is_flag=True,
                     help="Run the bots as ordinary processes (unprotected: only for bots you trust)."),
        click.option("--bot-memory-mb", type=click.IntRange(min=0), default=_LIMITS.memory_mb,
                     show_default=True, help="Address space per bot process (0: no limit)."),
        click.option("--bot-cpu-s", type=click.IntRange(min=0), default=_LIMITS.cpu_seconds, show_default=True,
                     help="CPU seconds per bot process (0: no limit)."),
        click.option("--bot-processes", type=click.IntRange(min=0), default=_LIMITS.processes,
                     show_default=True, help="Processes and threads per bot (0: no limit)."),
        click.option("--sandbox-bind", "sandbox_binds", multiple=True, metavar="PATH",
                     type=click.Path(exists=True, path_type=Path),
                     help="An extra file or folder every bot may read (repeat)."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def sandbox_policy(kw: dict[str, Any]) -> SandboxPolicy:
    """The policy the sandbox options ask for (popping them from ``kw``); checks that the sandbox can be built and
    warns loudly when it is switched off."""
    limits = SandboxLimits(cpu_seconds=kw.pop("bot_cpu_s"), memory_mb=kw.pop("bot_memory_mb"),
                           processes=kw.pop("bot_processes"))
    binds = tuple(p.absolute() for p in kw.pop("sandbox_binds"))
    enabled = not kw.pop("no_sandbox")
    if enabled:
        try:
            check_sandbox()
        except SandboxError as exc:
            raise click.ClickException(str(exc)) from None
    else:
        click.secho(UNSANDBOXED_WARNING, fg="yellow", err=True)
    return SandboxPolicy(enabled=enabled, limits=limits, binds=binds)
