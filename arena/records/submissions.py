"""A league's hosted bots: every version submitted (``arena bots submit``), its archive's SHA-256 (the archive itself
is in the store beside the database: arena.runner.archive), its command, its validation's report, and the matches it
failed in (crashed, never joined, went over a limit, forfeited, was disconnected) with the last reason; a version
that failed in ``retire_after`` matches is retired, with the reason, and plays no more.

A registered bot with a submission is *hosted*: the league runs its newest version itself (unless that one is
retired); a bot without one is *remote*, connecting with its key.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass

from arena.records.codec import decode, stamp
from arena.records.db import Database
from arena.records.registry import RegistryError


class SubmissionError(ValueError):
    """A submission the records refuse: a version name taken, the same archive as a version already submitted."""


@dataclass(frozen=True, slots=True)
class Submission:
    """One version of a hosted bot."""

    bot: str
    version: str
    sha256: str
    command: str
    size: int
    submitted_at: float
    report: str
    failures: int  # matches it failed in
    last_failure: str
    retired_at: float | None
    retired_reason: str

    @property
    def active(self) -> bool:
        """Whether it may still be scheduled."""
        return self.retired_at is None

    @property
    def status(self) -> str:
        """In words: ``hosted`` or ``retired: REASON``."""
        return "hosted" if self.active else f"retired: {self.retired_reason}"


def _submission(row: sqlite3.Row) -> Submission:
    found: Submission = decode("a submission", "submissions", None, lambda: Submission(
        str(row["bot"]), str(row["version"]), str(row["sha256"]), str(row["command"]), int(row["size"]),
        stamp(row["submitted_at"]), str(row["report"]), int(row["failures"]), str(row["last_failure"]),
        None if row["retired_at"] is None else stamp(row["retired_at"]), str(row["retired_reason"])))
    return found


def submissions(db: Database, bot: str | None = None) -> list[Submission]:
    """Every submission (or one bot's), oldest first."""
    if bot is None:
        rows = db.rows("submissions", "SELECT * FROM submissions ORDER BY submitted_at, bot, version")
    else:
        rows = db.rows("submissions", "SELECT * FROM submissions WHERE bot = ? ORDER BY submitted_at, version",
                       (bot,))
    return [_submission(r) for r in rows]


def newest(db: Database) -> dict[str, Submission]:
    """Each hosted bot's newest version (retired or not), by bot name."""
    return {s.bot: s for s in submissions(db)}


def find(db: Database, bot: str, version: str) -> Submission | None:
    """One version of a hosted bot, if it was submitted."""
    row = db.row("submissions", "SELECT * FROM submissions WHERE bot = ? AND version = ?", (bot, version))
    return None if row is None else _submission(row)


def next_version(db: Database, bot: str) -> str:
    """The name of a bot's next version when its author gives none: the next whole number."""
    taken = {s.version for s in submissions(db, bot)}
    number = len(taken) + 1
    while str(number) in taken:
        number += 1
    return str(number)


def add(db: Database, bot: str, version: str, sha256: str, command: str, size: int, report: str) -> Submission:
    """Record a new version of a registered bot (its archive stored already); ``SubmissionError`` when the version's
    name is taken or the same archive was submitted before."""
    with db.transaction():
        if db.row("registered_bots", "SELECT 1 FROM registered_bots WHERE name = ?", (bot,)) is None:
            raise RegistryError(f"no registered bot {bot!r}")
        taken = db.row("submissions", "SELECT * FROM submissions WHERE bot = ? AND version = ?", (bot, version))
        if taken is not None:
            raise SubmissionError(f"version {version!r} of {bot} was submitted already (archive "
                                  f"{str(taken['sha256'])[:12]}): give the new one another --version")
        same = db.row("submissions", "SELECT version FROM submissions WHERE bot = ? AND sha256 = ?", (bot, sha256))
        if same is not None:
            raise SubmissionError(f"this archive is version {str(same['version'])!r} of {bot} already (the same "
                                  "SHA-256): nothing new to play")
        db.write("submissions", "INSERT INTO submissions(bot, version, sha256, command, size, submitted_at, report)"
                 " VALUES (?, ?, ?, ?, ?, ?, ?)", (bot, version, sha256, command, size, time.time(), report))
    found = find(db, bot, version)
    assert found is not None
    return found


def record_failure(db: Database, bot: str, version: str, reason: str, retire_after: int) -> Submission | None:
    """Count a match a hosted version failed in, with the reason; retire it once it has failed in ``retire_after``
    matches (0: never). The version as it stands now (None if it was never submitted)."""
    with db.transaction():
        db.write("submissions", "UPDATE submissions SET failures = failures + 1, last_failure = ? WHERE bot = ? AND"
                 " version = ?", (reason, bot, version))
        if retire_after:
            db.write("submissions", "UPDATE submissions SET retired_at = ?, retired_reason = ? WHERE bot = ? AND"
                     " version = ? AND retired_at IS NULL AND failures >= ?",
                     (time.time(), f"failed in {retire_after} matches (the last: {reason})", bot, version,
                      retire_after))
    return find(db, bot, version)


__all__ = ["Submission", "SubmissionError", "add", "find", "newest", "next_version", "record_failure",
           "submissions"]
