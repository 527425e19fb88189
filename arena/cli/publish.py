"""``arena publish``: the leaderboard as a static web site (HTML, JSON and SVG plots) that opens from the file
system or any static host.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from arena.cli.exits import ArenaCommand
from arena.cli.leaderboard import open_db
from arena.cli.options import rating_options, rules_from_flags
from arena.cli.output import echo
from arena.publish import publish as publish_site
from arena.publish.site import DEFAULT_TITLE
from arena.records import queries
from arena.records.db import Database


@click.command(cls=ArenaCommand)
@click.option("--db", "db_path", default="arena.db", show_default=True, type=click.Path(dir_okay=False),
              help="The match database to publish.")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Folder to write the site into (created if needed; files of an earlier run are replaced).")
@click.option("--title", default=None, help=f"The site's title  [default: {DEFAULT_TITLE!r}, or the event's name]")
@click.option("--tournament", "event", default=None, metavar="NAME",
              help="Publish one event only: the matches of this tournament, comparison or league.")
@click.option("--match", "match_ids", multiple=True, metavar="ID", help="Publish this match only (repeat for more).")
@rating_options
def publish(db_path: str, out_dir: str, title: str | None, event: str | None, match_ids: tuple[str, ...],
            **kw: Any) -> None:
    """Publish the leaderboard, every bot and every match as a static site (or one event's, or some matches');
    print where index.html is."""
    rules = rules_from_flags(kw)
    db = open_db(db_path)
    try:
        selected = _selection(db, db_path, event, match_ids)
        if title is None:
            title = f"{event}: leaderboard" if event else (f"match {match_ids[0]}" if len(match_ids) == 1
                                                           else DEFAULT_TITLE)
        result = publish_site(db, Path(out_dir), title, match_ids=selected, rules=rules)
    except OSError as exc:
        raise click.ClickException(f"cannot write the site to {out_dir}: {exc}") from None
    finally:
        db.close()
    index = result.index.resolve()
    board = result.board
    echo(f"published {len(board.rows)} bots, {len(board.matches)} matches, {len(result.files)} files")
    echo(f"index: {index}")
    echo(f"open:  {index.as_uri()}")


def _selection(db: Database, db_path: str, event: str | None, match_ids: tuple[str, ...]) -> list[str] | None:
    """The matches to publish (None: all of them); a usage error naming what exists when nothing matches."""
    if event is not None and match_ids:
        raise click.UsageError("give --tournament or --match, not both")
    if event is not None:
        ids = queries.event_match_ids(db, event)
        if not ids:
            known = ", ".join(queries.event_names(db)[:10]) or "none"
            raise click.UsageError(f"no tournament, comparison or league {event!r} in {db_path} (recorded: {known})")
        return ids
    if match_ids:
        missing = [m for m in match_ids if queries.match_info(db, m) is None]
        if missing:
            raise click.UsageError(f"no match {missing[0]!r} in {db_path} (see arena leaderboard --db {db_path})")
        return list(dict.fromkeys(match_ids))
    return None
