"""The league host: registered bots join with their API keys on long-lived streams and are matched continuously.

A registered bot at the host is a ``Member``, whose key names a lasting ``Endpoint`` (arena.transport.endpoint):
its stream outlives matches, and every match it is scheduled in gets a seat (a ``RemoteSeat`` played over the
endpoint): the stream is sent that match's Welcome, plays it, hears its MatchEnd, and stays open for the next one.
A member that reconnects (or a newer stream with the same key) takes over every seat it holds.

A bot whose author submitted its code (arena.league.submissions) is a ``Resident``: hosted, always there, its
newest version unpacked from the store beside the database; the host starts its sandboxed processes for every match
it plays, with the league's per-bot limits. A table of residents only is dealt in duplicate, each rotation played by
fresh processes one after the other (README D1), by the host's executor (here, or on a Ray cluster); a table with a
remote bot is dealt fresh, residents included, since a remote bot can remember a deal (README D2), and is played on
the host's own server, its residents' processes reaching it on its local socket. Each match is dealt from its own
secret seed, recorded hand by hand like any match, and published when it ends. A resident that fails in a match
(crashes, never joins, hangs, floods, goes over its limits) has it counted against its version with the reason; a
version that failed in ``[submissions] retire_after`` matches is retired and plays no more, and the league goes on.

After a crash the host starts again on the same database: matches still marked running end as ``interrupted``
(their finished hands stand and their seeds are published; nothing is dealt again), the live ratings are replayed
from the sessions in the order the matches ended (exactly what they were), and scheduling goes on.
"""

from __future__ import annotations

import asyncio
import dataclasses
import fcntl
import logging
import os
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from arena import scratch
from arena.league.matchmaker import Candidate, Rules, pick
from arena.league.settings import LeagueConfig
from arena.ratings.blocks import rating_games
from arena.ratings.league_ratings import LeagueRatings
from arena.ratings.sessions import bot_key, load_sessions
from arena.records import queries, submissions
from arena.records.db import Database
from arena.records.ledger import Ledger
from arena.records.registry import RegisteredBot, Registry, RegistryError
from arena.records.submissions import Submission
from arena.referee import Match, MatchKind, MatchResult, MatchSpec, MatchStatus
from arena.runner.archive import ArchiveRefused, StoreError, SubmissionStore
from arena.runner.bots import BotSpec
from arena.runner.executor import LocalExecutor, MatchControl, MatchExecutor, MatchJob
from arena.runner.local_bots import LocalBots
from arena.runner.play import MatchRun
from arena.runner.remote_executors import SeatedExecutor
from arena.runner.remote_match import MatchSetup, remote_seats
from arena.runner.sandbox import SandboxError, SandboxPolicy, check_drop_caches
from arena.transport.endpoint import Credential, Endpoint, Refusal
from arena.transport.remote import RemoteSeat
from arena.transport.server import RefereeServer, ServerLimits, TokenBucket
from arena_sdk.pb import arena_pb2, bot_pb2

log = logging.getLogger("arena.league")

JOINS_PER_MINUTE = 30.0  # joins one key may make (after a burst of JOIN_BURST): a bot that reconnects in a loop
JOIN_BURST = 10  # is refused rather than allowed to churn its matches' seats
SCHEDULE_EVERY_S = 0.5  # how often the matchmaker looks again when nothing woke it
CHECK_KEYS_EVERY_S = 1.0  # how soon a revoked or rotated key's live stream is ended


class HostError(RuntimeError):
    """The host cannot run: another one holds the database, or the sandbox its league file asks for cannot be had."""


class Member:
    """A registered bot's presence at the host: its endpoint (its key's: the newest stream that joined with it
    plays), the seats of the matches it is playing, and what matchmaking needs to know of it."""

    def __init__(self, bot: RegisteredBot, on_change: Callable[[], None],
                 admit: Callable[[Member, bot_pb2.Join], Refusal | None] = lambda member, join: None) -> None:
        self.name = bot.name
        self.endpoint = Endpoint(bot.name, Credential.KEY, lasting=True, admit=lambda join: admit(self, join))
        self.endpoint.on_join = self._joined
        self.endpoint.on_change = on_change
        self.joins = TokenBucket(JOINS_PER_MINUTE / 60.0, JOIN_BURST)
        self.owner = bot.owner
        self.key_issued_at = bot.key_issued_at
        self.seats: set[RemoteSeat] = set()
        self.waiting_since = time.time()
        self.last_played: float | None = None
        self.matches = 0

    def _joined(self, endpoint: Endpoint, peer: str, join: bot_pb2.Join) -> None:
        if not self.seats:
            self.waiting_since = time.time()

    @property
    def live(self) -> bool:
        """Whether its stream is open."""
        return self.endpoint.live

    @property
    def peer(self) -> str:
        """Where its newest stream came from."""
        return self.endpoint.peer

    @property
    def version(self) -> str:
        """The version its current stream's Join named."""
        session = self.endpoint.session
        return session.join.bot_version if session is not None else ""

    def end(self, code: str, text: str) -> None:
        """End the bot's stream with a fatal error (revoked key, kicked); its seats play on by the time-out policy."""
        self.endpoint.end(code, text)

    def free(self, most: int) -> int:
        """How many more matches it can start now: its Join's ``max_tables`` capped by the league."""
        session = self.endpoint.session
        if not self.live or session is None:
            return 0
        return max(0, min(most, session.max_tables) - len(self.seats))


class Resident:
    """A hosted bot at the host: the version it plays (its newest submission), unpacked in ``folder``, and what
    matchmaking needs to know of it. It is always there: the host starts its processes for every match it plays."""

    def __init__(self, submission: Submission, owner: str, folder: Path) -> None:
        self.name = submission.bot
        self.submission = submission
        self.owner = owner
        self.folder = folder
        self.playing = 0  # matches it is in now
        self.waiting_since = time.time()
        self.last_played: float | None = None
        self.matches = 0

    @property
    def version(self) -> str:
        """The version it plays."""
        return self.submission.version

    def bot(self) -> BotSpec:
        """What the runner starts: its command, from its own folder, and the archive that folder came from."""
        return BotSpec(self.name, self.submission.command, self.version, folder=self.folder,
                       archive=self.submission.sha256)

    def free(self, most: int) -> int:
        """How many more matches it can start now (the league's ``matches_per_bot``)."""
        return max(0, most - self.playing)


@dataclass(slots=True)
class LiveMatch:
    """A match being played (its ``match`` made once its task plays it, when the host's own server plays it), and
    how to stop it."""

    bots: tuple[str, ...]
    planned: int  # the most hands it can last, until it is made
    control: MatchControl = field(default_factory=lambda: MatchControl(reason=MatchStatus.INTERRUPTED))
    match: Match | None = None
    started: float = field(default_factory=time.time)
    hands: int = 0  # hands finished, counted as they are recorded (an executor's match has no ``match`` here)
    duplicate: bool = False

    def hand(self, record: object) -> None:
        """One more hand recorded."""
        self.hands += 1

    @property
    def hands_played(self) -> int:
        """Hands finished so far."""
        return self.match.hands_played if self.match is not None else self.hands

    @property
    def hands_total(self) -> int:
        """Hands the match plays in all (a game's: the most it can last until it is over)."""
        return self.match.hands_total if self.match is not None else self.planned


class LeagueHost:
    """Serves the league: the bot service with API keys, the matchmaker, the matches, the live ratings."""

    def __init__(self, config: LeagueConfig, db: Database, limits: ServerLimits | None = None,
                 tls: tuple[bytes, bytes] | None = None, executor: MatchExecutor | None = None) -> None:
        self.config = config
        self.db = db
        self.ledger = Ledger(db)
        self.registry = Registry(db)
        host, port = config.grpc
        self.server = RefereeServer(host, port, tls, limits, local=True)  # local: hosted bots at mixed tables
        self.server.keys = self.resolve
        self.store = SubmissionStore.beside(db.path, config.submissions.max_unpacked_bytes)
        self.executor: MatchExecutor = executor or LocalExecutor()  # where tables of hosted bots only are played
        settings = config.match
        self.sandbox: SandboxPolicy = settings.sandbox_policy(binds=tuple(Path(b).absolute() for b in settings.binds))
        if self.sandbox.drop_caches:
            try:
                check_drop_caches()
            except SandboxError as exc:
                raise HostError(str(exc)) from None
        self.members: dict[str, Member] = {}
        self.residents: dict[str, Resident] = {}  # hosted bots whose newest version plays
        self.hosted: set[str] = set()  # every bot with a submission (its key joins no stream)
        self.live: dict[str, LiveMatch] = {}
        self.paused = False
        self.frozen = False  # the ladder is frozen for the finals: nothing new is published, no new version joins
        self.ratings = LeagueRatings(version_sigma=config.version_sigma)
        self.interrupted: list[str] = []
        self.rated = 0  # finished matches whose sessions the live ratings hold
        self.played: dict[str, tuple[int, float]] = {}  # from earlier runs: matches per bot, when its last ended
        self.on_match_end: list[Callable[[MatchResult], None]] = []
        self._wake = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self._count = 0
        self._stopping = False
        self._lock_file: IO[str] | None = None

    # ------------------------------------------------------------------ start, stop

    async def start(self) -> None:
        """Make sure no other host runs on the database, recover from an earlier run, then listen."""
        self._lock()
        self.interrupted = self.ledger.interrupt_running(self.config.name, MatchKind.LEAGUE)  # verified first
        for match_id in self.interrupted:
            log.warning("match %s was cut short when the host stopped: it ends as interrupted (its finished hands "
                        "stand, its seed is published)", match_id)
        self._count = len(queries.matches_of(self.db, self.config.name, MatchKind.LEAGUE))
        finished = queries.finished_matches_of(self.db, self.config.name, MatchKind.LEAGUE)
        sessions = load_sessions(self.db, finished) if finished else []
        self.ratings = LeagueRatings.replay(rating_games(sessions, self.config.rating_rules),
                                            version_sigma=self.config.version_sigma)
        self.rated = len(finished)
        self.played = queries.bots_played(self.db, self.config.name, MatchKind.LEAGUE)
        for submission in submissions.newest(self.db).values():
            self.hosted.add(submission.bot)
            self.host_version(submission)
        await self.server.start()

    def _lock(self) -> None:
        """Hold ``<database>.host-lock`` while the host runs: a second host on the same database would end the
        first one's matches as interrupted and deal beside it."""
        path = self.db.path.with_name(self.db.path.name + ".host-lock")
        handle = path.open("a+")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            handle.close()
            raise HostError(
                f"another arena host runs on {self.db.path} ({holder}): one host per league database") from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()}\n")
        handle.flush()
        self._lock_file = handle

    async def run(self, stop: asyncio.Event | None = None) -> None:
        """Schedule matches until ``stop`` is set (or forever)."""
        stop = stop or asyncio.Event()
        checker = asyncio.create_task(self._check_keys(stop))
        try:
            while not stop.is_set():
                if not self.paused:
                    self.schedule()
                self._wake.clear()
                waits = {asyncio.ensure_future(self._wake.wait()), asyncio.ensure_future(stop.wait())}
                await asyncio.wait(waits, timeout=SCHEDULE_EVERY_S, return_when=asyncio.FIRST_COMPLETED)
                for task in waits:
                    task.cancel()
        finally:
            checker.cancel()

    async def stop(self, grace_s: float = 1.0) -> None:
        """Stop the matches being played (their finished hands are recorded; they end as interrupted) and stop
        serving."""
        self._stopping = True
        for live in self.live.values():
            live.control.stop.set()
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=30)
        for match_id in self.ledger.interrupt_running(self.config.name, MatchKind.LEAGUE):  # a task cut short
            log.warning("match %s ends as interrupted (its finished hands stand)", match_id)
        await self.server.stop(grace_s)
        if self._lock_file is not None:
            self._lock_file.close()
            self._lock_file = None

    def wake(self) -> None:
        """Something changed (a bot joined or left, a match ended): look for matches to start."""
        self._wake.set()

    # ------------------------------------------------------------------ keys

    def resolve(self, key: str) -> Endpoint | None:
        """The endpoint of the member a Join's key belongs to (created when its bot first connects), None if the
        key is invalid."""
        bot = self.registry.authenticate(key)
        if bot is None:
            return None
        member = self.members.get(bot.name)
        if member is None:
            member = self.members[bot.name] = Member(bot, self.wake, self.admit)
            member.matches, last = self.played.get(bot.name, (0, 0.0))
            member.last_played = last or None
        member.owner = bot.owner
        member.key_issued_at = bot.key_issued_at
        return member.endpoint

    async def _check_keys(self, stop: asyncio.Event) -> None:
        """End the streams of bots whose key was revoked or rotated since they joined (``arena bots revoke``
        writes the database from another process)."""
        while not stop.is_set():
            await asyncio.sleep(CHECK_KEYS_EVERY_S)
            self.check_keys()

    def check_keys(self) -> None:
        """One look at the registry for revoked or replaced keys of connected bots (a hosted bot whose key is revoked
        is scheduled no more)."""
        for name in list(self.residents):
            try:
                active = self.registry.get(name).active
            except RegistryError:
                active = False
            if not active:
                log.warning("%s's key was revoked: its hosted version is scheduled no more", name)
                del self.residents[name]
        for member in list(self.members.values()):
            if not member.live:
                continue
            try:
                bot = self.registry.get(member.name)
            except RegistryError:
                bot = None
            if bot is None or not bot.active:
                member.end("UNAUTHENTICATED", "your key was revoked: stream closed")
            elif bot.key_issued_at != member.key_issued_at:
                member.end("UNAUTHENTICATED", "your key was replaced (arena bots rotate): join with the new one")

    def admit(self, member: Member, join: bot_pb2.Join) -> Refusal | None:
        """Why a stream may not join for ``member`` now (error code, gRPC status, words), or None."""
        if member.name in self.hosted:
            return (bot_pb2.ERROR_CODE_BAD_TOKEN, "FAILED_PRECONDITION",
                    f"{member.name} is a hosted bot: the league runs the version submitted with arena bots submit, "
                    "and its key joins no stream; submit a new version instead")
        if not member.joins.take():
            return (bot_pb2.ERROR_CODE_RATE_LIMITED, "RESOURCE_EXHAUSTED",
                    f"more than {JOIN_BURST} joins with this key in a row (at most {JOINS_PER_MINUTE:g} a minute): "
                    f"refused; wait {member.joins.wait_s():.0f} s before joining again")
        key = bot_key(member.name, join.bot_version)
        if self.frozen and key not in self.ratings.online.current and join.bot_version != member.version:
            return (bot_pb2.ERROR_CODE_BAD_TOKEN, "FAILED_PRECONDITION",
                    f"the ladder is frozen for the finals: version {join.bot_version!r} of {member.name} cannot "
                    "join until it is unfrozen (a version that has played may)")
        return None

    def freeze(self, frozen: bool) -> None:
        """Freeze or unfreeze the ladder (see ``frozen``)."""
        self.frozen = frozen

    def kick(self, name: str, reason: str = "kicked by the league's admin") -> bool:
        """End a bot's stream now (it may join again)."""
        member = self.members.get(name)
        if member is None or not member.live:
            return False
        member.end("PERMISSION_DENIED", reason)
        return True

    # ------------------------------------------------------------------ hosted bots

    def host_version(self, submission: Submission) -> Resident | None:
        """Make ``submission`` the version its bot plays from now on (its folder unpacked from the store), unless it
        is retired or its key revoked; the matches the bot is in finish with the version they began with."""
        self.hosted.add(submission.bot)
        self.residents.pop(submission.bot, None)
        if not submission.active:
            return None
        try:
            bot = self.registry.get(submission.bot)
            folder = self.store.folder(submission.sha256)
        except (RegistryError, StoreError, ArchiveRefused, OSError) as exc:
            log.error("hosted bot %s version %s cannot be played: %s", submission.bot, submission.version, exc)
            return None
        if not bot.active:
            return None
        resident = self.residents[bot.name] = Resident(submission, bot.owner, folder)
        resident.matches, last = self.played.get(bot.name, (0, 0.0))
        resident.last_played = last or None
        self.wake()
        return resident

    def _count_failures(self, result: MatchResult, residents: list[Resident | None]) -> None:
        """Count each hosted bot's failure in a match against its version; retire the versions that failed too
        often (the league goes on without them)."""
        if result.reason is MatchStatus.INTERRUPTED:  # the host stopped it: nobody's fault
            return
        retire_after = self.config.submissions.retire_after
        for resident, bot in zip(residents, result.results, strict=True):
            if resident is None or bot.failure is None:
                continue
            now = submissions.record_failure(self.db, resident.name, resident.version, bot.failure, retire_after)
            log.warning("hosted bot %s@%s failed in match %s: %s", resident.name, resident.version, result.match_id,
                        bot.failure)
            if now is not None and not now.active:
                log.warning("hosted bot %s@%s is retired: %s", resident.name, resident.version, now.retired_reason)
                current = self.residents.get(resident.name)
                if current is not None and current.version == resident.version:
                    del self.residents[resident.name]

    # ------------------------------------------------------------------ matchmaking

    def candidates(self) -> list[Candidate]:
        """The connected and the hosted bots, as the matchmaker sees them."""
        most = self.config.matches_per_bot
        out = []
        for member in self.members.values():
            if not member.live or member.name in self.hosted:
                continue
            rating = self.ratings.rating(bot_key(member.name, member.version))
            out.append(Candidate(member.name, member.owner, rating.mu, rating.sigma, member.free(most),
                                 member.waiting_since, member.last_played, member.matches))
        for resident in self.residents.values():  # a hosted bot: one match at a time, whatever ``matches_per_bot``
            # says (its matches among hosted bots are duplicate, and its process in another match, alive across both
            # rotations of one, could relay that one's first half to its second: README, "Duplicate without memory")
            rating = self.ratings.rating(bot_key(resident.name, resident.version))
            out.append(Candidate(resident.name, resident.owner, rating.mu, rating.sigma, resident.free(1),
                                 resident.waiting_since, resident.last_played, resident.matches))
        return out

    def rules(self) -> Rules:
        making = self.config.matchmaking
        return Rules(self.config.seats, making.window, making.widen_per_minute, making.same_owner, making.rest_s)

    def schedule(self) -> list[str]:
        """Start every match the matchmaker finds room for now; their ids."""
        if self._stopping:
            return []
        budget = self.config.matches_at_once - len(self.live)
        if budget <= 0:
            return []
        started = []
        for table in pick(self.candidates(), self.rules(), time.time(), budget):
            started.append(self.start_match(table))
        return started

    # ------------------------------------------------------------------ matches

    def start_match(self, names: tuple[str, ...]) -> str:
        """Create, record and start a match between connected members and hosted bots (its task runs it): dealt in
        duplicate when every bot is hosted, fresh otherwise (see the module)."""
        self._count += 1
        match_id = f"{self.config.name}-{self._count:06d}"
        while queries.match_info(self.db, match_id) is not None:  # an id taken by an earlier run
            self._count += 1
            match_id = f"{self.config.name}-{self._count:06d}"
        residents = [self.residents.get(name) for name in names]
        duplicate = all(r is not None for r in residents)
        settings = self.config.match.replace(duplicate=duplicate)
        spec = dataclasses.replace(settings.spec(match_id, secrets.token_hex(32)), table_id=match_id)
        live = self.live[match_id] = LiveMatch(names, spec.hands_planned(len(names)), duplicate=duplicate)
        for resident in residents:
            if resident is not None:
                resident.playing += 1
        if duplicate:
            bots = tuple(r.bot() for r in residents if r is not None)
            run = MatchRun(self.ledger, MatchJob(spec, bots, sandbox=self.sandbox), MatchKind.LEAGUE,
                           self.config.name)

            def play() -> Awaitable[MatchResult]:
                return run.play(self.executor, on_hand=live.hand, control=live.control)

            self._start(match_id, names, run, play, live, residents, [], [])
        else:
            self._start_seated(match_id, names, spec, live, residents)
        log.info("match %s: %s (%s)", match_id, " vs ".join(names), "duplicate" if duplicate else "fresh deals")
        return match_id

    def _start_seated(self, match_id: str, names: tuple[str, ...], spec: MatchSpec, live: LiveMatch,
                      residents: list[Resident | None]) -> None:
        """A table with a remote bot, played on the host's own server: the members' seats over their streams, the
        hosted bots' seats joined with a token by their processes, started here on the server's local socket."""
        members = [self.members[name] if resident is None else None for name, resident in zip(names, residents,
                                                                                              strict=True)]
        versions = [r.version if r is not None else m.version if m is not None else ""
                    for m, r in zip(members, residents, strict=True)]
        [seats] = remote_seats(spec, names, endpoints=[m.endpoint if m is not None else None for m in members])
        bots = tuple(r.bot() if r is not None else BotSpec(n, "", v)
                     for n, v, r in zip(names, versions, residents, strict=True))
        run = MatchRun(self.ledger, MatchJob(spec, bots), MatchKind.LEAGUE, self.config.name)
        for member, seat in zip(members, seats, strict=True):
            if member is not None:
                member.seats.add(seat)
        logs = scratch.scratch_folder("arena-league-bots-") if any(residents) else None
        policy = self.sandbox.hiding(*self.ledger.hidden)
        local = [r.bot() if r is not None else None for r in residents]

        def seated(match: Match) -> None:  # the match made: its seats served, and played by the members' streams
            live.match = match
            self.server.add_match(match, seats)
            self.server.directory.set_status(match_id, arena_pb2.MATCH_STATUS_RUNNING)
            for member, seat in zip(members, seats, strict=True):
                if member is not None:
                    member.endpoint.add(seat)  # its stream (or the next that joins with its key) is sent the Welcome
                else:
                    self.server.add_seat(seat)  # a hosted bot's process joins with the seat's token

        def processes(match: Match) -> LocalBots:
            return LocalBots(MatchSetup(self.server, [seats], match), local, logs, None, policy)

        executor = SeatedExecutor(seats, [self.server.directory.sink(match_id)], seated, MatchStatus.INTERRUPTED,
                                  processes if any(residents) else None)

        def play() -> Awaitable[MatchResult]:
            return run.play(executor, control=live.control)

        self._start(match_id, names, run, play, live, residents, members, seats, logs)

    def _start(self, match_id: str, names: tuple[str, ...], run: MatchRun,
               play: Callable[[], Awaitable[MatchResult]], live: LiveMatch, residents: list[Resident | None],
               members: list[Member | None], seats: list[RemoteSeat], logs: Path | None = None) -> None:
        task = asyncio.create_task(self._play(match_id, run, play, live, residents, members, seats, logs))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _play(self, match_id: str, run: MatchRun, play: Callable[[], Awaitable[MatchResult]],
                    live: LiveMatch, residents: list[Resident | None], members: list[Member | None],
                    seats: list[RemoteSeat], logs: Path | None) -> None:
        directory = self.server.directory
        try:
            result = await play()
        except Exception as exc:
            if live.match is not None:
                directory.set_status(match_id, arena_pb2.MATCH_STATUS_ABORTED)
            if not self._stopping:
                log.exception("match %s failed", match_id)
                raise
            log.warning("match %s stopped with the host: %s", match_id, exc)  # a Ray task cancelled: it ends as
            return  # interrupted (LeagueHost.stop)
        finally:
            now = time.time()
            for member, seat in zip(members, seats, strict=True):  # the host's own server's seats, if it played
                if member is not None:
                    member.seats.discard(seat)
                    member.endpoint.release(seat)
                else:
                    self.server.remove_seat(seat)  # a hosted bot's token
            for player in (*members, *residents):
                if player is None:
                    continue
                if isinstance(player, Resident):
                    player.playing -= 1
                player.last_played = now
                player.waiting_since = now
                player.matches += 1
            self.live.pop(match_id, None)
            if logs is not None:
                scratch.remove(logs)
        result = run.finish(result).result
        if live.match is not None:
            directory.set_status(match_id, arena_pb2.MATCH_STATUS_FINISHED if result.reason.over
                                 else arena_pb2.MATCH_STATUS_ABORTED)
        if result.reason.over:
            for game in rating_games(load_sessions(self.db, [match_id]), self.config.rating_rules):
                self.ratings.update(game)
            self.rated += 1
        self._count_failures(result, residents)
        log.info("match %s ended (%s): %s", match_id, result.reason.value,
                 ", ".join(f"{r.name} {r.net:+d}" for r in result.results))
        for listener in self.on_match_end:
            listener(result)
        self.wake()
