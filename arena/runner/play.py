"""One way to play a match, whoever asks: ``arena match`` and ``serve``, comparisons, tournaments and the league.

A match is opened in a ledger (a resume verified there first), played by an executor (here with local bot
processes, as a Ray task on a cluster, with remote bots that connect to a served referee, or on seats whose bots are
connected already), every finished hand written to the ledger's entry before anything else hears of it, and
finished in the ledger, which seals it. A worker lost on the way is played on from its first lost hand, the record
verified again first. Each caller is then: build a job, play it, report."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from arena.referee import HandRecord, HandSink, MatchKind, MatchResult
from arena.runner.executor import MatchControl, MatchExecutor, MatchJob, MatchWriter, WorkerLost
from arena.runner.ledger import MatchEntry, MatchLedger

log = logging.getLogger("arena.runner")


@dataclass(frozen=True, slots=True)
class Played:
    """A match played and finished: its whole result (a resumed match's earlier part added in), the commitment
    published before its first hand, and the final hash that seals its record (None when nothing recorded it)."""

    result: MatchResult
    commitment: str
    final_hash: str | None


class MatchRun:
    """A match open in a ledger, played in one part or in several (a comparison plays each of its matches block by
    block and rotation by rotation), then finished. ``LedgerRefused`` when the ledger will not open it as asked."""

    def __init__(self, ledger: MatchLedger, job: MatchJob, kind: MatchKind = MatchKind.MATCH,
                 event: str | None = None, resume: bool = False) -> None:
        self.ledger = ledger
        self.entry: MatchEntry = ledger.open(job.spec, job.bots, kind, event, resume)
        self._job = job

    @property
    def job(self) -> MatchJob:
        """The job as it stands now: the hands recorded already skipped (with a game's stacks after them), the
        ledger's files hidden from every bot."""
        return dataclasses.replace(self._job, recorded=self.entry.played, history=self.entry.history,
                                   sandbox=self._job.sandbox.hiding(*self.ledger.hidden))

    async def play(self, executor: MatchExecutor, sinks: Sequence[HandSink] = (),
                   on_hand: Callable[[HandRecord], None] | None = None, control: MatchControl | None = None,
                   part: MatchJob | None = None, replays: int = 0) -> MatchResult:
        """Play the job (or ``part`` of it, a job that skips more hands) with ``executor``, its one writer putting
        each hand in the entry first (durable before anything else hears of it), then in ``sinks``, then to
        ``on_hand``. A worker lost on the way: up to ``replays`` times the record is verified again and the match
        played on from its first lost hand; after that ``WorkerLost`` (its hands so far are recorded, a resume
        finishes it)."""
        lost = 0
        while True:
            job = part if part is not None else self.job
            try:
                # several tables' hands in one transaction; a match recorded nowhere has nothing to wait for
                together = job.spec.tables > 1 and self.entry.commits
                writer = MatchWriter([self.entry, *sinks], job.recorded, on_hand, together=together)
                return await executor.play(job, writer, control)
            except WorkerLost as exc:
                if lost == replays:
                    raise
                lost += 1
                log.warning("%s; played on from its first lost hand (%d more time(s) at most)", exc, replays - lost)
                self.entry.reopen()

    def finish(self, result: MatchResult) -> Played:
        """Record how the match ended and seal it: the whole match's result, with its commitment and final hash."""
        finished = self.entry.finish(result)
        return Played(finished, self.entry.commitment, self.entry.final_hash)


__all__ = ["MatchRun", "Played"]
