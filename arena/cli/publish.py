"""``arena publish``: the leaderboard as a static web site (HTML, JSON and SVG plots) that opens from the file
system or any static host.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import click

from arena.cli.leaderboard import open_db
from arena.publish import publish as publish_site
from arena.publish.site import DEFAULT_TITLE


@click.command()
@click.option("--db", "db_path", default="arena.db", show_default=True, type=click.Path(dir_okay=False),
              help="The match database to publish.")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Folder to write the site into (created if needed; files of an earlier run are replaced).")
@click.option("--title", default=DEFAULT_TITLE, show_default=True, help="The site's title.")
def publish(db_path: str, out_dir: str, title: str) -> None:
    """Publish the leaderboard, every bot and every match as a static site; print where index.html is."""
    db = open_db(db_path)
    try:
        result = publish_site(db, Path(out_dir), title)
    except sqlite3.DatabaseError as exc:
        raise click.ClickException(f"cannot read {db_path}: {exc}") from None
    except OSError as exc:
        raise click.ClickException(f"cannot write the site to {out_dir}: {exc}") from None
    finally:
        db.close()
    index = result.index.resolve()
    board = result.board
    click.echo(f"published {len(board.rows)} bots, {len(board.matches)} matches, {len(result.files)} files")
    click.echo(f"index: {index}")
    click.echo(f"open:  {index.as_uri()}")


COMMANDS = [publish]
