"""The exit statuses of ``arena match``, ``serve``, ``tournament`` and ``demo`` (``arena compare`` has its own,
for CI: see its help), and the one every command that reads a database ends with when its records are damaged."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import click

from arena.cli.output import secho
from arena.records.errors import DatabaseError, LedgerError, RecordsDamaged

EXIT_OK = 0  # every scheduled hand was played and every bot played its part
EXIT_ERROR = 1  # the command could not do its work: a bad database, no sandbox, a taken port, a failed verification
EXIT_USAGE = 2  # bad arguments or configuration
EXIT_BOT_FAILED = 4  # it ran, but a bot never connected, crashed, forfeited or was disconnected
EXIT_DAMAGED = 5  # records damaged: a database (or its seed file) edited or broken; the message names table and hand
EXIT_INTERRUPTED = 130  # stopped with Ctrl-C; what was played is recorded, --resume finishes it


class ArenaCommand(click.Command):
    """A command that ends with a records error's message and status, never its traceback: records damaged or
    edited (``RecordsDamaged``, named by table and hand) with ``EXIT_DAMAGED``, a file that cannot serve as a
    database (``DatabaseError``) and a ledger's refusal (``LedgerError``) with ``EXIT_ERROR``; and stopped with
    Ctrl-C with ``EXIT_INTERRUPTED`` (where a command says nothing more of it: ``match`` and ``tournament`` name the
    ``--resume`` that finishes their work)."""

    def invoke(self, ctx: click.Context) -> Any:
        with records_errors():
            return super().invoke(ctx)


class ArenaGroup(click.Group):
    """A group of commands, each ending as an ``ArenaCommand`` does."""

    command_class = ArenaCommand

    def invoke(self, ctx: click.Context) -> Any:
        with records_errors():
            return super().invoke(ctx)


@contextlib.contextmanager
def records_errors() -> Iterator[None]:
    """Turn a records error into its message and its exit status (see ``ArenaCommand``)."""
    try:
        yield
    except RecordsDamaged as exc:
        secho(f"error: records damaged: {exc}", fg="red", err=True)
        raise SystemExit(EXIT_DAMAGED) from None
    except (DatabaseError, LedgerError) as exc:
        raise click.ClickException(str(exc)) from None
    except KeyboardInterrupt:  # (click would say "Aborted!" and end with 1)
        secho("interrupted", fg="yellow", err=True)
        raise SystemExit(EXIT_INTERRUPTED) from None
