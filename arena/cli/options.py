"""Options several commands share: where the seed comes from, and how local bots are sandboxed."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import click

from arena.cli.output import secho
from arena.ratings.blocks import RatingRules
from arena.ratings.settings import RATING_SETTINGS, rules_with
from arena.referee import MatchSpec
from arena.runner.acpc import AcpcSeatError, check_acpc_seats
from arena.runner.bots import BotSpec
from arena.runner.outputs import OutputError, prepare_outputs
from arena.runner.sandbox import (
    UNSANDBOXED_WARNING,
    SandboxError,
    SandboxPolicy,
    check_drop_caches,
    check_sandbox,
    check_views,
    host_warnings,
)
from arena.runner.seed_source import SEED_ON_COMMAND_LINE, SeedError, choose_seed
from arena.runner.settings import SETTINGS, MatchSettings, Setting, SettingsError, with_acpc_game


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


class _SettingType(click.ParamType[Any]):
    """A click type that reads a value with its setting's parser, so a flag and a TOML key fail the same way."""

    def __init__(self, setting: Setting) -> None:
        self.setting = setting
        self.name = setting.key.rsplit(".", 1)[-1].upper()

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):
            return value
        try:
            return self.setting.parse(value)
        except (ValueError, TypeError) as exc:
            rule = f" ({self.setting.rule})" if self.setting.rule else ""
            self.fail(f"{value!r}: {exc}{rule}", param, ctx)


def _default(setting: Setting) -> str:
    value = getattr(MatchSettings(), setting.attr)
    if setting.attr == "acpc_game":
        return "none"
    if setting.attr == "buy_in":
        return "a fifth of the stack..the stack"
    if setting.attr in ("levels", "join_at", "leave_at") and not value:
        return "none"
    if isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, int) for v in value):
        return f"{value[0]}/{value[1]}"
    if hasattr(value, "value"):
        return str(value.value)
    return "none" if value in ((), 0) and setting.attr in ("binds", "stack") else str(value).lower()


def settings_options(keys: Iterable[str] | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Click options for the match settings (``keys``: only these), generated from the one schema
    (arena.runner.settings); a flag not given is None, so that a file's or a recorded match's value stands."""
    chosen = [s for s in SETTINGS if keys is None or s.key in set(keys)]

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        for setting in reversed(chosen):
            name = "setting_" + setting.attr
            help_text = f"{setting.help} [{setting.key}; default: {_default(setting)}]"
            if setting.flag_type == "flag":
                func = click.option(setting.flag, name, default=None, help=help_text)(func)
            elif setting.flag_type == "many":
                func = click.option(setting.flag, name, multiple=True, type=_SettingType(setting),
                                    help=help_text)(func)
            else:
                func = click.option(setting.flag, name, type=_SettingType(setting), default=None,
                                    help=help_text)(func)
        return func

    return decorate


def settings_from_flags(kw: dict[str, Any], base: MatchSettings | None = None) -> MatchSettings:
    """The settings the flags give (popping them from ``kw``) over ``base``; a combination that breaks a rule is a
    usage error naming it."""
    changes: dict[str, Any] = {}
    for key in [k for k in kw if k.startswith("setting_")]:
        value = kw.pop(key)
        attr = key.removeprefix("setting_")
        if attr == "binds":
            if value:
                changes[attr] = tuple(str(v) for group in value for v in group)
        elif value is not None:
            changes[attr] = value
    settings = (base or MatchSettings()).replace(**changes)
    try:
        settings.table_config()
        settings.game_rules()
    except SettingsError as exc:
        raise click.UsageError(str(exc)) from None
    return settings


def acpc_game(settings: MatchSettings, players: int, defaults: MatchSettings | None = None) -> MatchSettings:
    """The settings with the table of ``--acpc-game``, if given (a usage error naming what is wrong)."""
    try:
        return with_acpc_game(settings, Path.cwd(), players, defaults)
    except SettingsError as exc:
        raise click.UsageError(str(exc)) from None


def acpc_seats(bots: Iterable[BotSpec], spec: MatchSpec, players: int) -> None:
    """A match with ACPC clients (``NAME=acpc:COMMAND``) that no ACPC game expresses is a usage error saying why."""
    try:
        check_acpc_seats(list(bots), spec.config, spec.starting_stack, spec.game, players)
    except AcpcSeatError as exc:
        raise click.UsageError(str(exc)) from None


def sandbox_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--no-sandbox`` (the limits are settings: ``--bot-memory-mb`` and the others)."""
    return click.option("--no-sandbox", is_flag=True,
                        help="Run the bots as ordinary processes (unprotected: only for bots you trust).")(func)


def sandbox_policy(no_sandbox: bool, settings: MatchSettings) -> SandboxPolicy:
    """The policy for local bots; checks that the sandbox can be built, and warns loudly when it is switched off."""
    binds = tuple(Path(p).absolute() for p in settings.binds)
    for path in binds:
        if not path.exists():
            raise click.BadParameter(f"{path} does not exist", param_hint="--sandbox-bind")
    if not no_sandbox:
        try:
            check_sandbox()
            if settings.proc_views:
                check_views()
            if settings.drop_caches:
                check_drop_caches()
        except SandboxError as exc:
            raise click.ClickException(str(exc)) from None
    else:
        secho(UNSANDBOXED_WARNING, fg="yellow", err=True)
    policy = settings.sandbox_policy(not no_sandbox, binds)
    for note in host_warnings(policy):
        secho(f"WARNING: {note}", fg="yellow", err=True)
    return policy


def checked_outputs(policy: SandboxPolicy, bots: Iterable[BotSpec], cwd: Path,
                    folders: dict[str, str | Path | None] | None = None,
                    files: dict[str, str | Path | None] | None = None) -> SandboxPolicy:
    """The outputs made before any bot starts, or a usage error naming the one that lies inside a folder a bot can
    read (arena.runner.outputs); the policy, hiding them."""
    try:
        return prepare_outputs(policy, bots, cwd, folders, files)
    except OutputError as exc:
        raise click.BadParameter(str(exc), param_hint=exc.flag) from None


def rating_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Click options for the rating settings (what a rating game is: arena.ratings.settings), generated from the
    same rows as the ``[ratings]`` table of a tournament or league file; a flag not given is None."""
    defaults = RatingRules()
    for setting in reversed(RATING_SETTINGS):
        default = getattr(defaults, setting.attr)
        func = click.option(setting.flag, "rating_" + setting.attr, type=_SettingType(setting), default=None,
                            help=f"{setting.help} [{setting.key}; default: {default:g}]")(func)
    return func


def rules_from_flags(kw: dict[str, Any], base: RatingRules | None = None) -> RatingRules:
    """The rating rules the flags give (popping them from ``kw``) over ``base``."""
    values = {key.removeprefix("rating_"): kw.pop(key) for key in [k for k in kw if k.startswith("rating_")]}
    try:
        return rules_with(base or RatingRules(), values)
    except SettingsError as exc:
        raise click.UsageError(str(exc)) from None
