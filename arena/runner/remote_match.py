"""A match over real gRPC: start a referee server, seat remote bots by token, launch local bot commands.

Local bots are sandboxed processes (arena.runner.sandbox) that reach the referee through a Unix-domain socket and
nothing else. A duplicate match gives every bot one process per rotation, each playing its rotation at a table of
its own, the rotations one after the other: a rotation's processes are started when it begins and are gone before
the next one begins (arena.runner.local_bots), so no process is dealt the same cards twice and no two processes of a
bot that see the same deals are ever alive at once (arena.referee.match).
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from arena import scratch
from arena.referee import HandRecord, HandSink, Match, MatchResult, MatchSpec, MatchStatus
from arena.runner.bots import BotProcess, BotSpec
from arena.runner.collector import collect_in_batches
from arena.runner.local_bots import LocalBots
from arena.runner.sandbox import SandboxPolicy, check_sandbox
from arena.transport import convert
from arena.transport.endpoint import Credential, Endpoint
from arena.transport.remote import RemoteSeat
from arena.transport.server import RefereeServer, ServerLimits
from arena_sdk.pb import arena_pb2, bot_pb2


@dataclass(slots=True)
class MatchSetup:
    """A match ready to be played: its server, its seats with their tokens (``lanes[lane][participant]``), the
    match itself, its local bots once ``launch`` gave it some, and the bot processes started for it."""

    server: RefereeServer
    lanes: list[list[RemoteSeat]]
    match: Match
    bots: LocalBots | None = None
    processes: list[BotProcess] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    @property
    def seats(self) -> list[RemoteSeat]:
        """The seats of the first (or only) table, in participant order."""
        return self.lanes[0]


def new_token() -> str:
    """A secret to hand out (a seat's token, a league's admin token): 32 random bytes, URL-safe, never starting with
    ``-`` (one in 64 would: given as ``--token VALUE`` it was read as an option, by argparse in the ACPC bridge and
    the Python SDK's own command line, and the bot could not join)."""
    while True:
        token = secrets.token_urlsafe(32)
        if not token.startswith("-"):
            return token


def remote_seats(spec: MatchSpec, names: Sequence[str], lanes: int = 1,
                 endpoints: Sequence[Endpoint | None] | None = None) -> list[list[RemoteSeat]]:
    """The remote seats of a match, ``seats[lane][participant]``, and what their Welcomes say. Each is played over
    an endpoint of its own with a new token, or over participant i's ``endpoints[i]`` when it is given (a league's
    bots, joined with their keys)."""
    config = convert.table_config(spec.config, spec.table_seats(len(names)), spec.starting_stack)
    policy = bot_pb2.ActionClockPolicy(
        per_action_ms=spec.policy.per_action_ms,
        time_bank_ms=spec.policy.time_bank_ms,
        max_retries=spec.policy.max_retries,
        max_violations=spec.policy.max_violations,
    )
    hands_total = spec.hands_planned(len(names))
    table_ids = [spec.table_id] if lanes == 1 else [f"{spec.table_id}-r{lane}" for lane in range(lanes)]
    if spec.tables > 1:  # each lane plays on several tables: the Welcome names the first (arena.referee.match)
        table_ids = [f"{table_id}.1" for table_id in table_ids]
    def endpoint(index: int, name: str) -> Endpoint:
        given = endpoints[index] if endpoints is not None else None
        return given if given is not None else Endpoint(name, Credential.TOKEN, new_token())

    return [[RemoteSeat(endpoint(i, name), spec.match_id, table_id, config, policy, hands_total, spec.tables)
             for i, name in enumerate(names)]
            for table_id in table_ids]


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
    recorded: Collection[int] = (),
    lanes: int = 1,
    local: bool = False,
    tcp: bool = True,
    history: Mapping[int, Sequence[int]] | None = None,
    unsafe_overlapping_halves: bool = False,
) -> MatchSetup:
    """Create (or reuse) a referee server and token-protected seats: one per bot, or one per bot and rotation
    (``lanes``, played one after the other; ``unsafe_overlapping_halves``: all at once, for the integrity tests'
    positive controls only, see ``Match``). A new server listens on TCP (``tcp``: remote bots and spectators) and,
    with ``local``, on a Unix-domain socket for local bots."""
    if server is None:
        server = RefereeServer(host, port, tls, limits, tcp=tcp, local=local)
        await server.start()
    seats = remote_seats(spec, names, lanes)
    for lane in seats:
        for seat in lane:
            server.add_seat(seat)
    all_sinks = [*sinks, server.directory.sink(spec.match_id)]
    by_bot = [[lane[i] for lane in seats] for i in range(len(names))]
    match = Match(spec, list(zip(names, by_bot, strict=True)), all_sinks, versions, recorded=recorded,
                  on_hand=on_hand, history=history, unsafe_overlapping_halves=unsafe_overlapping_halves)
    server.add_match(match, [seat for lane in seats for seat in lane])
    return MatchSetup(server, seats, match)


async def play(setup: MatchSetup) -> MatchResult:
    """Run the match (its local bots, if ``launch`` gave it some, started and stopped rotation by rotation),
    keeping the spectator service's status current; the process's garbage collector is set for refereeing first
    (arena.runner.collector)."""
    collect_in_batches()
    directory = setup.server.directory
    match_id = setup.match.spec.match_id
    directory.set_status(match_id, arena_pb2.MATCH_STATUS_RUNNING)
    try:
        result = await setup.match.run(setup.bots)
    except BaseException:
        directory.set_status(match_id, arena_pb2.MATCH_STATUS_ABORTED)
        raise
    status = arena_pb2.MATCH_STATUS_FINISHED if result.reason.over else arena_pb2.MATCH_STATUS_ABORTED
    directory.set_status(match_id, status)
    return result


def lanes_for(spec: MatchSpec, num_bots: int) -> int:
    """How many lanes a local match plays (one after the other): one per rotation, so that no process sees a deal
    twice."""
    return len(spec.rotations(num_bots))


async def launch(
    setup: MatchSetup,
    bots: Sequence[BotSpec | None],
    log_dir: Path | None,
    cwd: Path | None,
    sandbox: SandboxPolicy,
    on_crash: Callable[[str], None] | None = None,
) -> LocalBots:
    """Give the setup its local bots: ``bots[i]`` for participant i (None: a remote bot, which connects by itself),
    one process per seat, each started when the match begins its rotation (``play``) and stopped before the next one
    begins."""
    setup.bots = LocalBots(setup, bots, log_dir, cwd, sandbox, on_crash)
    return setup.bots


async def play_watched(setup: MatchSetup, on_crash: Callable[[str], None] | None = None) -> MatchResult:
    """Play the match while watching its bot processes: one that exits while its seat still plays is a crash,
    noted on its participant with its exit status and the last lines it wrote (``on_crash`` hears of it too)."""
    if setup.bots is not None and on_crash is not None:
        setup.bots.on_crash = on_crash
    try:
        return await play(setup)
    finally:
        if setup.bots is not None:
            await setup.bots.close()


async def run_local_match(
    spec: MatchSpec,
    bots: Sequence[BotSpec],
    sinks: Sequence[HandSink] = (),
    log_dir: Path | None = None,
    cwd: Path | None = None,
    on_hand: Callable[[HandRecord], None] | None = None,
    limits: ServerLimits | None = None,
    recorded: Collection[int] = (),
    sandbox: SandboxPolicy | None = None,
    stop: asyncio.Event | None = None,
    on_crash: Callable[[str], None] | None = None,
    history: Mapping[int, Sequence[int]] | None = None,
    stop_reason: MatchStatus = MatchStatus.STOPPED,
) -> MatchResult:
    """Start a referee on a private local socket, play the match with every bot command (sandboxed, one process
    per rotation, the rotations one after the other); once ``stop`` is set, the hands in play are finished and the
    match ends as ``stop_reason`` (``stopped``: a comparison's verdict); ``on_crash`` hears of each bot process
    that dies while the match runs. ``history`` (a resumed cash game or freezeout): the recorded hands' final
    stacks."""
    policy = sandbox if sandbox is not None else SandboxPolicy()
    if policy.enabled:
        check_sandbox()
    setup = await prepare_match(
        spec, [b.name for b in bots], sinks, [b.version for b in bots], on_hand=on_hand, limits=limits,
        recorded=recorded, lanes=lanes_for(spec, len(bots)), local=True, tcp=False, history=history,
    )
    stopping = asyncio.ensure_future(stop_when(stop, setup.match, stop_reason)) if stop is not None else None
    with scratch.scratch("arena-logs-") as logs:  # bots' output, for a crash report
        try:
            await launch(setup, bots, log_dir or logs, cwd, policy, on_crash)
            return await play_watched(setup)
        finally:
            if stopping is not None:
                stopping.cancel()
            await asyncio.gather(*(p.stop() for p in setup.processes))
            await setup.server.stop()


async def stop_when(stop: asyncio.Event, match: Match, reason: MatchStatus = MatchStatus.STOPPED) -> None:
    """Once ``stop`` is set, finish the hands in play and end the match with ``reason``."""
    await stop.wait()
    match.stop(reason)


__all__ = ["MatchSetup", "MatchStatus", "launch", "new_token", "play", "play_watched", "prepare_match",
           "run_local_match", "stop_when"]
