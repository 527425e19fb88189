"""Match executors: a ``MatchJob`` goes in, its hands and then its result come out; where it is played is the
executor's own business.

* ``LocalExecutor`` (the default) plays the match here, as ``arena tournament`` always has: a referee on a private
  Unix-domain socket, sandboxed bot processes (arena.runner.remote_match).
* ``RayExecutor`` (arena.runner.ray_executor, ``pip install -e '.[ray]'``) plays each match as a Ray task on some node
  of a cluster, which runs that same local match there and streams its hands back through the codec
  (arena.runner.codec).

Whichever plays it, every hand reaches the one writer in the driver (``MatchWriter``: the database, the progress
bar) in the order the referee finished it, and the database cannot tell which executor played a match.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from arena.referee import HandRecord, HandSink, MatchResult, MatchSpec, MatchStatus
from arena.runner.bots import BotSpec
from arena.runner.remote_match import run_local_match
from arena.runner.sandbox import SandboxPolicy
from arena.transport.server import ServerLimits

log = logging.getLogger("arena.runner")

LOCAL_MATCHES_AT_ONCE = 2  # the default of ``workers`` on this machine


class ExecutorError(RuntimeError):
    """A match could not be played by its executor (its node lacks bubblewrap, Ray is not installed...)."""


class WorkerLost(ExecutorError):
    """The worker process or node playing a match died: the hands it streamed are recorded, the rest may be played
    again (the match resumes at its first lost hand)."""


class DuplicateHand(ExecutorError):
    """An executor sent a hand that is recorded already: refused, so that no hand is ever stored twice."""


class ExecutorKind(enum.StrEnum):
    """Where a tournament's matches are played (the ``executor`` key and ``--executor``)."""

    LOCAL = "local"
    RAY = "ray"


def executor_kind(value: object, where: str) -> ExecutorKind:
    """The ``executor`` setting read, or a ``ValueError`` naming ``where`` and the choices."""
    if isinstance(value, str):
        try:
            return ExecutorKind(value.strip().lower())
        except ValueError:
            pass
    choices = ", ".join(repr(k.value) for k in ExecutorKind)
    raise ValueError(f"{where} = {value!r}: expected one of {choices}")


@dataclass(frozen=True, slots=True)
class MatchJob:
    """Everything needed to play one match anywhere: the referee's ``MatchSpec`` (match id, seed, table, clock,
    hands, seat rotations and game), the bots in participant order, the hands recorded already (a resumed match
    skips them) with, for a resumed cash game or freezeout, their final stacks (``history``), the folder the bot
    commands run from and their sandbox."""

    spec: MatchSpec
    bots: tuple[BotSpec, ...]
    recorded: frozenset[int] = frozenset()
    cwd: Path = field(default_factory=Path.cwd)
    sandbox: SandboxPolicy = field(default_factory=SandboxPolicy)
    log_dir: Path | None = None
    history: Mapping[int, tuple[int, ...]] | None = None


@dataclass(slots=True)
class MatchControl:
    """What a caller may do to a match while it runs: ``stop`` it after the hands in play (it ends as ``stopped``:
    a comparison's verdict), and hear at once of a bot process that died (``on_crash``, with the failure in words)."""

    stop: asyncio.Event = field(default_factory=asyncio.Event)
    on_crash: Callable[[str], None] | None = None
    reason: MatchStatus = MatchStatus.STOPPED  # how a match stopped by ``stop`` ends (a league's: interrupted)


class MatchExecutor(Protocol):
    """Plays matches; ``play`` hands every finished hand to ``sink`` (in the caller's process and event loop) and
    returns the match's result, or raises ``WorkerLost`` when the worker playing it died."""

    def matches_at_once(self, asked: int | None) -> int:
        """How many matches to play at once (``asked``: the ``workers`` setting, if given)."""
        ...

    async def play(self, job: MatchJob, sink: HandSink, control: MatchControl | None = None) -> MatchResult:
        """Play one match to its end (or until ``control`` stops it, where the executor supports that)."""
        ...

    def close(self) -> None:
        """Let go of whatever the executor holds (a cluster connection)."""
        ...


class LocalExecutor:
    """Plays every match on this machine, in this process's event loop (what arena has always done)."""

    kind = ExecutorKind.LOCAL

    def __init__(self, limits: ServerLimits | None = None) -> None:
        self.limits = limits  # what each match's referee allows its bots (arena.transport.server)

    def matches_at_once(self, asked: int | None) -> int:
        """``workers``, 2 by default."""
        return asked or LOCAL_MATCHES_AT_ONCE

    async def play(self, job: MatchJob, sink: HandSink, control: MatchControl | None = None) -> MatchResult:
        """A referee on a private local socket and the job's sandboxed bots, here."""
        return await run_local_match(job.spec, job.bots, [sink], log_dir=job.log_dir, cwd=job.cwd,
                                     limits=self.limits, recorded=job.recorded, sandbox=job.sandbox,
                                     stop=control.stop if control else None,
                                     on_crash=control.on_crash if control else None, history=job.history,
                                     stop_reason=control.reason if control else MatchStatus.STOPPED)

    def close(self) -> None:
        """Nothing to let go of."""


class HandNumbers:
    """A set of hand numbers as bits: a long match's numbers take an eighth of a byte each (a set of ints, about 60
    bytes each, grew with every hand of the match). Numbers outside 0 to ``BITS`` go to an ordinary set."""

    BITS = 1 << 24  # a bitmap of at most 2 MB, whatever number a worker sends

    def __init__(self, numbers: Collection[int] = ()) -> None:
        self._bits = bytearray()
        self._others: set[int] = set()
        for number in numbers:
            self.add(number)

    def __contains__(self, number: object) -> bool:
        if not isinstance(number, int) or not 0 <= number < self.BITS:
            return number in self._others
        byte = number >> 3
        return byte < len(self._bits) and bool(self._bits[byte] >> (number & 7) & 1)

    def add(self, number: int) -> None:
        """Count ``number`` in."""
        if not 0 <= number < self.BITS:
            self._others.add(number)
            return
        byte = number >> 3
        if byte >= len(self._bits):  # at least doubled: amortised constant time a hand
            self._bits.extend(bytes(max(byte + 1 - len(self._bits), len(self._bits))))
        self._bits[byte] |= 1 << (number & 7)


class MatchWriter:
    """The one writer of a match's hands in the driver: each hand to the sinks (the database first), then to the
    progress callback; a hand recorded already, or sent twice, is refused.

    With ``together`` (a match on several tables, recorded in a database), the hands that its tables finish in one
    turn of the event loop are stored together, after that turn: the sinks at the head of the list that can store
    several at once (``hands_finished``: the ledger, one transaction for them all) get them in one call, then each
    hand goes to the other sinks and the callback, in the order the tables finished them. ``hand_finished`` then
    returns what its table awaits before anything else (another sink, a bot, a spectator) hears of the hand: the
    hand is durable by then. Without it (a match on one table, whose hands come one at a time, or one recorded
    nowhere: waiting for the loop's turn only delays each), or called outside a running loop (a caller's own
    thread), it stores the hand at once and returns None."""

    def __init__(self, sinks: Collection[HandSink], recorded: Collection[int] = (),
                 on_hand: Callable[[HandRecord], None] | None = None, together: bool = False) -> None:
        self.sinks = list(sinks)
        self.seen = HandNumbers(recorded)
        self.on_hand = on_hand
        self.together = together
        self.written = 0
        self._queued: list[HandRecord] = []
        self._waiting: list[asyncio.Future[None]] = []  # the queued hands' tables: each told once its hand is stored

    @property
    def durable(self) -> bool:
        """Whether a hand is stored anywhere (HandSink.durable): one of its sinks is durable (True unless it says)."""
        return any(getattr(sink, "durable", True) for sink in self.sinks)

    def hand_finished(self, record: HandRecord) -> asyncio.Future[None] | None:
        """Store one finished hand (the HandSink interface): with the others finished in this turn of the loop,
        once it is over (the future that says so, one per hand: a table stopped while it waits cancels only its
        own), or at once."""
        if record.hand_number in self.seen:
            raise DuplicateHand(f"hand {record.hand_number} of {record.match_id} was sent twice: not stored again")
        self.seen.add(record.hand_number)
        try:
            loop = asyncio.get_running_loop() if self.together else None
        except RuntimeError:
            loop = None
        if loop is None:
            self._store([record], [])
            return None
        if not self._queued:
            loop.call_soon(self._flush, loop)
        self._queued.append(record)
        stored = loop.create_future()
        self._waiting.append(stored)
        return stored

    def _flush(self, loop: asyncio.AbstractEventLoop) -> None:
        """Store the hands queued in this turn; each one's table goes on when it is stored, or fails with what
        failed (a failed transaction: every one of them; a later sink that failed on a hand: that hand's table and
        those after it, whose hands are stored but not yet passed on)."""
        records, self._queued = self._queued, []
        waiting, self._waiting = self._waiting, []
        try:
            self._store(records, waiting)
        except BaseException as exc:
            told = False
            for stored in waiting:
                if not stored.done():
                    stored.set_exception(exc)
                    told = True
            if not told:  # every table that waited is gone (stopped): the error is not lost for that
                loop.call_exception_handler({"message": "storing finished hands failed", "exception": exc})
            if not isinstance(exc, Exception):
                raise

    def _store(self, records: list[HandRecord], waiting: list[asyncio.Future[None]]) -> None:
        """Store ``records``, telling each of ``waiting`` (one per record, or none) once its record has been
        through every sink and the callback; an error leaves those not told yet to the caller."""
        sinks = self.sinks
        lead = 0
        while lead < len(sinks) and hasattr(sinks[lead], "hands_finished"):
            sinks[lead].hands_finished(records)  # type: ignore[attr-defined]
            lead += 1
        self.written += len(records)
        for at, record in enumerate(records):
            for sink in sinks[lead:]:
                sink.hand_finished(record)
            if self.on_hand is not None:
                self.on_hand(record)
            if waiting and not waiting[at].done():
                waiting[at].set_result(None)


def make_executor(kind: ExecutorKind, ray_address: str | None = None,
                  archives: Callable[[str], bytes] | None = None) -> MatchExecutor:
    """The executor of that kind (Ray's connects to the cluster at ``ray_address``, or ``RAY_ADDRESS``, or starts
    one on this machine; ``archives`` gives the bytes of a hosted bot's archive by its SHA-256, for the nodes that
    lack its folder)."""
    if kind is ExecutorKind.LOCAL:
        if ray_address:
            raise ExecutorError("--ray-address is for --executor ray")
        return LocalExecutor()
    try:
        from arena.runner.ray_executor import RayExecutor
    except ImportError as exc:
        raise ExecutorError(f"the Ray executor needs Ray, which is not installed ({exc}): pip install -e '.[ray]' "
                            "on this machine and on every node of the cluster") from None
    return RayExecutor(ray_address, archives)


__all__ = ["DuplicateHand", "ExecutorError", "ExecutorKind", "HandNumbers", "LocalExecutor", "MatchControl",
           "MatchExecutor", "MatchJob", "MatchWriter", "WorkerLost", "executor_kind", "make_executor"]
