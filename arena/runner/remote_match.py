"""A match over real gRPC: start a referee server, seat remote bots by token, launch local bot commands.

Local bots are sandboxed processes (arena.runner.sandbox) that reach the referee through a Unix-domain socket and
nothing else. A duplicate match gives every bot one process per rotation, each playing its rotation at a table of
its own, side by side: no process is dealt the same cards twice, so a bot's memory of a hand never meets that hand's
mirror (arena.referee.match).
"""

from __future__ import annotations

import asyncio
import secrets
import tempfile
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from arena.referee import HandRecord, HandSink, Match, MatchResult, MatchSpec, MatchStatus
from arena.runner.bots import BotProcess, BotSpec
from arena.runner.sandbox import SandboxPolicy, check_sandbox
from arena.text import file_name
from arena.transport import convert
from arena.transport.pb import arena_pb2, bot_pb2
from arena.transport.remote import RemoteSeat
from arena.transport.server import RefereeServer, ServerLimits


@dataclass(slots=True)
class MatchSetup:
    """A match ready to be played: its server, its seats with their tokens (``lanes[lane][participant]``), the
    match itself, and the bot processes started for it."""

    server: RefereeServer
    lanes: list[list[RemoteSeat]]
    match: Match
    processes: list[BotProcess] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    @property
    def seats(self) -> list[RemoteSeat]:
        """The seats of the first (or only) table, in participant order."""
        return self.lanes[0]


def new_token() -> str:
    """A seat's secret: 32 random bytes, URL-safe."""
    return secrets.token_urlsafe(32)


def remote_seats(spec: MatchSpec, names: Sequence[str], lanes: int = 1,
                 token: Callable[[], str] = new_token) -> list[list[RemoteSeat]]:
    """The remote seats of a match, ``seats[lane][participant]``, each with its token (a league's seats, which
    are adopted by streams that joined with a key, have none) and what its Welcomes say."""
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
    return [[RemoteSeat(name, token(), spec.match_id, table_id, config, policy, hands_total, spec.tables)
             for name in names]
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
) -> MatchSetup:
    """Create (or reuse) a referee server and token-protected seats: one per bot, or one per bot and rotation
    (``lanes``). A new server listens on TCP (``tcp``: remote bots and spectators) and, with ``local``, on a
    Unix-domain socket for local bots."""
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
                  on_hand=on_hand, history=history)
    server.add_match(match, [seat for lane in seats for seat in lane])
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
    status = arena_pb2.MATCH_STATUS_FINISHED if result.reason.over else arena_pb2.MATCH_STATUS_ABORTED
    directory.set_status(match_id, status)
    return result


def lanes_for(spec: MatchSpec, num_bots: int) -> int:
    """How many tables a local match plays at: one per rotation, so that no process sees a deal twice."""
    return len(spec.rotations(num_bots))


async def launch(
    setup: MatchSetup,
    bots: Sequence[BotSpec],
    log_dir: Path | None,
    cwd: Path | None,
    sandbox: SandboxPolicy,
) -> None:
    """Start one process per seat of the setup: ``bots[i]`` for participant i, at every table."""
    socket = setup.server.socket_path
    if socket is None:
        raise RuntimeError("local bots need a referee that serves a local socket")
    match_id = setup.match.spec.match_id
    for lane, seats in enumerate(setup.lanes):
        for bot, seat in zip(bots, seats, strict=True):
            parts = (match_id, bot.name) if len(setup.lanes) == 1 else (match_id, f"r{lane}", bot.name)
            log_path = log_dir / file_name(*parts, suffix=".log") if log_dir is not None else None
            process = BotProcess(bot, log_path, sandbox)
            setup.processes.append(process)
            await process.start(socket, seat.token, cwd)


async def play_watched(setup: MatchSetup, on_crash: Callable[[str], None] | None = None) -> MatchResult:
    """Play the match while watching its bot processes: one that exits while the match still runs is a crash, noted
    on its participant with its exit status and the last lines it wrote (``on_crash`` hears of it too)."""
    playing = asyncio.ensure_future(play(setup))
    bots = len(setup.seats)
    exits = [  # processes were started table by table, in participant order (``launch``)
        (asyncio.ensure_future(p.process.wait()), p, index % bots, setup.lanes[index // bots][index % bots])
        for index, p in enumerate(setup.processes)
        if p.process is not None
    ]
    try:
        watching = list(exits)
        while True:
            waiting: list[asyncio.Future[int] | asyncio.Future[MatchResult]] = [playing, *(e[0] for e in watching)]
            done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            if playing in done:
                return playing.result()
            for entry in [e for e in watching if e[0] in done]:
                watching.remove(entry)
                _, process, participant, seat = entry
                if seat.finished:  # it was told the match is over, and left: as it should
                    continue
                tail = [convert.printable(line, 200) for line in process.tail(5)]  # the bot's own words: no escapes
                text = f"exited with status {process.returncode}"
                if tail:
                    text += f"; last output: {' | '.join(tail)}"
                setup.match.crashed(participant, text, seat)
                failure = f"{process.spec.name} {text} (match {setup.match.spec.match_id})"
                setup.failures.append(failure)
                if on_crash is not None:
                    on_crash(failure)
    finally:
        for entry in exits:
            entry[0].cancel()


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
) -> MatchResult:
    """Start a referee on a private local socket, launch every bot command (sandboxed, one process per rotation),
    play the match; once ``stop`` is set, the hands in play are finished and the match ends as ``stopped``
    (a comparison's verdict); ``on_crash`` hears of each bot process that dies while the match runs. ``history``
    (a resumed cash game or freezeout): the recorded hands' final stacks."""
    policy = sandbox if sandbox is not None else SandboxPolicy()
    if policy.enabled:
        check_sandbox()
    setup = await prepare_match(
        spec, [b.name for b in bots], sinks, [b.version for b in bots], on_hand=on_hand, limits=limits,
        recorded=recorded, lanes=lanes_for(spec, len(bots)), local=True, tcp=False, history=history,
    )
    stopping = asyncio.ensure_future(_stop_when(stop, setup.match)) if stop is not None else None
    with tempfile.TemporaryDirectory(prefix="arena-logs-") as scratch:  # bots' output, for a crash report
        try:
            await launch(setup, bots, log_dir or Path(scratch), cwd, policy)
            return await play_watched(setup, on_crash)
        finally:
            if stopping is not None:
                stopping.cancel()
            await asyncio.gather(*(p.stop() for p in setup.processes))
            await setup.server.stop()


async def _stop_when(stop: asyncio.Event, match: Match) -> None:
    await stop.wait()
    match.stop(MatchStatus.STOPPED)


__all__ = ["MatchSetup", "MatchStatus", "launch", "new_token", "play", "play_watched", "prepare_match",
           "run_local_match"]
