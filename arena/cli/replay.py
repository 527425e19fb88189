"""``arena replay``: hand histories through the engine."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import click

from arena.cli.output import echo
from arena.records.phh import PhhError, load
from arena.records.replay import ReplayResult, replay_result


def _phh_files(paths: tuple[str, ...]) -> Iterator[Path]:
    """Every ``.phh`` file under the given files and folders (recursively), in a stable order."""
    for name in paths:
        path = Path(name)
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*.phh") if p.is_file())
        else:
            yield path


@click.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--summary/--no-summary", default=False, help="Print a count of hands ok and not ok to stderr.")
def replay(paths: tuple[str, ...], summary: bool) -> None:
    """Replay PHH hand histories through the engine; print one JSON object per hand.

    Exit status: 0 if every hand is ok, 1 if any is not, 2 if a file cannot be read or parsed.
    """
    status = 0
    ok = bad = unreadable = 0
    for path in _phh_files(paths):
        try:
            phh = load(path)
        except PhhError as exc:
            echo(f"arena replay: {exc}", err=True)
            result = ReplayResult(False, None, str(exc))
            unreadable += 1
            status = 2
        else:
            result = replay_result(phh)
            if result.ok:
                ok += 1
            else:
                bad += 1
                status = max(status, 1)
        echo(json.dumps(result.to_json(str(path))))
    if ok + bad + unreadable == 0:
        echo(f"arena replay: no .phh files found in {' '.join(paths)}", err=True)
        status = 2
    if summary:
        echo(f"{ok} ok, {bad} not ok, {unreadable} unreadable", err=True)
    sys.exit(status)
