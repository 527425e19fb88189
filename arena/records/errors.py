"""What can go wrong with records, as types: a file that is no arena database, records that are damaged or were
edited, and a request the ledger refuses. Every command catches them and says which (README, exit statuses)."""

from __future__ import annotations

from arena.runner.ledger import LedgerRefused


class RecordsError(RuntimeError):
    """Anything the records cannot do, in words."""


class DatabaseError(RecordsError):
    """A file that cannot serve as an arena database: missing, a folder, another program's, written by a newer
    arena, read-only."""


class RecordsDamaged(RecordsError):
    """An arena database whose records are damaged or were edited: unreadable pages, rows that do not decode, a
    hash chain or a commitment that does not hold. The message names the table, the match and the hand."""

    def __init__(self, what: str, *, table: str | None = None, match_id: str | None = None,
                 hand: int | None = None) -> None:
        where = [part for part in (f"match {match_id}" if match_id else "", f"hand {hand}" if hand is not None else "",
                                   f"table {table}" if table else "") if part]
        super().__init__(f"{', '.join(where)}: {what}" if where else what)
        self.what = what
        self.table = table
        self.match_id = match_id
        self.hand = hand


class LedgerError(RecordsError, LedgerRefused):
    """A request the ledger refuses as asked: opening a match that is recorded already without resuming it, resuming
    one that is over or not there, resuming with other participants or another schedule."""
