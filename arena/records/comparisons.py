"""A comparison (``arena compare``) as recorded: its parameters, its outcome, and the role of each of its matches,
so that nothing has to be read back from a match's id."""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arena.records.codec import decode
from arena.records.db import Database


class ComparisonRole(enum.StrEnum):
    """What a match of a comparison is; stored as its value (``comparison_matches.role``)."""

    HEAD_TO_HEAD = "head_to_head"  # the candidate (participant 0) against the baseline
    CANDIDATE = "candidate"  # the candidate against reference bot ``reference`` (participant 1)
    BASELINE = "baseline"  # the baseline against reference bot ``reference``


@dataclass(frozen=True, slots=True)
class ComparisonMatch:
    """One match of a comparison and its role (``reference``: which reference bot, from 1; 0 head-to-head)."""

    match_id: str
    role: ComparisonRole
    reference: int


@dataclass(frozen=True, slots=True)
class ComparisonInfo:
    """A recorded comparison: the parameters it was run with (the test's, the bots, the hand limit, the
    estimator), how it ended (verdict, sessions, LLR; empty while it runs) and its matches."""

    comparison_id: str
    params: dict[str, Any]
    outcome: dict[str, Any]
    matches: tuple[ComparisonMatch, ...]

    def role(self, role: ComparisonRole, reference: int = 0) -> str | None:
        """The match of that role, if recorded."""
        return next((m.match_id for m in self.matches if (m.role, m.reference) == (role, reference)), None)


def record_comparison(db: Database, comparison_id: str, params: Mapping[str, Any],
                      roles: Sequence[tuple[str, ComparisonRole | str, int]]) -> None:
    """Record a comparison's parameters and the role of each of its matches (already opened in the ledger)."""
    with db.transaction():
        db.write("comparisons", "INSERT INTO comparisons(id, params) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET"
                 " params = excluded.params", (comparison_id, json.dumps(dict(params), sort_keys=True)))
        db.write("comparison_matches", "INSERT OR REPLACE INTO comparison_matches(match_id, comparison_id, role,"
                 " reference) VALUES (?, ?, ?, ?)",
                 [(match_id, comparison_id, ComparisonRole(role).value, reference)
                  for match_id, role, reference in roles], many=True)


def record_outcome(db: Database, comparison_id: str, outcome: Mapping[str, Any]) -> None:
    """Record how a comparison ended (its verdict, sessions and LLR)."""
    with db.transaction():
        db.write("comparisons", "UPDATE comparisons SET outcome = ? WHERE id = ?",
                 (json.dumps(dict(outcome), sort_keys=True), comparison_id))


def comparison(db: Database, comparison_id: str) -> ComparisonInfo | None:
    """A recorded comparison, or None."""
    row = db.row("comparisons", "SELECT params, outcome FROM comparisons WHERE id = ?", (comparison_id,))
    if row is None:
        return None
    rows = db.rows("comparison_matches", "SELECT match_id, role, reference FROM comparison_matches WHERE"
                   " comparison_id = ? ORDER BY reference, role", (comparison_id,))

    def convert() -> ComparisonInfo:
        params, outcome = json.loads(row["params"]), json.loads(row["outcome"])
        if not isinstance(params, dict) or not isinstance(outcome, dict):
            raise ValueError("its parameters or outcome are not a JSON object")
        return ComparisonInfo(comparison_id, params, outcome, tuple(
            ComparisonMatch(str(r["match_id"]), ComparisonRole(r["role"]), int(r["reference"])) for r in rows))

    info: ComparisonInfo = decode(f"comparison {comparison_id!r}", "comparisons", None, convert)
    return info
