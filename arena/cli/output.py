"""Everything the ``arena`` command prints goes through here, so that no text a bot or an operator chose (a name, a
version, an owner, a crash's last words, a record's content) can send a control sequence to the terminal: each line
is shown with its control and direction characters escaped (``arena.text.for_terminal``; arena's own messages have
none, so escaping a whole line changes nothing of them), and table cells are plain text that rich never reads as
markup."""

from __future__ import annotations

from typing import Any

import click
from rich.table import Table
from rich.text import Text

from arena.text import for_terminal


def safe(message: object) -> str:
    """``message`` with every line escaped for a terminal (line breaks kept)."""
    return "\n".join(for_terminal(line) for line in str(message).split("\n"))


def echo(message: object = "", err: bool = False, nl: bool = True) -> None:
    """``click.echo`` of an escaped message."""
    click.echo(safe(message), err=err, nl=nl)


def secho(message: object = "", err: bool = False, **style: Any) -> None:
    """``click.secho`` of an escaped message (the colour is click's, added after the escaping)."""
    click.secho(safe(message), err=err, **style)


def cell(value: object) -> Text:
    """A table cell: escaped, and a ``Text`` so that rich does not read ``[red]`` in a bot's name as markup."""
    return Text(for_terminal(value))


def add_row(table: Table, *values: object) -> None:
    """A table row of escaped plain-text cells."""
    table.add_row(*(cell(v) for v in values))
