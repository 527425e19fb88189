"""``arena verify`` and ``arena export``: re-check recorded matches against their seeds and their evidence (the
commitment, the hash chain, the final hash); write them as PHH."""

from __future__ import annotations

from pathlib import Path

import click

from arena.cli.exits import ArenaCommand
from arena.cli.leaderboard import DEFAULT_DB, open_db
from arena.cli.output import echo
from arena.ratings.estimators import ADJUSTED, Estimator, adjusted_payoffs
from arena.ratings.sessions import bot_key
from arena.records import RecordsDamaged, queries
from arena.records.db import Database
from arena.records.phh_sink import PhhDirSink
from arena.records.verify import Verification, verify_match


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
    names = [bot_key(n, v) for n, v in queries.participants(db, match_id)]
    raw = [0.0] * len(names)
    ev = [0.0] * len(names)
    for hand in queries.hand_results(db, match_id):
        payoffs = adjusted.get(hand.hand_number, hand.payoffs)
        for seat, participant in enumerate(hand.seating):
            raw[participant] += hand.payoffs[seat]
            ev[participant] += payoffs[seat]
    nets = ", ".join(f"{name} {r:+,.0f} as dealt, {e:+,.0f} by {estimator.label}"
                     for name, r, e in zip(names, raw, ev, strict=True))
    what = "all-in hands" if estimator is Estimator.ALLIN else "hands"
    return f"{estimator.label} recomputed: {len(adjusted)} {what} rescored; {nets}"


def _evidence(result: Verification) -> str:
    """What was checked of a match's evidence, in words."""
    if not result.chained:
        return "commitment version 1 (the seed's hash alone: recorded before the hash chain)"
    sealed = f"; final hash {result.final_hash}" if result.final_hash else ""
    return f"commitment version 2 (seed, schedule, participants) and the hash chain{sealed}"


@click.command(cls=ArenaCommand)
@click.option("--db", "db_path", default=DEFAULT_DB, show_default=True, type=click.Path(dir_okay=False))
@click.option("--match", "match_ids", multiple=True, help="Only these matches (repeat); default: all.")
@click.option("--commitment", default=None, help="The commitment published before the match (one --match).")
@click.option("--final", "final", default=None, metavar="HASH",
              help="The final hash published with the match's result (one --match): the record must give it.")
def verify(db_path: str, match_ids: tuple[str, ...], commitment: str | None, final: str | None) -> None:
    """Check recorded matches against their evidence (the commitment, every hand's hash chain, the final hash),
    re-deal them from their seeds, check every card and chip, and recompute the variance-reduced figures (all-in
    EV, AIVAT) from the verified hands; exit 1 on any difference. A database an older arena wrote is upgraded in
    place first."""
    db = open_db(db_path, upgrade=True)
    ids = _matches(queries.match_ids(db), match_ids, db_path)
    if (commitment or final) and len(ids) != 1:
        raise click.UsageError("--commitment and --final check one match: give exactly one --match")
    bad = checked = 0
    for match_id in ids:
        result = verify_match(db, match_id, commitment, final)
        if result.pending is not None and result.ok:
            echo(f"wait  {match_id}: not verifiable yet: {result.pending}; {_evidence(result)} hold")
        elif result.ok:
            checked += 1
            note = f"; incomplete: {result.incomplete}" if result.incomplete else ""
            echo(f"ok    {match_id}: {result.hands} hands re-dealt from the seed, every card and chip "
                       f"agrees{note}")
            echo(f"      checked {_evidence(result)}")
            for estimator in ADJUSTED:
                try:
                    rescored = adjusted_summary(db, match_id, estimator)
                except RecordsDamaged as exc:
                    rescored = f"{estimator.label}: not recomputed: {exc}"
                if rescored:
                    echo(f"      {rescored}")
        else:
            bad += 1
            count = len(result.problems)
            echo(f"FAIL  {match_id}: {count} problem{'' if count == 1 else 's'}")
            for problem in result.problems[:20]:
                echo(f"      {problem}")
            if len(result.problems) > 20:
                echo(f"      ... and {len(result.problems) - 20} more")
    if not checked and not bad:
        echo(f"nothing to verify in {db_path}: no match with a published seed", err=True)
        raise SystemExit(1)
    raise SystemExit(1 if bad else 0)


@click.command(cls=ArenaCommand)
@click.option("--db", "db_path", default=DEFAULT_DB, show_default=True, type=click.Path(dir_okay=False))
@click.option("--phh", "phh_dir", required=True, type=click.Path(file_okay=False), help="Folder to write into.")
@click.option("--match", "match_ids", multiple=True, help="Only these matches (repeat); default: all.")
def export(db_path: str, phh_dir: str, match_ids: tuple[str, ...]) -> None:
    """Write recorded matches as PHH hand histories (one file per hand, PokerKit-compatible)."""
    db = open_db(db_path)
    sink = PhhDirSink(phh_dir)
    count = 0
    try:
        for match_id in _matches(queries.match_ids(db), match_ids, db_path):
            for record in queries.hand_records(db, match_id):
                sink.hand_finished(record)
                count += 1
    except OSError as exc:  # a file where a folder goes, no permission, a full disk
        raise click.ClickException(f"cannot write the hand histories under {phh_dir}: {exc.strerror or exc}"
                                   + (f" ({exc.filename})" if exc.filename else "")) from None
    echo(f"wrote {count} hands under {Path(phh_dir).resolve()}")
