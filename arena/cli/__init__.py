"""The ``arena`` command (layer 9): one module per subcommand, registered on one click group.

Errors a user can cause end with a clear message and a non-zero status, never a traceback: a database that cannot
serve (missing, another program's, newer) with status 1, records that are damaged or were edited with status 5
(``EXIT_DAMAGED``), whichever command reads them.
"""

from __future__ import annotations

import click

from arena import __version__
from arena.cli.exits import ArenaGroup


@click.group(cls=ArenaGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="arena")
def main() -> None:
    """arena: duplicate Texas Hold'em for bots in any language, under a referee nobody can cheat."""


def _register() -> None:
    from arena.cli import bots, compare, demo, host, leaderboard, league, match, publish, records, replay, tournament

    for module in (replay, match, leaderboard, tournament, records, publish, compare, demo, bots, host, league):
        for command in module.COMMANDS:
            main.add_command(command)


_register()
