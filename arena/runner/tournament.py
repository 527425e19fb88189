"""Tournaments: a round-robin of duplicate matches (every pairing heads-up, or every seated group multi-way),
run in parallel on local workers, recorded hand by hand, and resumable after a crash or Ctrl-C.

Each match's seed is derived from the tournament's seed and the match's id, so a resumed tournament deals
exactly the cards an uninterrupted one would; with deterministic bots it ends with exactly the same results.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.deals import derive_seed
from arena.engine import AnteMode, RuleError, Structure, TableConfig
from arena.records.db import Database
from arena.referee import ClockPolicy, HandRecord, MatchResult, MatchSpec, MatchStatus
from arena.runner.bots import BotSpec
from arena.runner.remote_match import run_local_match
from arena.runner.sandbox import SandboxPolicy
from arena.runner.seed_source import SeedError, choose_seed


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
    workers: int = 2
    all_orders: bool = False
    cwd: Path = field(default_factory=Path.cwd)
    seed_file: Path | None = None
    source: Path | None = None  # the tournament file, hidden from the bots' sandboxes
    sandbox: SandboxPolicy = field(default_factory=SandboxPolicy)

    def with_seed(self, db: Database) -> TournamentConfig:
        """This config with its seed: from ``seed_file``, else ``ARENA_SEED``, else the one kept in ``db``'s vault
        from an earlier start, else a fresh secret one (kept in the vault for a resume)."""
        key = f"tournament:{self.name}"
        try:
            seed = choose_seed(self.seed_file, db.vault.get(key))
        except SeedError as exc:
            raise TournamentError(str(exc)) from None
        db.vault.put(key, seed)
        return dataclasses.replace(self, seed=seed)

    @property
    def policy_for_bots(self) -> SandboxPolicy:
        """The sandbox policy, hiding the tournament's own files from the bots."""
        return self.sandbox.hiding(self.source, self.seed_file)

    @classmethod
    def from_toml(cls, path: str | Path) -> TournamentConfig:
        """Read a config file::

            name = "spring-cup"          # identifies the tournament in the database
            seed_file = "cup.seed"       # optional: the seed (fixes every deal), in a file of its own; else the
                                         # environment's ARENA_SEED, else a fresh secret seed
            hands = 200                  # per match (rounded up to whole duplicate sets)
            seats = 2                    # 2: every pairing heads-up; K: every group of K bots
            structure = "nl"             # nl, pl or fl (R7)
            stakes = "50/100"            # small/big blind (R3.1)
            ante = 0                     # per player; big_blind_ante = true for the BB ante (R3.2)
            stack = 20000                # reset every hand (R11.2)
            workers = 2                  # matches played at once
            [clock]                      # optional: per_action_ms, time_bank_ms, max_retries, max_violations
            [[bots]]                     # at least `seats` of them
            name = "equity"
            command = "python sample_bots/python/equity_bot.py"   # run from the config file's folder
            version = "1.0"              # optional
        """
        path = Path(path)
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise TournamentError(f"{path}: cannot read: {exc}") from None
        except tomllib.TOMLDecodeError as exc:
            raise TournamentError(f"{path}: not valid TOML: {exc}") from None
        config = cls.from_dict(data, path.resolve().parent, str(path))
        return dataclasses.replace(config, source=path.resolve())

    @classmethod
    def from_dict(cls, data: dict[str, Any], cwd: Path, where: str = "config") -> TournamentConfig:
        """Build a config from parsed TOML data; every mistake is a ``TournamentError`` naming the key."""
        try:
            bots = tuple(
                BotSpec(str(b["name"]), str(b["command"]), str(b.get("version", ""))) for b in data.get("bots", [])
            )
        except (KeyError, TypeError):
            raise TournamentError(f"{where}: every [[bots]] needs a name and a command") from None
        seats = int(data.get("seats", 2))
        if len(bots) < seats or seats < 2:
            raise TournamentError(f"{where}: {len(bots)} bots cannot fill tables of {seats} seats (at least 2)")
        if len({b.name for b in bots}) != len(bots):
            raise TournamentError(f"{where}: bot names must be different")
        small, _, big = str(data.get("stakes", "50/100")).partition("/")
        ante = int(data.get("ante", 0))
        mode = AnteMode.NONE if not ante else (AnteMode.BIG_BLIND if data.get("big_blind_ante") else AnteMode.EACH)
        try:
            table = TableConfig(int(small), int(big or 0), Structure(data.get("structure", "nl")), ante, mode,
                                reveal_all=not data.get("muck", False))
            clock = ClockPolicy(**data.get("clock", {}))
        except (RuleError, ValueError, TypeError) as exc:
            raise TournamentError(f"{where}: {exc}") from None
        if "seed" in data:
            raise TournamentError(
                f"{where}: the seed must not be written in the tournament file (bots and anyone who sees the file "
                "could deal every hand): put it in a file of its own and set seed_file = \"PATH\", or set ARENA_SEED"
            )
        if "name" not in data:
            raise TournamentError(f"{where}: a tournament needs a name")
        seed_file = (cwd / str(data["seed_file"])).resolve() if "seed_file" in data else None
        return cls(
            name=str(data["name"]), bots=bots, seed_file=seed_file, hands=int(data.get("hands", 200)),
            seats=seats, config=table, starting_stack=int(data.get("stack", 200 * table.big_blind)), policy=clock,
            workers=max(1, int(data.get("workers", 2))), all_orders=bool(data.get("all_orders", False)), cwd=cwd,
        )


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
    db: Database,
    resume: bool = False,
    progress: TournamentProgress | None = None,
    log_dir: Path | None = None,
) -> list[MatchResult]:
    """Play every scheduled match not yet completed in ``db``; a match cut short resumes at its first lost hand."""
    matches = schedule(config)
    if not config.seed:
        raise TournamentError("the tournament has no seed yet (TournamentConfig.with_seed gives it one)")
    known = [m for m in matches if db.match_row(m.match_id) is not None]
    if known and not resume:
        raise TournamentError(
            f"tournament {config.name!r} is already in {db.path} ({len(known)} matches): use --resume to finish it"
        )
    for m in known:
        row = db.match_row(m.match_id)
        assert row is not None
        if row["commitment"] != m.spec.commitment:
            raise TournamentError(f"{m.match_id} in {db.path} was dealt from another seed: not the same tournament")
    sandbox = config.policy_for_bots.hiding(db.path, *db.vault.files, log_dir)
    progress = progress or TournamentProgress()
    limit = asyncio.Semaphore(config.workers)
    results: list[MatchResult] = []

    async def one(m: ScheduledMatch) -> None:
        row = db.match_row(m.match_id)
        if row is not None and MatchStatus(row["status"]).over:
            if progress.on_match:
                progress.on_match(m, None)
            return
        async with limit:
            total = len(m.spec.plan(len(m.bots)))
            db.start_match(m.spec, [(b.name, b.version, b.command) for b in m.bots], total, kind="tournament",
                           tournament=config.name)
            result = await run_local_match(m.spec, m.bots, [db], log_dir=log_dir, cwd=config.cwd,
                                           on_hand=progress.on_hand, recorded=db.recorded_hands(m.match_id),
                                           sandbox=sandbox)
            db.finish_match(result)
            results.append(result)
            if progress.on_match:
                progress.on_match(m, result)

    await asyncio.gather(*(one(m) for m in matches))
    return results


def hands_to_play(config: TournamentConfig, db: Database | None = None) -> int:
    """Hands the tournament still has to play (for a progress bar)."""
    total = 0
    for m in schedule(config):
        hands = len(m.spec.plan(len(m.bots)))
        total += hands - (db.hands_recorded(m.match_id) if db is not None else 0)
    return total


def matches_of(config: TournamentConfig) -> Sequence[str]:
    """The match ids of a tournament (to restrict a leaderboard to it)."""
    return [m.match_id for m in schedule(config)]
