"""A league's settings, read from its TOML file (``arena host league.toml``): the match settings of the one schema
(arena.runner.settings: ``hands``, ``structure``, ``stakes``, ``[clock]`` ...) plus the league's own keys, each
checked with the key named.

```toml
name = "night-league"
grpc = "0.0.0.0:50051"      # where bots connect
http = "127.0.0.1:8080"     # the live site and its JSON API
seats = 2                   # bots per table
matches_at_once = 4         # matches played side by side
matches_per_bot = 1         # matches a remote bot plays at once (at most its Join's max_tables); hosted bots: 1
hands = 200                 # hands per match

[matchmaking]
window = 3.0                # opponents within this TrueSkill mu of the bot seeded first ...
widen_per_minute = 3.0      # ... a window that widens while it waits
same_owner = false          # may two bots of one owner meet at a table?
rest_s = 0.0                # a bot's pause between matches

[ratings]
version_sigma = 2.0         # a new version starts at its previous version's mu with sigma widened by this
block_deals = 30            # a rating game: a block of this many consecutive deals of a match (arena.ratings.blocks)

[tls]                       # optional: serve gRPC over TLS
cert = "server.crt"
key = "server.key"

[submissions]               # hosted bots (arena bots submit): the league runs them itself
max_mb = 50                 # the largest archive accepted
max_unpacked_mb = 512       # the most an archive may unpack to
retire_after = 3            # a version that fails in this many matches (crash, hang, limits...) plays no more
validate_hands = 10         # hands of each validation match against a sample bot
validate_against = ["caller", "random"]
```

``executor = "ray"`` (or ``arena host --executor ray``) plays the matches of hosted bots on a Ray cluster.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.ratings.blocks import RatingRules
from arena.ratings.settings import RATING_KEYS, rules_from_mapping
from arena.referee import GameKind
from arena.runner.executor import ExecutorKind, executor_kind
from arena.runner.settings import (
    MatchSettings,
    SettingsError,
    check_seats,
    from_mapping,
    read_toml,
    with_acpc_game,
)
from arena.runner.validate import OPPONENTS
from arena.text import unknown_key

LEAGUE_KEYS = ("name", "grpc", "http", "seats", "matches_at_once", "matches_per_bot", "matchmaking", "ratings", "tls",
               "admin_token_file", "submissions", "executor", "ray_address")
LEAGUE_DEFAULTS = MatchSettings(hands=200, duplicate=False)


class LeagueConfigError(ValueError):
    """A league file that cannot be used: the message names the file and the key."""


@dataclass(frozen=True, slots=True)
class Matchmaking:
    """How the host picks who plays next (arena.league.matchmaker)."""

    window: float = 3.0
    widen_per_minute: float = 3.0
    same_owner: bool = False
    rest_s: float = 0.0


@dataclass(frozen=True, slots=True)
class Submissions:
    """How the league takes hosted bots (arena bots submit) and when it retires a failing one."""

    max_mb: float = 50.0
    max_unpacked_mb: float = 512.0
    retire_after: int = 3
    validate_hands: int = 10
    validate_against: tuple[str, ...] = ("caller", "random")

    @property
    def max_bytes(self) -> int:
        """The largest archive accepted, in bytes."""
        return int(self.max_mb * 1024 * 1024)

    @property
    def max_unpacked_bytes(self) -> int:
        """The most an archive may unpack to, in bytes."""
        return int(self.max_unpacked_mb * 1024 * 1024)


@dataclass(frozen=True, slots=True)
class LeagueConfig:
    """Everything ``arena host`` reads from a league file."""

    name: str
    grpc: tuple[str, int] = ("127.0.0.1", 50051)
    http: tuple[str, int] | None = ("127.0.0.1", 8080)
    seats: int = 2
    matches_at_once: int = 4
    matches_per_bot: int = 1
    match: MatchSettings = field(default_factory=lambda: LEAGUE_DEFAULTS)
    matchmaking: Matchmaking = field(default_factory=Matchmaking)
    version_sigma: float = 2.0
    rating_rules: RatingRules = field(default_factory=RatingRules)
    tls_cert: Path | None = None
    tls_key: Path | None = None
    admin_token_file: Path | None = None
    submissions: Submissions = field(default_factory=Submissions)
    executor: ExecutorKind = ExecutorKind.LOCAL
    ray_address: str | None = None

    @classmethod
    def from_toml(cls, path: str | Path) -> LeagueConfig:
        """Read a league file (see the module's example); paths in it are relative to its folder."""
        path = Path(path)
        data = read_toml(path, LeagueConfigError)
        return cls.from_dict(data, path.resolve().parent, str(path))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], folder: Path, where: str = "league") -> LeagueConfig:
        """Build the config from parsed TOML; every mistake is a ``LeagueConfigError`` naming the key."""
        if "seed" in data or "seed_file" in data:
            raise LeagueConfigError(f"{where}: a league deals every match from a fresh secret seed (published when "
                                    "the match is over): no seed or seed_file")
        if "bots" in data:
            raise LeagueConfigError(f"{where}: a league's bots are registered, not listed: arena bots add NAME --db "
                                    "league.db prints the key a bot connects with")
        try:
            match = from_mapping(data, where, LEAGUE_DEFAULTS, other_keys=LEAGUE_KEYS)
            seats = check_seats(data.get("seats", 2), f"{where}: seats")
            match = with_acpc_game(match, folder, seats, LEAGUE_DEFAULTS)
        except SettingsError as exc:
            raise LeagueConfigError(str(exc)) from None
        if match.game is not GameKind.RESET:
            raise LeagueConfigError(
                f"{where}: game = {match.game.value!r}: a league plays the reset game (R11.2); its online ratings "
                "count duplicate-free sessions of hands, not finishing orders, so cash games and freezeouts are not "
                "offered in a league yet (arena match, serve and tournament play them)")
        if match.duplicate:
            raise LeagueConfigError(
                f"{where}: duplicate = true: the league chooses the deals of each table itself: duplicate where every "
                "bot is hosted (their rotations played one after the other by fresh processes, D1), fresh where a "
                "remote bot sits, since it can remember a deal (README, 'Duplicate without memory', D2); leave "
                "duplicate out")
        name = data.get("name")
        if not isinstance(name, str) or not name.strip():
            raise LeagueConfigError(f'{where}: a league needs a name (name = "night-league")')
        making = _section(data, "matchmaking", where, {
            "window": _number(0.0), "widen_per_minute": _number(0.0), "same_owner": _bool, "rest_s": _number(0.0),
        })
        ratings = _section(data, "ratings", where, {"version_sigma": _number(0.0),
                                                    **dict.fromkeys(RATING_KEYS, _any)})
        try:
            rules = rules_from_mapping(data.get("ratings", {}), where, other_keys=("version_sigma",))
        except SettingsError as exc:
            raise LeagueConfigError(str(exc)) from None
        tls = _section(data, "tls", where, {"cert": _text, "key": _text})
        if bool(tls.get("cert")) != bool(tls.get("key")):
            raise LeagueConfigError(f"{where}: [tls] needs both cert and key (PEM files)")
        hosting = _section(data, "submissions", where, {
            "max_mb": _number(0.001), "max_unpacked_mb": _number(0.001), "retire_after": _count,
            "validate_hands": _count, "validate_against": _opponents,
        })
        if hosting.get("validate_hands") == 0:
            raise LeagueConfigError(f"{where}: submissions.validate_hands = 0: a validation plays at least one hand")
        try:
            executor = executor_kind(data.get("executor", "local"), f"{where}: executor")
        except ValueError as exc:
            raise LeagueConfigError(str(exc)) from None
        ray_address = data.get("ray_address")
        if ray_address is not None and not isinstance(ray_address, str):
            raise LeagueConfigError(f"{where}: ray_address = {ray_address!r}: expected HOST:PORT or auto")
        http = data.get("http", "127.0.0.1:8080")
        admin = data.get("admin_token_file")
        if admin is not None and not isinstance(admin, str):
            raise LeagueConfigError(f"{where}: admin_token_file = {admin!r}: expected a path")
        return cls(
            name=name,
            grpc=address(data.get("grpc", "127.0.0.1:50051"), f"{where}: grpc"),
            http=None if http in ("", "off") else address(http, f"{where}: http"),
            seats=seats,
            matches_at_once=_whole(data.get("matches_at_once", 4), f"{where}: matches_at_once", 1, 256),
            matches_per_bot=_whole(data.get("matches_per_bot", 1), f"{where}: matches_per_bot", 1, 64),
            match=match,
            matchmaking=Matchmaking(**making),
            version_sigma=ratings.get("version_sigma", 2.0),
            rating_rules=rules,
            tls_cert=folder / tls["cert"] if tls.get("cert") else None,
            tls_key=folder / tls["key"] if tls.get("key") else None,
            admin_token_file=folder / admin if admin else None,
            submissions=Submissions(**hosting),
            executor=executor,
            ray_address=ray_address,
        )



def address(value: Any, where: str) -> tuple[str, int]:
    """``HOST:PORT`` (port 0 picks a free one)."""
    if isinstance(value, str):
        host, sep, port = value.rpartition(":")
        if sep and host and port.isdigit() and int(port) < 65536:
            return host.strip("[]"), int(port)
    raise LeagueConfigError(f'{where} = {value!r}: expected "HOST:PORT", e.g. "0.0.0.0:50051"')


def _whole(value: Any, where: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise LeagueConfigError(f"{where} = {value!r}: expected a whole number from {low} to {high}")
    return value


def _number(low: float) -> Callable[[Any], float]:
    def parse(value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float) or value < low:
            raise ValueError(f"expected a number of at least {low:g}")
        return float(value)

    return parse


def _count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError("expected a whole number, 0 or more")
    return value


def _opponents(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or any(v not in OPPONENTS for v in value):
        raise ValueError(f"expected a list of sample bots from {', '.join(OPPONENTS)}")
    return tuple(value)


def _any(value: Any) -> Any:
    return value


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("expected true or false")
    return value


def _text(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError("expected a path")
    return value


def _section(data: Mapping[str, Any], name: str, where: str, keys: Mapping[str, Callable[[Any], Any]],
             ) -> dict[str, Any]:
    section = data.get(name, {})
    if not isinstance(section, Mapping):
        raise LeagueConfigError(f"{where}: {name} must be a table ([{name}])")
    out = {}
    for key, value in section.items():
        if key not in keys:
            raise LeagueConfigError(unknown_key(where, key, keys, name))
        try:
            out[key] = keys[key](value)
        except ValueError as exc:
            raise LeagueConfigError(f"{where}: {name}.{key} = {value!r}: {exc}") from None
    return out
