"""``arena verify`` and ``arena export``: re-check recorded matches against their seeds; write them as PHH."""

from __future__ import annotations

from pathlib import Path

import click

from arena.cli.leaderboard import DEFAULT_DB, open_db
from arena.cli.output import echo
from arena.ratings.estimators import ADJUSTED, Estimator, adjusted_payoffs
from arena.ratings.sessions import bot_key
from arena.records.db import Database
from arena.records.phh_sink import PhhDirSink
from arena.records.verify import verify_match


def _matches(db_ids: list[str], wanted: tuple[str, ...], db_path: str) -> list[str]:
    unknown = [m for m in wanted if m not in db_ids]
    if unknown:
        raise click.ClickException(f"no match {', '.join(unknown)} in {db_path}")
    return list(wanted) or db_ids


def adjusted_summary(db: Database, match_id: str, estimator: Estimator) -> str:
    """A match's ``estimator`` figures, recomputed from the hands just verified: how many hands it rescored, and
    each bot's net chips as dealt and by the estimate."""
    adjusted = adjusted_payoffs(db, match_id, estimator)
    if not adjusted:
        return ""
    names = [bot_key(n, v) for n, v in db.participants(match_id)]
    raw = [0.0] * len(names)
    ev = [0.0] * len(names)
    for hand in db.hand_results(match_id):
        payoffs = adjusted.get(hand.hand_number, hand.payoffs)
        for seat, participant in enumerate(hand.seating):
            raw[participant] += hand.payoffs[seat]
            ev[participant] += payoffs[seat]
    nets = ", ".join(f"{name} {r:+,.0f} as dealt, {e:+,.0f} by {estimator.label}"
                     for name, r, e in zip(names, raw, ev, strict=True))
    what = "all-in hands" if estimator is Estimator.ALLIN else "hands"
    return f"{estimator.label} recomputed: {len(adjusted)} {what} rescored; {nets}"


@click.command()
@click.option("--db", "db_path", default=DEFAULT_DB, show_default=True, type=click.Path(dir_okay=False))
@click.option("--match", "match_ids", multiple=True, help="Only these matches (repeat); default: all.")
@click.option("--commitment", default=None, help="The commitment published before the match (one --match).")
def verify(db_path: str, match_ids: tuple[str, ...], commitment: str | None) -> None:
    """Re-deal recorded matches from their seeds and check every card and chip, and recompute the
    variance-reduced figures (all-in EV, AIVAT) from the verified hands; exit 1 on any difference."""
    db = open_db(db_path)
    ids = _matches(db.match_ids(), match_ids, db_path)
    if commitment and len(ids) != 1:
        raise click.UsageError("--commitment checks one match: give exactly one --match")
    bad = checked = 0
    for match_id in ids:
        result = verify_match(db, match_id, commitment)
        if result.pending is not None:
            echo(f"wait  {match_id}: not verifiable yet: {result.pending}")
        elif result.ok:
            checked += 1
            note = f"; incomplete: {result.incomplete}" if result.incomplete else ""
            echo(f"ok    {match_id}: {result.hands} hands re-dealt from the seed, every card and chip "
                       f"agrees{note}")
            for estimator in ADJUSTED:
                rescored = adjusted_summary(db, match_id, estimator)
                if rescored:
                    echo(f"      {rescored}")
        else:
            bad += 1
            echo(f"FAIL  {match_id}: {len(result.problems)} problems")
            for problem in result.problems[:20]:
                echo(f"      {problem}")
            if len(result.problems) > 20:
                echo(f"      ... and {len(result.problems) - 20} more")
    if not checked and not bad:
        echo(f"nothing to verify in {db_path}: no match with a published seed", err=True)
        raise SystemExit(1)
    raise SystemExit(1 if bad else 0)


@click.command()
@click.option("--db", "db_path", default=DEFAULT_DB, show_default=True, type=click.Path(dir_okay=False))
@click.option("--phh", "phh_dir", required=True, type=click.Path(file_okay=False), help="Folder to write into.")
@click.option("--match", "match_ids", multiple=True, help="Only these matches (repeat); default: all.")
def export(db_path: str, phh_dir: str, match_ids: tuple[str, ...]) -> None:
    """Write recorded matches as PHH hand histories (one file per hand, PokerKit-compatible)."""
    db = open_db(db_path)
    sink = PhhDirSink(phh_dir)
    count = 0
    for match_id in _matches(db.match_ids(), match_ids, db_path):
        for record in db.hand_records(match_id):
            sink.hand_finished(record)
            count += 1
    echo(f"wrote {count} hands under {Path(phh_dir).resolve()}")


COMMANDS = [verify, export]
