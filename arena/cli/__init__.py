"""The ``arena`` command (layer 9): one module per subcommand, registered on one click group by name.

A subcommand's module is imported only when that subcommand runs (or ``--help`` lists them all), so ``arena bots
add`` never loads the plotting, templating, web or gRPC libraries that other commands need.

Errors a user can cause end with a clear message and a non-zero status, never a traceback: a database that cannot
serve (missing, another program's, newer) with status 1, records that are damaged or were edited with status 5
(``EXIT_DAMAGED``), whichever command reads them.
"""

from __future__ import annotations

import importlib

import click

from arena import __version__
from arena.cli.exits import ArenaGroup

COMMANDS = {
    "acpc-bridge": "arena.cli.acpc:acpc_bridge",
    "bots": "arena.cli.bots:bots",
    "compare": "arena.cli.compare:compare",
    "demo": "arena.cli.demo:demo",
    "export": "arena.cli.records:export",
    "host": "arena.cli.host:host",
    "leaderboard": "arena.cli.leaderboard:leaderboard",
    "league": "arena.cli.league:league",
    "match": "arena.cli.match:match",
    "mcp": "arena.cli.mcp:mcp",
    "publish": "arena.cli.publish:publish",
    "replay": "arena.cli.replay:replay",
    "serve": "arena.cli.match:serve",
    "tournament": "arena.cli.tournament:tournament",
    "validate": "arena.cli.validate:validate_command",
    "verify": "arena.cli.records:verify",
}
"""Each subcommand's name and where it is defined (``module:attribute``)."""


class LazyGroup(ArenaGroup):
    """The top-level group: it knows its subcommands by name and imports one only when asked for it."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        where = COMMANDS.get(cmd_name)
        if where is None:
            return None
        module, attribute = where.split(":")
        command: click.Command = getattr(importlib.import_module(module), attribute)
        return command


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="arena")
def main() -> None:
    """arena: duplicate Texas Hold'em for bots in any language, under a referee nobody can cheat."""
