"""Tournaments: a round-robin of duplicate matches (every pairing heads-up, or every seated group multi-way),
run in parallel by a match executor (here, or as Ray tasks across a cluster: arena.runner.executor), recorded hand by
hand by the one writer here, and resumable after a crash or Ctrl-C of this process, of a worker or of a node.

Each match's seed is derived from the tournament's seed and the match's id, so a resumed tournament deals
exactly the cards an uninterrupted one would; with deterministic bots it ends with exactly the same results.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import logging
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.deals import derive_seed
from arena.engine import TableConfig
from arena.referee import ClockPolicy, GameRules, HandRecord, MatchKind, MatchResult, MatchSpec
from arena.referee.game import RESET
from arena.runner.acpc import AcpcSeatError, check_acpc_seats
from arena.runner.bots import BotSpec, BotSpecError
from arena.runner.executor import (
    ExecutorKind,
    LocalExecutor,
    MatchExecutor,
    MatchJob,
    WorkerLost,
    executor_kind,
)
from arena.runner.ledger import LedgerRefused, MatchLedger
from arena.runner.play import MatchRun
from arena.runner.sandbox import SandboxPolicy
from arena.runner.seed_source import SeedError, choose_seed
from arena.runner.settings import (
    MatchSettings,
    SettingsError,
    check_seats,
    from_mapping,
    read_toml,
    with_acpc_game,
)
from arena.text import unknown_key

log = logging.getLogger("arena.runner")

REPLAYS = 2  # times a match whose worker or node died is played again from its first lost hand, in the same run


class TournamentError(ValueError):
    """A tournament configuration that cannot be run, or a conflict with what the database already holds."""


@dataclass(frozen=True, slots=True)
class TournamentConfig:
    """What ``arena tournament CONFIG.toml`` reads (see ``from_toml`` for the file's keys)."""

    name: str
    bots: tuple[BotSpec, ...]
    seed: str = ""  # filled in by ``with_seed`` before play; never read from the tournament file itself
    hands: int = 200
    seats: int = 2
    config: TableConfig = field(default_factory=TableConfig)
    starting_stack: int = 20000
    policy: ClockPolicy = field(default_factory=ClockPolicy)
    workers: int | None = None  # matches at once; None: the executor's default (2 here, a CPU each on Ray)
    executor: ExecutorKind = ExecutorKind.LOCAL
    all_orders: bool = False
    tables: int = 1
    cwd: Path = field(default_factory=Path.cwd)
    seed_file: Path | None = None
    source: Path | None = None  # the tournament file, hidden from the bots' sandboxes
    sandbox: SandboxPolicy = field(default_factory=SandboxPolicy)
    game: GameRules = RESET  # a cash game or a freezeout instead of the reset game (arena.referee.game)

    def with_seed(self, ledger: MatchLedger) -> TournamentConfig:
        """This config with its seed: from ``seed_file``, else ``ARENA_SEED``, else the one the ledger keeps from an
        earlier start, else a fresh secret one (kept secret in the ledger for a resume)."""
        key = self.seed_key
        try:
            seed = choose_seed(self.seed_file, ledger.seed(key))
        except SeedError as exc:
            raise TournamentError(str(exc)) from None
        ledger.keep_seed(key, seed)
        return dataclasses.replace(self, seed=seed)

    @property
    def seed_key(self) -> str:
        """Where the tournament's seed is kept (the vault until every match is over, then the database)."""
        return f"tournament:{self.name}"

    @property
    def policy_for_bots(self) -> SandboxPolicy:
        """The sandbox policy, hiding the tournament's own files from the bots."""
        return self.sandbox.hiding(self.source, self.seed_file)

    @classmethod
    def from_toml(cls, path: str | Path) -> TournamentConfig:
        """Read a tournament file: the keys of ``TOURNAMENT_KEYS`` and every match setting of arena.runner.settings
        (``hands``, ``structure``, ``stakes``..., ``[clock]``, ``[sandbox]``; the README lists them all). Bot
        commands run from the file's folder."""
        path = Path(path)
        data = read_toml(path, TournamentError)
        config = cls.from_dict(data, path.resolve().parent, str(path))
        return dataclasses.replace(config, source=path.resolve())

    @classmethod
    def from_dict(cls, data: dict[str, Any], cwd: Path, where: str = "config") -> TournamentConfig:
        """Build a config from parsed TOML data; every mistake is a ``TournamentError`` naming the key (and rule)."""
        if "seed" in data:
            raise TournamentError(
                f"{where}: the seed must not be written in the tournament file (bots and anyone who sees the file "
                "could deal every hand): put it in a file of its own and set seed_file = \"PATH\", or set ARENA_SEED"
            )
        try:
            settings = from_mapping(data, where, TOURNAMENT_DEFAULTS, other_keys=TOURNAMENT_KEYS)
            seats = check_seats(data.get("seats", 2), f"{where}: seats")
            settings = with_acpc_game(settings, cwd, seats, TOURNAMENT_DEFAULTS)
        except SettingsError as exc:
            raise TournamentError(str(exc)) from None
        bots = tuple(_bot(b, i, where) for i, b in enumerate(_list(data.get("bots", []), f"{where}: bots")))
        if len(bots) < seats:
            raise TournamentError(f"{where}: {len(bots)} [[bots]] cannot fill tables of {seats} seats")
        if len({b.name for b in bots}) != len(bots):
            raise TournamentError(f"{where}: bot names must be different")
        name = data.get("name")
        if not isinstance(name, str) or not name.strip():
            raise TournamentError(f'{where}: a tournament needs a name (name = "spring-cup")')
        workers = data.get("workers")
        if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                    or not 1 <= workers <= MAX_WORKERS):
            raise TournamentError(f"{where}: workers = {workers!r}: expected a whole number from 1 to {MAX_WORKERS}")
        try:
            executor = executor_kind(data.get("executor", "local"), f"{where}: executor")
        except ValueError as exc:
            raise TournamentError(str(exc)) from None
        seed_file = data.get("seed_file")
        if seed_file is not None and not isinstance(seed_file, str):
            raise TournamentError(f"{where}: seed_file = {seed_file!r}: expected a path")
        config = settings.table_config()
        try:
            settings.check_game(seats)
            check_acpc_seats(bots, config, settings.starting_stack(), settings.game_rules(), seats)
        except (SettingsError, AcpcSeatError) as exc:
            raise TournamentError(f"{where}: {exc}" if isinstance(exc, AcpcSeatError) else str(exc)) from None
        binds = tuple((cwd / b).resolve() for b in settings.binds)
        for bind in binds:
            if not bind.exists():
                raise TournamentError(f"{where}: sandbox.binds: {bind} does not exist")
        return cls(
            name=name, bots=bots, seed_file=(cwd / seed_file).resolve() if seed_file else None, hands=settings.hands,
            seats=seats, config=config, starting_stack=settings.starting_stack(), policy=settings.clock(),
            workers=workers, executor=executor, all_orders=settings.all_orders, tables=settings.tables, cwd=cwd,
            sandbox=settings.sandbox_policy(binds=binds), game=settings.game_rules(),
        )


TOURNAMENT_KEYS = ("name", "seed_file", "seats", "workers", "executor", "bots",
                   "ratings")  # [ratings]: what a rating game is, read by the results side (arena.ratings.settings)
MAX_WORKERS = 4096  # matches at once: a cluster's worth
TOURNAMENT_DEFAULTS = MatchSettings(hands=200)
BOT_KEYS = ("name", "command", "version", "acpc")


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise TournamentError(f"{where}: expected [[bots]] tables, each with a name and a command")
    return value


def _bot(entry: Any, index: int, where: str) -> BotSpec:
    """One [[bots]] table: name, command, an optional version and ``acpc = true`` for an ACPC client (its command
    is started as ``COMMAND HOST PORT`` behind the ACPC bridge), nothing else."""
    here = f"{where}: bots[{index}]"
    if not isinstance(entry, dict):
        raise TournamentError(f"{here}: expected a table with a name and a command")
    for key in entry:
        if key not in BOT_KEYS:
            raise TournamentError(unknown_key(here, key, BOT_KEYS, nearest=1))
    values = []
    for key in ("name", "command"):
        value = entry.get(key)
        if not isinstance(value, str) or not value.strip():
            raise TournamentError(f"{here}: needs a {key} (a non-empty string)")
        values.append(value.strip())
    version = entry.get("version", "")
    if not isinstance(version, str | int | float) or isinstance(version, bool):
        raise TournamentError(f"{here}: version = {version!r}: expected text such as \"1.0\"")
    acpc = entry.get("acpc", False)
    if not isinstance(acpc, bool):
        raise TournamentError(f"{here}: acpc = {acpc!r}: expected true (an ACPC client) or false")
    try:
        return BotSpec(values[0], values[1], str(version), acpc)
    except BotSpecError as exc:
        raise TournamentError(f"{here}: {exc}") from None


@dataclass(frozen=True, slots=True)
class ScheduledMatch:
    """One match of the round-robin."""

    index: int
    match_id: str
    bots: tuple[BotSpec, ...]
    spec: MatchSpec


def schedule(config: TournamentConfig) -> list[ScheduledMatch]:
    """Every group of ``seats`` bots plays one duplicate match (heads-up: every pairing)."""
    out = []
    for index, group in enumerate(itertools.combinations(config.bots, config.seats)):
        match_id = f"{config.name}/{index:03d}-" + "-".join(b.name for b in group)
        spec = MatchSpec(
            match_id=match_id, seed=derive_seed(config.seed, match_id), hands=config.hands, config=config.config,
            starting_stack=config.starting_stack, policy=config.policy, duplicate=True, all_orders=config.all_orders,
            tables=config.tables, game=config.game,
        )
        out.append(ScheduledMatch(index, match_id, tuple(group), spec))
    return out


@dataclass(slots=True)
class TournamentProgress:
    """Callbacks for a progress display: a hand finished, a match finished."""

    on_hand: Callable[[HandRecord], None] | None = None
    on_match: Callable[[ScheduledMatch, MatchResult | None], None] | None = None


async def run_tournament(
    config: TournamentConfig,
    ledger: MatchLedger,
    resume: bool = False,
    progress: TournamentProgress | None = None,
    log_dir: Path | None = None,
    executor: MatchExecutor | None = None,
) -> list[MatchResult]:
    """Play every scheduled match not yet over in the ``ledger`` with ``executor`` (here by default); a match cut
    short resumes at its first lost hand (its record verified first), and one whose worker died is played on from
    there (``REPLAYS`` times) or left for ``--resume``."""
    matches = schedule(config)
    if not config.seed:
        raise TournamentError("the tournament has no seed yet (TournamentConfig.with_seed gives it one)")
    known = [m for m in matches if ledger.status(m.match_id) is not None]
    if known and not resume:
        raise TournamentError(
            f"tournament {config.name!r} is already recorded ({len(known)} matches): use --resume to finish it"
        )
    for m in known:
        try:
            ledger.check(m.spec, m.bots)
        except LedgerRefused as exc:
            raise TournamentError(f"{exc}: not the same tournament (a resumed tournament keeps its seed, schedule "
                                  "and bots: restore the file, or use another database)") from None
    sandbox = config.policy_for_bots.hiding(*ledger.hidden, log_dir)
    progress = progress or TournamentProgress()
    executor = executor or LocalExecutor()
    limit = OneMatchABot(executor.matches_at_once(config.workers))
    results: list[MatchResult] = []
    lost: list[str] = []

    async def one(m: ScheduledMatch) -> None:
        status = ledger.status(m.match_id)
        if status is not None and status.over:
            if progress.on_match:
                progress.on_match(m, None)
            return
        async with limit.playing(bot.name for bot in m.bots):
            run = MatchRun(ledger, MatchJob(m.spec, m.bots, cwd=config.cwd, sandbox=sandbox, log_dir=log_dir),
                           MatchKind.TOURNAMENT, config.name, resume=status is not None)
            try:
                result = await run.play(executor, on_hand=progress.on_hand, replays=REPLAYS)
            except WorkerLost as exc:
                log.warning("%s; left for --resume", exc)
                lost.append(m.match_id)
                return
            result = run.finish(result).result
            results.append(result)
            if progress.on_match:
                progress.on_match(m, result)

    await asyncio.gather(*(one(m) for m in matches))
    if lost:
        raise MatchesLost(lost, results)
    statuses = [ledger.status(m.match_id) for m in matches]
    if all(status is not None and status.over for status in statuses):
        ledger.publish_seed(config.seed_key)  # every match is over: the tournament's seed is no secret any more
    return results


class OneMatchABot:
    """The tournament's matches at once: at most ``slots``, and no bot in two of them. A bot's process in one match,
    alive across both rotations of another match of its own, could hear that match's first half (by CPU contention,
    the page cache) and tell its second: the relay that would undo duplicate dealing (README, "Duplicate without
    memory", D1). A match whose bot plays waits; a later one whose bots are free starts meanwhile."""

    def __init__(self, slots: int) -> None:
        self.slots = slots
        self.running = 0
        self.busy: set[str] = set()
        self._changed = asyncio.Condition()

    @contextlib.asynccontextmanager
    async def playing(self, bots: Iterable[str]) -> AsyncIterator[None]:
        """Wait for a slot and for every one of ``bots`` to be free; hold them while the match plays."""
        names = set(bots)
        async with self._changed:
            await self._changed.wait_for(lambda: self.running < self.slots and not names & self.busy)
            self.running += 1
            self.busy |= names
        try:
            yield
        finally:
            async with self._changed:
                self.running -= 1
                self.busy -= names
                self._changed.notify_all()


class MatchesLost(RuntimeError):
    """Matches whose worker or node died more often than they are replayed: their hands so far are recorded, and
    ``--resume`` finishes them."""

    def __init__(self, match_ids: list[str], results: list[MatchResult]) -> None:
        super().__init__(f"{len(match_ids)} match(es) lost their worker {REPLAYS + 1} times: {', '.join(match_ids)}")
        self.match_ids = match_ids
        self.results = results


def hands_to_play(config: TournamentConfig, recorded: Callable[[str], int] | None = None) -> int:
    """Hands the tournament still has to play (for a progress bar; ``recorded``: a match's hands recorded)."""
    total = 0
    for m in schedule(config):
        hands = m.spec.hands_planned(len(m.bots))  # a game's: the most its games can last
        total += hands - (recorded(m.match_id) if recorded is not None else 0)
    return total


def matches_of(config: TournamentConfig) -> Sequence[str]:
    """The match ids of a tournament (to restrict a leaderboard to it)."""
    return [m.match_id for m in schedule(config)]
