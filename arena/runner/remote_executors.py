"""Executors whose bots arena does not start: remote bots that connect to a referee served for the match (``arena
serve``), and bots connected already (a league's members, on the host's own server). Either plays through
``arena.runner.play`` like any match: the writer first among the match's sinks, stopped by its control."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from arena.referee import HandSink, Match, MatchResult, MatchStatus, Seat
from arena.runner.collector import collect_in_batches
from arena.runner.executor import MatchControl, MatchJob
from arena.runner.local_bots import LocalBots
from arena.runner.remote_match import MatchSetup, play, prepare_match, stop_when
from arena.transport.server import ServerLimits


class ServedExecutor:
    """Plays a match with remote bots: a referee served on ``host:port`` (TCP; TLS with ``tls``, a key and a
    certificate) with a secret token per seat; ``on_ready`` is given the setup (its server and seats with their
    tokens) before the referee waits for the bots."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, tls: tuple[bytes, bytes] | None = None,
                 limits: ServerLimits | None = None, on_ready: Callable[[MatchSetup], None] | None = None) -> None:
        self.host = host
        self.port = port
        self.tls = tls
        self.limits = limits
        self.on_ready = on_ready

    def matches_at_once(self, asked: int | None) -> int:
        """One: the match has the address to itself."""
        return 1

    async def play(self, job: MatchJob, sink: HandSink, control: MatchControl | None = None) -> MatchResult:
        """Serve the match, wait for its bots, play it, stop serving."""
        setup = await prepare_match(job.spec, [bot.name for bot in job.bots], [sink], host=self.host, port=self.port,
                                    tls=self.tls, limits=self.limits, recorded=job.recorded, history=job.history)
        stopping = (asyncio.ensure_future(stop_when(control.stop, setup.match, MatchStatus.STOPPED))
                    if control is not None else None)
        try:
            if self.on_ready is not None:
                self.on_ready(setup)
            return await play(setup)
        finally:
            if stopping is not None:
                stopping.cancel()
            await setup.server.stop()

    def close(self) -> None:
        """Nothing to let go of."""


class SeatedExecutor:
    """Plays a match on seats whose bots are connected already (a league's members, on the host's own server):
    the match is made when it is played, with the writer first among its sinks, and given to ``on_match`` before
    its first hand (to register it with the server and its seats). Seats whose bots arena starts itself (a league's
    hosted bots at a table with remote ones) get their processes from ``processes(match)``."""

    def __init__(self, seats: Sequence[Seat], sinks: Sequence[HandSink] = (),
                 on_match: Callable[[Match], None] | None = None,
                 stop_reason: MatchStatus = MatchStatus.STOPPED,
                 processes: Callable[[Match], LocalBots] | None = None) -> None:
        self.seats = list(seats)
        self.sinks = list(sinks)
        self.on_match = on_match
        self.stop_reason = stop_reason  # how a match stopped by its control ends
        self.processes = processes  # the bot processes of seats arena starts itself (a league's hosted bots)

    def matches_at_once(self, asked: int | None) -> int:
        """As many as asked: each match has its own seats."""
        return asked or 1

    async def play(self, job: MatchJob, sink: HandSink, control: MatchControl | None = None) -> MatchResult:
        """Make the match on the seats and play it to its end (or, once ``control.stop`` is set, to the end of the
        hands in play: it ends as ``stop_reason``); the process's garbage collector is set for refereeing first
        (arena.runner.collector)."""
        collect_in_batches()
        names = [bot.name for bot in job.bots]
        match = Match(job.spec, list(zip(names, self.seats, strict=True)), [sink, *self.sinks],
                      [bot.version for bot in job.bots], recorded=job.recorded, history=job.history)
        if self.on_match is not None:
            self.on_match(match)
        stopping = (asyncio.ensure_future(stop_when(control.stop, match, self.stop_reason))
                    if control is not None else None)
        processes = self.processes(match) if self.processes is not None else None
        try:
            return await match.run(processes)
        finally:
            if stopping is not None:
                stopping.cancel()
            if processes is not None:
                await processes.close()

    def close(self) -> None:
        """Nothing to let go of."""


__all__ = ["SeatedExecutor", "ServedExecutor"]
