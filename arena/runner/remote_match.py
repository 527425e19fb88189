"""A match over real gRPC: start a referee server, seat remote bots by token, launch local bot commands."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from arena.referee import HandRecord, HandSink, Match, MatchResult, MatchSpec
from arena.runner.bots import BotProcess, BotSpec
from arena.transport import convert
from arena.transport.pb import arena_pb2, bot_pb2
from arena.transport.remote import RemoteSeat
from arena.transport.server import RefereeServer, ServerLimits


@dataclass(slots=True)
class MatchSetup:
    """A match ready to be played: its server, its seats with their tokens, and the match itself."""

    server: RefereeServer
    seats: list[RemoteSeat]
    match: Match
    processes: list[BotProcess] = field(default_factory=list)


def new_token() -> str:
    """A seat's secret: 32 random bytes, URL-safe."""
    return secrets.token_urlsafe(32)


async def prepare_match(
    spec: MatchSpec,
    names: Sequence[str],
    sinks: Sequence[HandSink] = (),
    versions: Sequence[str] | None = None,
    server: RefereeServer | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
    tls: tuple[bytes, bytes] | None = None,
    limits: ServerLimits | None = None,
    on_hand: Callable[[HandRecord], None] | None = None,
    start_hand: int = 0,
) -> MatchSetup:
    """Create (or reuse) a referee server and one token-protected seat per bot name."""
    if server is None:
        server = RefereeServer(host, port, tls, limits)
        await server.start()
    config = convert.table_config(spec.config, len(names), spec.starting_stack)
    policy = bot_pb2.ActionClockPolicy(
        per_action_ms=spec.policy.per_action_ms,
        time_bank_ms=spec.policy.time_bank_ms,
        max_retries=spec.policy.max_retries,
        max_violations=spec.policy.max_violations,
    )
    hands_total = len(spec.plan(len(names)))
    seats = [
        RemoteSeat(name, new_token(), spec.match_id, spec.table_id, config, policy, hands_total) for name in names
    ]
    for seat in seats:
        server.add_seat(seat)
    all_sinks = [*sinks, server.directory.sink(spec.match_id)]
    match = Match(spec, [(s.name, s) for s in seats], all_sinks, versions, start_hand=start_hand, on_hand=on_hand)
    server.add_match(match, seats)
    return MatchSetup(server, seats, match)


async def play(setup: MatchSetup) -> MatchResult:
    """Run the match, keeping the spectator service's status current."""
    directory = setup.server.directory
    match_id = setup.match.spec.match_id
    directory.set_status(match_id, arena_pb2.MATCH_STATUS_RUNNING)
    try:
        result = await setup.match.run()
    except BaseException:
        directory.set_status(match_id, arena_pb2.MATCH_STATUS_ABORTED)
        raise
    status = arena_pb2.MATCH_STATUS_FINISHED if result.reason == "completed" else arena_pb2.MATCH_STATUS_ABORTED
    directory.set_status(match_id, status)
    return result


async def run_local_match(
    spec: MatchSpec,
    bots: Sequence[BotSpec],
    sinks: Sequence[HandSink] = (),
    log_dir: Path | None = None,
    cwd: Path | None = None,
    on_hand: Callable[[HandRecord], None] | None = None,
    limits: ServerLimits | None = None,
    start_hand: int = 0,
) -> MatchResult:
    """Start a referee on a free local port, launch every bot command as a subprocess, play the match."""
    setup = await prepare_match(
        spec, [b.name for b in bots], sinks, [b.version for b in bots], on_hand=on_hand, limits=limits,
        start_hand=start_hand,
    )
    try:
        for bot, seat in zip(bots, setup.seats, strict=True):
            log_path = log_dir / f"{spec.match_id}-{bot.name}.log" if log_dir is not None else None
            process = BotProcess(bot, log_path)
            await process.start(setup.server.address, seat.token, cwd)
            setup.processes.append(process)
        return await play(setup)
    finally:
        await asyncio.gather(*(p.stop() for p in setup.processes))
        await setup.server.stop()
