"""A page per comparison (``arena compare``), as fishtest shows a test: the LLR after every round against its two
bounds, the estimate with its 95% interval, the verdict, the hands used and the command line, all recomputed from
the recorded hands with the parameters the comparison kept beside them (the same replay as ``--verify``)."""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass, field
from typing import Any

from arena.ratings.estimators import Estimator
from arena.ratings.sprt import Sprt, SprtParams, Verdict, recorded_comparison
from arena.ratings.stats import WinRate
from arena.records import queries
from arena.records.comparisons import comparison
from arena.records.db import Database
from arena.referee import MatchSpec

VERDICTS = {
    "H1": "H1 accepted: the candidate is better",
    "H0": "H0 accepted: the candidate is not better",
    "inconclusive": "inconclusive: the hand limit came first",
    "error": "error: a bot crashed, forfeited or never connected",
    "continue": "still running",
}


@dataclass(slots=True)
class ComparisonPage:
    """Everything a comparison's page shows."""

    comparison_id: str
    slug: str
    candidate: str
    baseline: str
    references: tuple[str, ...]
    params: SprtParams
    estimator: str
    verdict: str  # H1, H0, inconclusive, error, continue
    sessions: int
    decided_at: int
    hands_used: int
    hands_played: int
    max_hands: int | None
    estimate: WinRate | None
    llr: float
    llr_series: list[tuple[int, float]] = field(default_factory=list)  # (sessions, LLR after them)
    command: str = ""
    verify: str = ""
    match_slugs: list[tuple[str, str]] = field(default_factory=list)  # (match id, slug)
    plot: str | None = None
    problem: str | None = None  # why the rounds could not be rebuilt, if they could not

    @property
    def verdict_text(self) -> str:
        """The verdict in words."""
        return VERDICTS.get(self.verdict, self.verdict)

    @property
    def estimate_finite(self) -> bool:
        """Whether the estimate has a finite interval (more than one round)."""
        e = self.estimate
        return e is not None and e.sessions > 1 and math.isfinite(e.low) and math.isfinite(e.high)


_STRUCTURES = {"NO_LIMIT": "nl", "POT_LIMIT": "pl", "FIXED_LIMIT": "fl"}


def _table_flags(spec: MatchSpec) -> list[str]:
    """The table settings of a comparison's matches as ``arena compare`` flags."""
    config = spec.config
    words = ["--structure", _STRUCTURES.get(config.structure.name, "nl"),
             "--stakes", f"{config.small_blind}/{config.big_blind}", "--stack", str(spec.starting_stack)]
    if config.ante:
        words += ["--ante", str(config.ante)]
    return words


def _command(comparison_id: str, note: dict[str, Any], params: SprtParams, estimator: str,
             table: list[str] | None = None) -> str:
    """The ``arena compare`` command line of the comparison, from what it recorded."""
    bots = note.get("bots") or []
    words = ["arena", "compare"]
    for flag, bot in zip(["--candidate", "--baseline"] + ["--reference"] * max(0, len(bots) - 2), bots, strict=False):
        if isinstance(bot, dict) and bot.get("command"):
            words += [flag, f"{bot.get('key') or bot.get('name')}={bot['command']}"]
    if note.get("max_hands") is not None:
        words += ["--hands", str(note["max_hands"])]
    words += ["--mbb0", f"{params.mbb0:g}", "--mbb1", f"{params.mbb1:g}", "--alpha", f"{params.alpha:g}",
              "--beta", f"{params.beta:g}", "--estimator", estimator, *(table or []), "--id", comparison_id]
    return shlex.join(words)


def comparison_page(db: Database, comparison_id: str, slug: str, match_slugs: dict[str, str]) -> ComparisonPage:
    """A comparison's page data: its rounds replayed through the test with its recorded parameters."""
    recorded_info = comparison(db, comparison_id)
    note = {**recorded_info.params, **recorded_info.outcome} if recorded_info is not None else {}
    stored = note.get("params") if isinstance(note.get("params"), dict) else {}
    try:
        params = SprtParams(**stored) if stored else SprtParams()
    except (TypeError, ValueError):
        params = SprtParams()
    estimator = str(note.get("estimator", Estimator.RAW.value))
    page = ComparisonPage(
        comparison_id=comparison_id, slug=slug, candidate="", baseline="", references=(), params=params,
        estimator=estimator, verdict=str(note.get("verdict", "continue")), sessions=0, decided_at=0, hands_used=0,
        hands_played=0, max_hands=note.get("max_hands"), estimate=None, llr=0.0,
        command=_command(comparison_id, note, params, estimator),
        verify=shlex.join(["arena", "compare", "--verify", comparison_id, "--db", db.path.name]),
    )
    try:
        recorded = recorded_comparison(db, comparison_id, Estimator(estimator))
    except (KeyError, ValueError) as exc:
        page.problem = str(exc.args[0]) if exc.args else repr(exc)
        return page
    page.candidate, page.baseline, page.references = recorded.candidate, recorded.baseline, recorded.references
    table = _table_flags(queries.match_spec(db, recorded.match_ids[0]))
    page.command = _command(comparison_id, note, params, estimator, table)
    page.match_slugs = [(m, match_slugs[m]) for m in recorded.match_ids if m in match_slugs]
    page.hands_played = sum(queries.hands_recorded(db, m) for m in recorded.match_ids)
    test = Sprt(params)
    for head_to_head, references, hands in recorded.rounds:
        test.add_round(head_to_head, references, hands)
        page.llr_series.append((test.sessions, test.llr))
        if test.decided:  # the live test stopped here: later rounds were hands already in play
            break
    state = test.state()
    page.sessions, page.decided_at, page.hands_used, page.llr = state.sessions, test.decided_at, state.hands, state.llr
    page.estimate = state.estimate if state.sessions else None
    if "verdict" not in note:
        page.verdict = test.verdict.value if test.verdict is not Verdict.CONTINUE else "continue"
    return page
