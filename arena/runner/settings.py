"""One typed schema for a match's settings (table, clock, game, sandbox), read alike from command-line flags and from
TOML files. Every setting has one key (``structure``, ``clock.per_action_ms``), one flag (``--structure``,
``--per-action-ms``), one parser that names the key and the rule when a value is wrong, and one line of help; an
unknown key is refused with the nearest known ones.
"""

from __future__ import annotations

import dataclasses
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.adapters.acpc.gamedef import AcpcGameError, read_game, table_of
from arena.engine import AnteMode, RuleError, Structure, TableConfig
from arena.engine.config import MAX_SEATS, MIN_SEATS
from arena.referee import ClockPolicy, GameKind, GameRules, Level, MatchSpec
from arena.referee.game import DEFAULT_HAND_LIMIT, DEFAULT_LEVEL_HANDS
from arena.runner.sandbox import SandboxLimits, SandboxPolicy
from arena.text import unknown_key

MAX_TABLES = 1024  # tables at once per lane: far more than any bot connection plays usefully
MAX_HANDS = 1_000_000  # far more than any match needs, and few enough that its schedule fits in memory
MAX_GAMES = 100_000


class SettingsError(ValueError):
    """A setting that cannot be used: the message names the key (or flag) and, where there is one, the rule."""


@dataclass(frozen=True, slots=True)
class Setting:
    """One setting: where it lives in TOML (``table.key``), its flag, how a value is read, and what it means."""

    key: str
    attr: str
    parse: Callable[[Any], Any]
    help: str
    rule: str = ""
    flag_type: str = "value"  # value | flag (a boolean switch) | many (a repeatable value)
    cli: str = ""  # the flag, when it is not the key's last part dashed (``--bb-ante``, ``--muck/--reveal-all``)

    @property
    def flag(self) -> str:
        """The command-line flag (a click declaration: ``--x`` or ``--x/--no-x``)."""
        return self.cli or "--" + self.key.rsplit(".", 1)[-1].replace("_", "-")

    def read(self, value: Any, where: str) -> Any:
        """The value, checked; a ``SettingsError`` naming ``where`` (a key or a flag) and the rule if it is wrong."""
        try:
            return self.parse(value)
        except (ValueError, TypeError) as exc:
            rule = f" ({self.rule})" if self.rule else ""
            raise SettingsError(f"{where} = {value!r}: {exc}{rule}") from None


def _integer(low: int | None = None, high: int | None = None) -> Callable[[Any], int]:
    def parse(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, str) and value.strip().lstrip("-").isdigit():
                value = int(value)
            else:
                raise ValueError("expected a whole number")
        if low is not None and value < low:
            raise ValueError(f"must be at least {low:,}")
        if high is not None and value > high:
            raise ValueError(f"must be at most {high:,}")
        return int(value)

    return parse


integer = _integer  # the parsers other schemas share (arena.ratings.settings)


def number(low: float) -> Callable[[Any], float]:
    """A parser of a real number of at least ``low``."""
    def parse(value: Any) -> float:
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                raise ValueError("expected a number") from None
        if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value < float("inf"):
            raise ValueError(f"expected a number of at least {low:g}")
        return float(value)

    return parse


def _number(low: float = 0.0) -> Callable[[Any], float]:
    def parse(value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise ValueError("expected a number")
        try:
            number = float(value)
        except ValueError:
            raise ValueError("expected a number") from None
        if not number >= low or number == float("inf"):
            raise ValueError(f"must be a finite number, at least {low:g}")
        return number

    return parse


def _boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false", "yes", "no", "1", "0"):
        return value.lower() in ("true", "yes", "1")
    raise ValueError("expected true or false")


def _structure(value: Any) -> Structure:
    names = {s.value: s for s in Structure}
    if not isinstance(value, str) or value.lower() not in names:
        raise ValueError("expected one of nl (no-limit), pl (pot-limit), fl (fixed-limit)")
    return names[value.lower()]


def _stakes(value: Any) -> tuple[int, int]:
    if not isinstance(value, str):
        raise ValueError('expected "SMALL/BIG", e.g. "50/100"')
    small, sep, big = value.partition("/")
    if not sep or not small.strip().isdigit() or not big.strip().isdigit():
        raise ValueError('expected "SMALL/BIG" in whole chips, e.g. "50/100"')
    return int(small), int(big)


def _game(value: Any) -> GameKind:
    names = {k.value: k for k in GameKind}
    if not isinstance(value, str) or value.lower() not in names:
        raise ValueError("expected one of reset (stacks reset every hand), cash (stacks carry over, R11.3), "
                         "freezeout (rising blinds until one player has every chip, R11.4)")
    return names[value.lower()]


def _levels(value: Any) -> tuple[Level, ...]:
    """A blind schedule: a list of "SMALL/BIG[/ANTE]" (TOML), or the same separated by commas (a flag)."""
    if isinstance(value, str):
        value = [v for v in value.split(",") if v.strip()]
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ValueError('expected a list of levels such as ["50/100", "100/200", "200/400/50"]')
    try:
        return tuple(Level.parse(v) for v in value)
    except RuleError as exc:
        raise ValueError(str(exc)) from None


def _buy_in(value: Any) -> tuple[int, int]:
    if not isinstance(value, str):
        raise ValueError('expected "MIN..MAX" in chips, e.g. "4000..20000"')
    low, sep, high = value.partition("..")
    if not sep or not low.strip().isdigit() or not high.strip().isdigit():
        raise ValueError('expected "MIN..MAX" in whole chips, e.g. "4000..20000"')
    if not 0 < int(low) <= int(high):
        raise ValueError("expected 0 < MIN <= MAX")
    return int(low), int(high)


def _hands_list(value: Any) -> tuple[int, ...]:
    """Hands per participant, in participant order: a list (TOML) or numbers separated by commas (a flag)."""
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
        if not all(v.isdigit() for v in value):
            raise ValueError("expected whole numbers of hands separated by commas, e.g. 0,0,10")
        value = [int(v) for v in value]
    if not isinstance(value, list | tuple) or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0
                                                      for v in value):
        raise ValueError("expected a list of hands (whole numbers, 0 or more), one per bot in order")
    return tuple(value)


def _file(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError("expected the path of a file")
    return value.strip()


def _paths(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ValueError("expected a path or a list of paths")


SETTINGS: tuple[Setting, ...] = (
    Setting("game", "game", _game, "The game: reset, cash or freezeout.", "R11.2-R11.4"),
    Setting("hands", "hands", _integer(1, MAX_HANDS), "Hands to play (reset game: rounded up to whole duplicate "
            "sets; cash game: hands per game; a freezeout plays until one player has every chip)."),
    Setting("games", "games", _integer(1, MAX_GAMES), "Cash game or freezeout: games per match, each with its own "
            "decks (and, duplicate, played once per seat rotation).", "R11.5"),
    Setting("freezeout.levels", "levels", _levels, "Freezeout blind levels, SMALL/BIG[/ANTE] each (a list in TOML, "
            "commas on the command line); after the last the blinds keep doubling (default: the stakes and ante, "
            "doubling every level).", "R11.4"),
    Setting("freezeout.level_hands", "level_hands", _integer(1, MAX_HANDS), "Freezeout: hands per blind level.",
            "R11.4"),
    Setting("freezeout.hand_limit", "hand_limit", _integer(1, MAX_HANDS), "Freezeout: the most hands a game lasts "
            "(a guard; the players left are then placed by their stacks).", "R11.4"),
    Setting("cash.buy_in", "buy_in", _buy_in, "Cash game: the buy-in range MIN..MAX in chips; every buy-in and "
            "re-buy is the starting stack, inside it (default: a fifth of the stack..the stack).", "R11.1"),
    Setting("cash.rebuy", "rebuy", _boolean, "Cash game: a busted player re-buys (else it leaves).", "R11.3",
            "flag", "--rebuy/--no-rebuy"),
    Setting("cash.join_at", "join_at", _hands_list, "Cash game: the hand each bot sits down before, in bot order "
            "(0: from the start; later: it posts the entry blind).", "R2.4"),
    Setting("cash.leave_at", "leave_at", _hands_list, "Cash game: the hand each bot leaves before with its stack, "
            "in bot order (0: never).", "R11.3"),
    Setting("acpc_game", "acpc_game", _file, "The table from an ACPC game definition file (structure, blinds, stack, "
            "limit bets and cap); a definition the arena cannot play is refused naming its line."),
    Setting("structure", "structure", _structure, "Betting structure: nl, pl or fl.", "R7"),
    Setting("stakes", "stakes", _stakes, "Small/big blind, e.g. 50/100.", "R3.1"),
    Setting("ante", "ante", _integer(0), "Ante per player (or for the table with big_blind_ante).", "R3.2"),
    Setting("big_blind_ante", "big_blind_ante", _boolean, "The big blind posts the ante for the table.", "R3.2",
            "flag", "--bb-ante/--each-ante"),
    Setting("stack", "stack", _integer(1), "Starting stack: every hand's in the reset game, every player's first in "
            "a freezeout, the buy-in of a cash game (default: 200 big blinds).", "R11.2"),
    Setting("small_bet", "small_bet", _integer(0), "Fixed-limit small bet (default: the big blind).", "R7.6"),
    Setting("big_bet", "big_bet", _integer(0), "Fixed-limit big bet (default: twice the small bet).", "R7.6"),
    Setting("raise_cap", "raise_cap", _integer(1, 100), "Fixed-limit bets per street: the bet and its raises.",
            "R7.6"),
    Setting("uncapped_heads_up", "uncapped_heads_up", _boolean, "Fixed-limit: no raise cap when two are left.",
            "R7.6", "flag", "--uncapped-heads-up/--capped-heads-up"),
    Setting("chip", "chip", _integer(1), "The smallest chip, the unit split pots are divided in.", "R10.4"),
    Setting("muck", "muck", _boolean, "Hands that cannot win may be mucked at showdown (default: all revealed).",
            "R8.4", "flag", "--muck/--reveal-all"),
    Setting("duplicate", "duplicate", _boolean, "Replay every deal once per seat rotation (default: yes); local "
            "bots play the rotations one after the other, a fresh process each.", "R11.5", "flag",
            "--duplicate/--no-duplicate"),
    Setting("all_orders", "all_orders", _boolean, "Duplicate over all K! seat orders, not K rotations.", "R11.5",
            "flag", "--all-orders/--rotations"),
    Setting("tables", "tables", _integer(1, MAX_TABLES), "Tables each rotation is played on at once, side by side, "
            "each bot process hosting them on one connection (the records are the same as on one)."),
    Setting("clock.per_action_ms", "per_action_ms", _integer(1), "Milliseconds per action before the time bank."),
    Setting("clock.time_bank_ms", "time_bank_ms", _integer(0), "Milliseconds of time bank for the match."),
    Setting("clock.max_retries", "max_retries", _integer(0, 100), "Illegal actions refused per request before the "
            "time-out policy acts.", "R6.3"),
    Setting("clock.max_violations", "max_violations", _integer(0), "Violations that forfeit the match (0: never)."),
    Setting("clock.connect_timeout_ms", "connect_timeout_ms", _integer(1), "How long the bots are waited for."),
    Setting("clock.reconnect_grace_ms", "reconnect_grace_ms", _integer(0), "How long a dropped bot is waited for "
            "before the next hand."),
    Setting("sandbox.memory_mb", "memory_mb", _integer(0), "Memory per bot in MB, all its processes together (its "
            "cgroup), and address space per bot process (0: no limit).", cli="--bot-memory-mb"),
    Setting("sandbox.cpu_seconds", "cpu_seconds", _integer(0), "CPU seconds per bot process (0: no limit).",
            cli="--bot-cpu-s"),
    Setting("sandbox.processes", "processes", _integer(0), "Processes and threads per bot, all its processes "
            "together (0: no limit).", cli="--bot-processes"),
    Setting("sandbox.cpus", "cpus", _number(0), "CPU cores a bot's processes may use together (its cgroup; 0: no "
            "cap).", cli="--bot-cpus"),
    Setting("sandbox.open_files", "open_files", _integer(0), "Open files per bot process (0: no limit).",
            cli="--bot-open-files"),
    Setting("sandbox.binds", "binds", _paths, "Extra files or folders every bot may read (repeat).",
            flag_type="many", cli="--sandbox-bind"),
    Setting("sandbox.seccomp", "seccomp", _boolean, "Deny bots the system calls a poker bot never needs (ptrace, "
            "bpf, mount, memfd_create, sysinfo...): off only to run a bot that needs one.", flag_type="flag",
            cli="--bot-seccomp/--no-bot-seccomp"),
    Setting("sandbox.proc_views", "proc_views", _boolean, "Show bots static host-wide /proc files (meminfo, stat, "
            "loadavg, /proc/sys...) instead of the host's load.", flag_type="flag",
            cli="--static-proc/--host-proc"),
    Setting("sandbox.cgroup", "cgroup", _boolean, "Cap each bot's memory, processes and CPU over all its processes "
            "with a cgroup, where the host allows it (else per process only).", flag_type="flag",
            cli="--bot-cgroup/--no-bot-cgroup"),
    Setting("sandbox.unique_uids", "unique_uids", _boolean, "Give each bot a uid no other arena process on the host "
            "uses (run as root); off: number them from 61000 in each process (for tests only).", flag_type="flag",
            cli="--unique-uids/--per-process-uids"),
    Setting("sandbox.drop_caches", "drop_caches", _boolean, "Empty the host's page cache between the duplicate "
            "halves of a match (run as root), so that a bot's second half cannot read what its first left there by "
            "timing its reads; about half a second a half, and every process starts cold after it.", flag_type="flag",
            cli="--drop-caches/--keep-caches"),
)
BY_KEY = {s.key: s for s in SETTINGS}
GAME_SETTINGS = ("game", "games", *(s.key for s in SETTINGS if s.key.startswith(("freezeout.", "cash."))))
SANDBOX_SETTINGS = [s.key for s in SETTINGS if s.key.startswith("sandbox.")]


_CLOCK = ClockPolicy()
_LIMITS = SandboxLimits()
_POLICY = SandboxPolicy()


@dataclass(frozen=True, slots=True)
class MatchSettings:
    """Every setting of a match, typed and checked."""

    game: GameKind = GameKind.RESET
    acpc_game: str = ""
    hands: int = 1000
    games: int = 1
    levels: tuple[Level, ...] = ()
    level_hands: int = DEFAULT_LEVEL_HANDS
    hand_limit: int = DEFAULT_HAND_LIMIT
    buy_in: tuple[int, int] = (0, 0)
    rebuy: bool = True
    join_at: tuple[int, ...] = ()
    leave_at: tuple[int, ...] = ()
    structure: Structure = Structure.NO_LIMIT
    stakes: tuple[int, int] = (50, 100)
    ante: int = 0
    big_blind_ante: bool = False
    stack: int = 0  # 0: 200 big blinds
    small_bet: int = 0
    big_bet: int = 0
    raise_cap: int = 4
    uncapped_heads_up: bool = False
    chip: int = 1
    muck: bool = False
    duplicate: bool = True
    all_orders: bool = False
    tables: int = 1
    per_action_ms: int = _CLOCK.per_action_ms  # the clock's and the sandbox's defaults are theirs, not copies
    time_bank_ms: int = _CLOCK.time_bank_ms
    max_retries: int = _CLOCK.max_retries
    max_violations: int = _CLOCK.max_violations
    connect_timeout_ms: int = _CLOCK.connect_timeout_ms
    reconnect_grace_ms: int = _CLOCK.reconnect_grace_ms
    memory_mb: int = _LIMITS.memory_mb
    cpu_seconds: int = _LIMITS.cpu_seconds
    processes: int = _LIMITS.processes
    open_files: int = _LIMITS.open_files
    cpus: float = _LIMITS.cpus
    binds: tuple[str, ...] = field(default_factory=tuple)
    seccomp: bool = _POLICY.seccomp
    proc_views: bool = _POLICY.proc_views
    cgroup: bool = _POLICY.cgroup
    unique_uids: bool = _POLICY.unique_uids
    drop_caches: bool = _POLICY.drop_caches

    def table_config(self) -> TableConfig:
        """The engine's table (R3, R7, R8.4, R10.4); a rule the combination breaks is a ``SettingsError``."""
        small, big = self.stakes
        mode = AnteMode.NONE if not self.ante else (AnteMode.BIG_BLIND if self.big_blind_ante else AnteMode.EACH)
        try:
            return TableConfig(small, big, self.structure, self.ante, mode, self.small_bet, self.big_bet,
                               self.raise_cap, self.uncapped_heads_up, not self.muck, self.chip)
        except RuleError as exc:
            raise SettingsError(str(exc)) from None

    def game_rules(self) -> GameRules:
        """The game (R11.2-R11.4); rules it breaks are a ``SettingsError``."""
        try:
            return GameRules(self.game, self.games, self.levels, self.level_hands, self.hand_limit, self.buy_in,
                             self.rebuy, self.join_at, self.leave_at)
        except RuleError as exc:
            raise SettingsError(str(exc)) from None

    def check_game(self, num_players: int) -> None:
        """Refuse a game that cannot be played by ``num_players`` with these settings (a ``SettingsError``)."""
        try:
            self.game_rules().check(num_players, self.starting_stack())
        except RuleError as exc:
            raise SettingsError(str(exc)) from None

    def clock(self) -> ClockPolicy:
        """The referee's clock."""
        return ClockPolicy(self.per_action_ms, self.time_bank_ms, self.max_retries, self.max_violations,
                           self.connect_timeout_ms, self.reconnect_grace_ms)

    def sandbox_limits(self) -> SandboxLimits:
        """Limits for each bot process."""
        return SandboxLimits(self.cpu_seconds, self.memory_mb, self.processes, self.open_files, self.cpus)

    def sandbox_policy(self, enabled: bool = True, binds: tuple[Path, ...] = ()) -> SandboxPolicy:
        """The sandbox these settings describe (``binds``: the ``binds`` setting's folders, resolved)."""
        return SandboxPolicy(enabled=enabled, limits=self.sandbox_limits(), binds=binds, seccomp=self.seccomp,
                             proc_views=self.proc_views, cgroup=self.cgroup, unique_uids=self.unique_uids,
                             drop_caches=self.drop_caches)

    def with_sandbox(self, policy: SandboxPolicy) -> MatchSettings:
        """These settings with a sandbox policy's limits, folders and switches."""
        limits = policy.limits
        return self.replace(memory_mb=limits.memory_mb, cpu_seconds=limits.cpu_seconds, processes=limits.processes,
                            open_files=limits.open_files, cpus=limits.cpus, binds=tuple(str(b) for b in policy.binds),
                            seccomp=policy.seccomp, proc_views=policy.proc_views, cgroup=policy.cgroup,
                            unique_uids=policy.unique_uids, drop_caches=policy.drop_caches)

    def starting_stack(self) -> int:
        """The stack every hand starts with (R11.2)."""
        return self.stack or 200 * self.stakes[1]

    def spec(self, match_id: str, seed: str, seats: int = 0) -> MatchSpec:
        """The match these settings describe."""
        config = self.table_config()
        return MatchSpec(match_id=match_id, seed=seed, hands=self.hands, config=config,
                         starting_stack=self.starting_stack(), policy=self.clock(), duplicate=self.duplicate,
                         all_orders=self.all_orders, seats=seats, tables=self.tables, game=self.game_rules())

    def replace(self, **changes: Any) -> MatchSettings:
        """These settings with some changed."""
        return dataclasses.replace(self, **changes)


def settings_of(spec: MatchSpec) -> MatchSettings:
    """The settings that describe ``spec`` (to compare a resumed match's flags with the recorded match)."""
    config = spec.config
    policy = spec.policy
    game = spec.game
    return MatchSettings(
        game=game.kind, games=game.games, levels=game.levels, level_hands=game.level_hands,
        hand_limit=game.hand_limit, buy_in=game.buy_in, rebuy=game.rebuy, join_at=game.join_at,
        leave_at=game.leave_at,
        hands=spec.hands, structure=config.structure, stakes=(config.small_blind, config.big_blind), ante=config.ante,
        big_blind_ante=config.ante_mode is AnteMode.BIG_BLIND, stack=spec.starting_stack, small_bet=config.small_bet,
        big_bet=config.big_bet, raise_cap=config.raise_cap, uncapped_heads_up=config.uncapped_heads_up,
        chip=config.chip, muck=not config.reveal_all, duplicate=spec.duplicate, all_orders=spec.all_orders,
        tables=spec.tables,
        per_action_ms=policy.per_action_ms, time_bank_ms=policy.time_bank_ms, max_retries=policy.max_retries,
        max_violations=policy.max_violations, connect_timeout_ms=policy.connect_timeout_ms,
        reconnect_grace_ms=policy.reconnect_grace_ms,
    )


def with_acpc_game(settings: MatchSettings, cwd: Path, players: int,
                   defaults: MatchSettings | None = None) -> MatchSettings:
    """The settings with the table of their ``acpc_game`` file (relative to ``cwd``), for ``players``: the file's
    structure, blinds, stack and limit bets and cap, every showdown revealed; a setting given too that says
    otherwise, a game of other players, or a definition the arena cannot play is a ``SettingsError``."""
    if not settings.acpc_game:
        return settings
    path = (cwd / settings.acpc_game).resolve()
    try:
        game = read_game(path)
        table = table_of(game)
    except AcpcGameError as exc:
        raise SettingsError(f"acpc_game: {exc}") from None
    if table.num_players != players:
        raise SettingsError(f"acpc_game: {game.where('numPlayers')}: numPlayers = {table.num_players}, but the table "
                            f"has {players} seats")
    wanted = {"structure": table.structure, "stakes": (table.small_blind, table.big_blind), "stack": table.stack,
              "small_bet": table.small_bet, "big_bet": table.big_bet, "raise_cap": table.raise_cap,
              "uncapped_heads_up": False, "muck": False, "ante": 0}
    base = defaults if defaults is not None else MatchSettings()
    for attr, value in wanted.items():
        given = getattr(settings, attr)
        if given != getattr(base, attr) and given != value:
            raise SettingsError(f"acpc_game {path}: {attr} = {given!r}, but the game's is {value!r}: leave {attr} "
                                "out, or change the game definition")
    return settings.replace(acpc_game=str(path), **wanted)


FIXED_ON_RESUME = ("game", "games", "levels", "level_hands", "hand_limit", "buy_in", "rebuy", "join_at", "leave_at",
                   "hands", "structure", "stakes", "ante", "big_blind_ante", "stack", "small_bet", "big_bet",
                   "raise_cap", "uncapped_heads_up", "chip", "muck", "duplicate", "all_orders")


def resume_conflicts(recorded: MatchSettings, given: MatchSettings, defaults: MatchSettings) -> list[str]:
    """Settings given for a resume that differ from the recorded match's (only the clock and the sandbox may
    change: the schedule, the table and the deals are the record's)."""
    out = []
    for attr in FIXED_ON_RESUME:
        value, kept = getattr(given, attr), getattr(recorded, attr)
        if value != getattr(defaults, attr) and value != kept:
            out.append(f"{attr} = {value!r} differs from the recorded match's {kept!r}")
    return out


def _flatten(data: Mapping[str, Any], prefix: str = "") -> Iterable[tuple[str, Any]]:
    for key, value in data.items():
        full = f"{prefix}{key}"
        if isinstance(value, Mapping) and any(s.key.startswith(full + ".") for s in SETTINGS):
            yield from _flatten(value, full + ".")
        else:
            yield full, value


def from_mapping(data: Mapping[str, Any], where: str, base: MatchSettings | None = None,
                 other_keys: Iterable[str] = ()) -> MatchSettings:
    """Settings from TOML data: every key known (``other_keys`` are the caller's own, such as a tournament's
    ``name``), every value checked; the error names the file, the key and the rule."""
    allowed = set(BY_KEY) | set(other_keys)
    values: dict[str, Any] = {}
    for key, value in _flatten(data):
        if key not in allowed:
            raise SettingsError(unknown_key(where, key, allowed, nearest=3))
        if key in BY_KEY:
            setting = BY_KEY[key]
            values[setting.attr] = setting.read(value, f"{where}: {key}")
    settings = (base or MatchSettings()).replace(**values)
    settings.table_config()  # a combination of values that breaks a rule is refused now, not at the first hand
    settings.game_rules()
    return settings


def read_toml(path: Path, error: type[Exception]) -> dict[str, Any]:
    """A TOML file's data; ``error`` (the caller's exception type) names the file and what is wrong with it."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{path}: cannot read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{path}: not valid TOML: {exc}") from None


def check_seats(seats: int, where: str) -> int:
    """A table size (R2.1)."""
    if isinstance(seats, bool) or not isinstance(seats, int) or not MIN_SEATS <= seats <= MAX_SEATS:
        raise SettingsError(f"{where} = {seats!r}: a table has {MIN_SEATS} to {MAX_SEATS} seats (R2.1)")
    return seats
