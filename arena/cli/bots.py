"""``arena bots add|list|revoke|rotate|submit``: a league's registered bots, their API keys
(arena.records.registry), and the versions of hosted bots (arena.records.submissions; the upload: arena.cli.submit)."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import click
from rich.table import Table

from arena.cli.exits import ArenaGroup
from arena.cli.leaderboard import console, open_db
from arena.cli.output import add_row, echo
from arena.records.registry import RegisteredBot, Registry, RegistryError
from arena.records.submissions import Submission, newest

DEFAULT_LEAGUE_DB = "league.db"
db_option = click.option("--db", "db_path", default=DEFAULT_LEAGUE_DB, show_default=True,
                         type=click.Path(dir_okay=False), help="The league's database.")


def _registry(db_path: str, create: bool = False) -> Registry:
    return Registry(open_db(db_path, create=create))


def _when(stamp: float | None) -> str:
    if stamp is None:
        return ""
    return datetime.datetime.fromtimestamp(stamp, datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")


def _fail(exc: RegistryError) -> click.ClickException:
    return click.ClickException(str(exc))


@click.group(cls=ArenaGroup)
def bots() -> None:
    """Register a league's bots and manage their API keys (a key is shown once; only its hash is stored)."""


@bots.command()
@click.argument("name")
@db_option
@click.option("--owner", default="", help="Who the bot belongs to (a league seats one bot per owner at a table).")
def add(name: str, db_path: str, owner: str) -> None:
    """Register bot NAME and print its API key, once, alone on the last line."""
    try:
        key = _registry(db_path, create=True).add(name, owner)
    except RegistryError as exc:
        raise _fail(exc) from None
    echo(f"registered {name}" + (f" (owner {owner})" if owner else "") + f" in {db_path}. Its API key "
               "follows; it is not stored and will not be shown again (arena bots rotate issues a new one). "
               "Give it to the bot as --key or ARENA_KEY:", err=True)
    echo(key)


@bots.command(name="list")
@db_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_(db_path: str, as_json: bool) -> None:
    """The registered bots, hosted ones (submitted: the league runs them) apart from remote ones (they connect with
    their key): owner, when registered, when the key was issued, whether it is revoked; a hosted bot's version, its
    archive and its failed matches."""
    registry = _registry(db_path)
    registered = registry.list()
    hosted = newest(registry.db)
    if as_json:
        echo(json.dumps([_row(b, hosted.get(b.name)) for b in registered], indent=2))
        return
    if not registered:
        echo(f"no bots registered in {db_path} yet: arena bots add NAME --db {db_path}")
        return
    for title, group in (("hosted", [b for b in registered if b.name in hosted]),
                         ("remote", [b for b in registered if b.name not in hosted])):
        if not group:
            continue
        columns = ["bot", "owner", "registered", "key issued", "status"]
        if title == "hosted":
            columns += ["version", "archive", "failed matches", "plays"]
        how = "run by the league" if title == "hosted" else "they connect with their key"
        table = Table(*columns, title=f"{title} bots ({how})")
        for bot in group:
            cells = [bot.name, bot.owner, _when(bot.created_at), _when(bot.key_issued_at),
                     "active" if bot.active else f"revoked {_when(bot.revoked_at)}"]
            if title == "hosted":
                sub = hosted[bot.name]
                cells += [sub.version, sub.sha256[:12], str(sub.failures), sub.status]
            add_row(table, *cells)
        console().print(table)


def _row(bot: RegisteredBot, hosted: Submission | None) -> dict[str, object]:
    row: dict[str, object] = {
        "name": bot.name, "owner": bot.owner, "created_at": bot.created_at, "key_issued_at": bot.key_issued_at,
        "revoked_at": bot.revoked_at, "active": bot.active, "hosted": hosted is not None}
    if hosted is not None:
        row["submission"] = {"version": hosted.version, "sha256": hosted.sha256, "command": hosted.command,
                             "size": hosted.size, "submitted_at": hosted.submitted_at, "failures": hosted.failures,
                             "last_failure": hosted.last_failure, "retired_at": hosted.retired_at,
                             "retired_reason": hosted.retired_reason}
    return row


@bots.command()
@click.argument("name")
@db_option
def revoke(name: str, db_path: str) -> None:
    """Refuse NAME's key from now on (a running host ends its stream within a second); its results stay."""
    try:
        _registry(db_path, create=True).revoke(name)
    except RegistryError as exc:
        raise _fail(exc) from None
    echo(f"revoked {name}'s key: it is refused from now on (arena bots rotate {name} issues a new one)")


@bots.command()
@click.argument("name")
@db_option
def rotate(name: str, db_path: str) -> None:
    """Issue NAME a new API key (the old one stops working) and print it, once, alone on the last line."""
    try:
        key = _registry(db_path, create=True).rotate(name)
    except RegistryError as exc:
        raise _fail(exc) from None
    echo(f"issued {name} a new API key; the old one is refused from now on. The new key follows, shown this "
               "once:", err=True)
    echo(key)


@bots.command()
@click.option("--address", required=True, metavar="HOST:PORT", help="The league host's gRPC address.")
@click.option("--key", required=True, envvar="ARENA_KEY", show_envvar=True,
              help="The bot's API key (arena bots add printed it); $ARENA_KEY keeps it off the command line.")
@click.option("--folder", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="The bot's folder: everything it needs to run (packed, __pycache__ and .git left out).")
@click.option("--command", "command", required=True, help="How to start the bot, run from its folder (e.g. "
              "'python bot.py').")
@click.option("--version", default="", help="The new version's name (default: the next number).")
@click.option("--tls-ca", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="Root certificate of a host that serves TLS.")
def submit(address: str, key: str, folder: Path, command: str, version: str, tls_ca: Path | None) -> None:
    """Upload a bot's folder to a league host, which validates it in its sandbox (as arena validate does), stores it
    and runs it as the bot's new version. Exit status: 0 accepted; the validation's status (10 to 15, as arena
    validate's) when the host's validation refused it; 3 refused for another reason (the reason is printed); 1 no
    answer."""
    from arena.cli.submit import UploadError, UploadRefused, upload
    from arena.runner.archive import pack

    try:
        data = pack(folder)
    except OSError as exc:
        raise click.ClickException(f"cannot pack {folder}: {exc}") from None
    echo(f"uploading {folder} ({len(data):,} bytes packed) to {address}; the host validates it before it answers...",
         err=True)
    try:
        reply = upload(address, key, data, command, version, tls_ca)
    except UploadRefused as exc:  # the host answered: a refusal like any other
        echo(f"refused: {exc}", err=True)
        raise SystemExit(EXIT_REFUSED) from None
    except UploadError as exc:
        raise click.ClickException(str(exc)) from None
    if reply.report:
        echo(reply.report, err=not reply.accepted)
    if reply.accepted:
        echo(reply.reason)
        return
    echo(reply.reason if reply.reason.endswith("refused") else f"refused: {reply.reason}", err=True)
    raise SystemExit(reply.verdict or EXIT_REFUSED)


EXIT_REFUSED = 3  # arena bots submit: the host refused the submission (not its validation)
