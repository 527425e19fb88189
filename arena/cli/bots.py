"""``arena bots add|list|revoke|rotate``: a league's registered bots and their API keys (arena.records.registry)."""

from __future__ import annotations

import datetime
import json

import click
from rich.table import Table

from arena.cli.exits import ArenaGroup
from arena.cli.leaderboard import console, open_db
from arena.cli.output import add_row, echo
from arena.records.registry import RegisteredBot, Registry, RegistryError

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
    """The registered bots: owner, when registered, when the key was issued, whether it is revoked."""
    registered = _registry(db_path).list()
    if as_json:
        echo(json.dumps([_row(b) for b in registered], indent=2))
        return
    if not registered:
        echo(f"no bots registered in {db_path} yet: arena bots add NAME --db {db_path}")
        return
    table = Table("bot", "owner", "registered", "key issued", "status")
    for bot in registered:
        add_row(table, bot.name, bot.owner, _when(bot.created_at), _when(bot.key_issued_at),
                      "active" if bot.active else f"revoked {_when(bot.revoked_at)}")
    console().print(table)


def _row(bot: RegisteredBot) -> dict[str, object]:
    return {"name": bot.name, "owner": bot.owner, "created_at": bot.created_at, "key_issued_at": bot.key_issued_at,
            "revoked_at": bot.revoked_at, "active": bot.active}


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
