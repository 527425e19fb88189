"""Layer 7: the records. The SQLite database in types: storage (``db``), rows and records (``codec``), a match's
lifecycle (``ledger``), typed reads (``queries``, ``comparisons``), the evidence a record carries (``evidence``,
checked by ``audit`` and ``verify``); PHH hand-history files; a league's registered bots."""

from arena.records.errors import DatabaseError, LedgerError, RecordsDamaged, RecordsError

__all__ = ["DatabaseError", "LedgerError", "RecordsDamaged", "RecordsError"]
