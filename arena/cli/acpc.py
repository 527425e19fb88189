"""``arena acpc-bridge``: an ACPC client (protocol 2.0.0) plays in an arena match or league from its author's own
machine, behind the ACPC bridge (arena.adapters.acpc), which reads the rest of the command line."""

from __future__ import annotations

import click

from arena.adapters.acpc.bridge import main


@click.command(name="acpc-bridge", add_help_option=False,
               context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def acpc_bridge(args: tuple[str, ...]) -> None:
    """Play an ACPC client in an arena match (--address/--token) or league (--key): arena acpc-bridge [--game FILE]
    [--address HOST:PORT --token T | --key K] -- COMMAND [ARGS...] starts COMMAND ARGS... HOST PORT (--help: all)."""
    raise SystemExit(main(list(args)))
