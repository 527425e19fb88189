"""ACPC game definition files (the ACPC server's ``*.game``): read and checked as the ACPC server reads them, then
mapped onto the arena's table (``table_of``), and an arena table written back as one (``game_of``).

A file is a ``GAMEDEF`` line, one setting a line (``key = values``; a bare ``limit`` or ``nolimit`` names the
betting), and ``END GAMEDEF``; blank lines and lines starting ``#`` are skipped, keys are case-insensitive. The
arena plays Texas Hold'em with the ACPC's conventions for blinds and the order of play, so a definition of another
game (deck, rounds, hole or board cards), or one whose blinds or first players are not the arena's (R2.3, R5.3), is
refused with its file and line; so is a table an ACPC client could not be told about (antes, pot-limit, mucked
hands, unequal stacks).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from arena.engine import AnteMode, ConfigError, Structure, TableConfig

INT32_MAX = 2**31 - 1  # the ACPC's stack when a file names none: nobody ever runs out (limit games)
NO_CAP = 255  # the ACPC's maxRaises when a file names none (UINT8_MAX): no limit on raises
MAX_PLAYERS = 10  # the ACPC server's (and OpenSpiel's universal_poker's) MAX_PLAYERS
HOLDEM_BOARDS = (0, 3, 1, 1)


class AcpcGameError(ValueError):
    """A game definition that cannot be read, or a game the other side cannot play: the message names the file and
    line (or the table setting) and what is wrong."""


class Betting(enum.Enum):
    """The ACPC's betting types."""

    LIMIT = "limit"
    NO_LIMIT = "nolimit"


_KEYS = {  # lower-case key in the file -> canonical spelling
    "numplayers": "numPlayers", "numrounds": "numRounds", "stack": "stack", "blind": "blind",
    "raisesize": "raiseSize", "maxraises": "maxRaises", "firstplayer": "firstPlayer", "numsuits": "numSuits",
    "numranks": "numRanks", "numholecards": "numHoleCards", "numboardcards": "numBoardCards",
}
_SINGLE = ("numPlayers", "numRounds", "numSuits", "numRanks", "numHoleCards")


@dataclass(frozen=True, slots=True)
class AcpcGame:
    """One ACPC game definition. Per-player lists (``stacks``, ``blinds``) are indexed by ACPC position (0: the
    first player after the button); per-round lists by round; ``first_player`` is 1-based, as written."""

    betting: Betting
    num_players: int
    stacks: tuple[int, ...]
    blinds: tuple[int, ...]
    raise_sizes: tuple[int, ...] = ()
    max_raises: tuple[int, ...] = ()
    first_player: tuple[int, ...] = ()
    num_rounds: int = 4
    num_suits: int = 4
    num_ranks: int = 13
    num_hole_cards: int = 2
    num_board_cards: tuple[int, ...] = HOLDEM_BOARDS
    source: str = field(default="game definition", compare=False)
    lines: Mapping[str, int] = field(default_factory=dict, compare=False)

    def where(self, key: str) -> str:
        """``FILE:LINE`` of ``key`` (``FILE`` when the key was not written)."""
        line = self.lines.get(key)
        return f"{self.source}:{line}" if line else self.source

    def text(self) -> str:
        """The definition as the ACPC server writes one (``printGame``)."""
        out = ["GAMEDEF", self.betting.value, f"numPlayers = {self.num_players}", f"numRounds = {self.num_rounds}"]
        if any(s < INT32_MAX for s in self.stacks):
            out.append("stack = " + " ".join(map(str, self.stacks)))
        out.append("blind = " + " ".join(map(str, self.blinds)))
        if self.betting is Betting.LIMIT:
            out.append("raiseSize = " + " ".join(map(str, self.raise_sizes)))
        if any(f != 1 for f in self.first_player):
            out.append("firstPlayer = " + " ".join(map(str, self.first_player)))
        if any(m != NO_CAP for m in self.max_raises):
            out.append("maxRaises = " + " ".join(map(str, self.max_raises)))
        out += [f"numSuits = {self.num_suits}", f"numRanks = {self.num_ranks}", f"numHoleCards = {self.num_hole_cards}",
                "numBoardCards = " + " ".join(map(str, self.num_board_cards)), "END GAMEDEF"]
        return "\n".join(out) + "\n"


def parse_game(text: str, source: str = "game definition") -> AcpcGame:
    """A game definition from its text, checked as the ACPC server checks it (``readGame``); ``AcpcGameError``
    names ``source``, the line and what is wrong."""
    values: dict[str, tuple[int, ...]] = {}
    lines: dict[str, int] = {}
    betting = Betting.LIMIT  # the ACPC's default
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        lower = line.lower()
        if lower.startswith("end gamedef"):
            break
        if lower.startswith("gamedef"):
            continue
        if lower in ("limit", "nolimit"):
            betting = Betting(lower)
            lines["betting"] = number
            continue
        word, _, rest = line.replace("=", " = ", 1).partition(" ")
        key = _KEYS.get(word.lower())
        if key is None:
            raise AcpcGameError(f"{source}:{number}: {for_message(raw)!r} is not a setting of an ACPC game "
                                f"definition (the keys are {', '.join(sorted(_KEYS.values()))}, limit and nolimit)")
        words = rest.replace("=", " ", 1).split()
        if not words or not all(w.lstrip("-").isdigit() for w in words):
            raise AcpcGameError(f"{source}:{number}: {key}: expected whole numbers after it, got {for_message(rest)!r}")
        if key in _SINGLE and len(words) != 1:
            raise AcpcGameError(f"{source}:{number}: {key}: expected one number, got {len(words)}")
        values[key] = tuple(int(w) for w in words)
        lines[key] = number
    return _checked(betting, values, source, lines)


def read_game(path: str | Path) -> AcpcGame:
    """The game definition in file ``path`` (``AcpcGameError`` if it cannot be read or is not valid)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise AcpcGameError(f"{path}: cannot read the ACPC game definition: {exc}") from None
    return parse_game(text, str(path))


def for_message(text: str, limit: int = 60) -> str:
    """``text`` cut to ``limit`` printable characters, for an error message."""
    clean = "".join(c if c.isprintable() else "?" for c in text.strip())
    return clean if len(clean) <= limit else clean[: limit - 3] + "..."


def _checked(betting: Betting, values: dict[str, tuple[int, ...]], source: str, lines: dict[str, int]) -> AcpcGame:
    """The game, after the ACPC server's own checks (``readGame``)."""

    def fail(key: str, what: str) -> AcpcGameError:
        line = lines.get(key)
        return AcpcGameError(f"{source}:{line}: {what}" if line else f"{source}: {what}")

    def one(key: str) -> int:
        if key not in values:
            raise fail(key, f"{key} is missing")
        return values[key][0]

    players, rounds = one("numPlayers"), one("numRounds")
    if not 1 <= rounds <= 4:
        raise fail("numRounds", f"numRounds = {rounds}: the ACPC allows 1 to 4 rounds")
    if not 2 <= players <= MAX_PLAYERS:
        raise fail("numPlayers", f"numPlayers = {players}: the ACPC allows 2 to {MAX_PLAYERS} players")

    def per(key: str, count: int, default: int | None = None) -> tuple[int, ...]:
        given = values.get(key)
        if given is None:
            if default is None:
                raise fail(key, f"{key} is missing")
            return (default,) * count
        if len(given) < count:
            raise fail(key, f"{key}: {len(given)} numbers, need {count}")
        return given[:count]

    stacks = per("stack", players, INT32_MAX)
    blinds = per("blind", players)
    for position, (blind, stack) in enumerate(zip(blinds, stacks, strict=True)):
        if not 0 <= blind <= stack:
            raise fail("blind", f"blind = {blind} for position {position}: a blind is 0 to the stack ({stack})")
    if any(s <= 0 or s > INT32_MAX for s in stacks):
        raise fail("stack", f"stack: every stack is 1 to {INT32_MAX} chips")
    raise_sizes = per("raiseSize", rounds) if betting is Betting.LIMIT else ()
    if any(r <= 0 for r in raise_sizes):
        raise fail("raiseSize", "raiseSize: every raise size is at least one chip")
    first = per("firstPlayer", rounds, 1)
    if any(not 1 <= f <= players for f in first):
        raise fail("firstPlayer", f"firstPlayer: every first player is 1 to numPlayers ({players})")
    max_raises = per("maxRaises", rounds, NO_CAP)
    suits, ranks, hole = one("numSuits"), one("numRanks"), one("numHoleCards")
    if not 1 <= suits <= 4:
        raise fail("numSuits", f"numSuits = {suits}: the ACPC allows 1 to 4 suits")
    if not 1 <= ranks <= 13:
        raise fail("numRanks", f"numRanks = {ranks}: the ACPC allows 1 to 13 ranks")
    if not 1 <= hole <= 3:
        raise fail("numHoleCards", f"numHoleCards = {hole}: the ACPC allows 1 to 3 hole cards")
    boards = per("numBoardCards", rounds)
    if hole * players + sum(boards) > suits * ranks:
        raise fail("numBoardCards", "too many hole and board cards for the deck")
    return AcpcGame(betting, players, stacks, blinds, raise_sizes, max_raises, first, rounds, suits, ranks, hole,
                    boards, source, lines)


# ---------------------------------------------------------------------------------------------- the arena's table


@dataclass(frozen=True, slots=True)
class AcpcTable:
    """What an ACPC game is at the arena: a reset game of ``num_players`` with this table and stack (R11.2)."""

    num_players: int
    structure: Structure
    small_blind: int
    big_blind: int
    stack: int
    small_bet: int = 0
    big_bet: int = 0
    raise_cap: int = 4

    def config(self) -> TableConfig:
        """The engine's table: these stakes and units, every showdown revealed, the cap kept heads-up."""
        return TableConfig(self.small_blind, self.big_blind, self.structure, small_bet=self.small_bet,
                           big_bet=self.big_bet, raise_cap=self.raise_cap, uncapped_heads_up=False, reveal_all=True)


def arena_blinds(players: int, small: int, big: int) -> tuple[int, ...]:
    """The blinds by ACPC position at an arena table: heads-up the big blind is position 0 and the button posts the
    small blind (reverse blinds, R2.3); with more players the small blind is position 0, the big blind 1."""
    return (big, small) if players == 2 else (small, big) + (0,) * (players - 2)


def arena_first_players(players: int) -> tuple[int, ...]:
    """Who acts first in each round at an arena table, 1-based as the ACPC writes it: pre-flop the button heads-up
    (position 1), else the first after the big blind (position 2); later rounds position 0 (R2.3, R5.3)."""
    return (2 if players == 2 else 3, 1, 1, 1)


def table_of(game: AcpcGame) -> AcpcTable:
    """The arena's table for ``game``; ``AcpcGameError`` naming the line of what the arena cannot play."""

    def fail(key: str, what: str) -> AcpcGameError:
        return AcpcGameError(f"{game.where(key)}: {what}")

    for key, value, want, what in (("numRounds", game.num_rounds, 4, "rounds"), ("numSuits", game.num_suits, 4,
                                   "suits"), ("numRanks", game.num_ranks, 13, "ranks"),
                                   ("numHoleCards", game.num_hole_cards, 2, "hole cards")):
        if value != want:
            raise fail(key, f"{key} = {value}: the arena plays Texas Hold'em ({want} {what})")
    if game.num_board_cards != HOLDEM_BOARDS:
        raise fail("numBoardCards", f"numBoardCards = {' '.join(map(str, game.num_board_cards))}: the arena plays "
                   "Texas Hold'em (0 3 1 1)")
    players = game.num_players
    if len(set(game.stacks)) != 1:
        raise fail("stack", f"stack = {' '.join(map(str, game.stacks))}: the arena's reset game starts every "
                   "player with the same stack (R11.2)")
    big, small = (game.blinds[0], game.blinds[1]) if players == 2 else (game.blinds[1], game.blinds[0])
    if game.blinds != arena_blinds(players, small, big) or big <= 0 or small > big:
        layout = ("BIG SMALL (reverse blinds: the button posts the small blind, R2.3)" if players == 2 else
                  "SMALL BIG" + " 0" * (players - 2) + " (R2.3)")
        raise fail("blind", f"blind = {' '.join(map(str, game.blinds))}: the arena's blinds by ACPC position are "
                   f"{layout}, the big blind at least the small one")
    if game.first_player != arena_first_players(players):
        raise fail("firstPlayer", f"firstPlayer = {' '.join(map(str, game.first_player))}: the arena's order of play "
                   f"is {' '.join(map(str, arena_first_players(players)))} (R2.3, R5.3)")
    if game.betting is Betting.NO_LIMIT:
        return _playable(game, AcpcTable(players, Structure.NO_LIMIT, small, big, game.stacks[0]))
    sizes, caps = game.raise_sizes, game.max_raises
    if sizes[0] != sizes[1] or sizes[2] != sizes[3] or sizes[0] != big:
        raise fail("raiseSize", f"raiseSize = {' '.join(map(str, sizes))}: the arena's fixed limit has the small bet "
                   "(the big blind) pre-flop and on the flop, the big bet on the turn and river: S S B B with S the "
                   "big blind (R7.6)")
    if NO_CAP in caps or caps[0] + 1 != caps[1] or len(set(caps[1:])) != 1:
        raise fail("maxRaises", f"maxRaises = {' '.join(map(str, caps))}: the arena caps every street at the same "
                   "number of bets, the big blind counting as the pre-flop bet: N-1 N N N (R7.6)")
    return _playable(game, AcpcTable(players, Structure.FIXED_LIMIT, small, big, game.stacks[0], sizes[0], sizes[2],
                                     caps[1]))


def _playable(game: AcpcGame, table: AcpcTable) -> AcpcTable:
    """``table``, if the engine accepts it (else the rule it breaks, with the file)."""
    try:
        table.config()
    except ConfigError as exc:
        raise AcpcGameError(f"{game.source}: {exc}") from None
    return table


def game_of(config: TableConfig, players: int, stack: int) -> AcpcGame:
    """The ACPC game an arena reset game of ``players`` with ``config`` and ``stack`` is (what an ACPC client is
    told), or ``AcpcGameError`` saying why no ACPC game can express it."""
    if not 2 <= players <= MAX_PLAYERS:
        raise AcpcGameError(f"{players} players: an ACPC game has 2 to {MAX_PLAYERS}")
    if config.ante and config.ante_mode is not AnteMode.NONE:
        raise AcpcGameError(f"ante {config.ante}: an ACPC game has no antes")
    if config.structure is Structure.POT_LIMIT:
        raise AcpcGameError("pot-limit: an ACPC game is limit or no-limit")
    if not config.reveal_all:
        raise AcpcGameError("muck: every ACPC showdown shows all the hands that reach it (use --reveal-all)")
    if not 0 < stack <= INT32_MAX:
        raise AcpcGameError(f"stack {stack}: an ACPC stack is 1 to {INT32_MAX} chips")
    if config.big_blind > stack:
        raise AcpcGameError(f"stack {stack}: smaller than the big blind {config.big_blind}")
    blinds = arena_blinds(players, config.small_blind, config.big_blind)
    first = arena_first_players(players)
    stacks = (stack,) * players
    if config.structure is Structure.NO_LIMIT:
        return AcpcGame(Betting.NO_LIMIT, players, stacks, blinds, (), (NO_CAP,) * 4, first, source="the table")
    if config.uncapped_heads_up:
        raise AcpcGameError("uncapped heads-up: the ACPC caps the raises whatever the players left")
    if config.small_bet != config.big_blind:
        raise AcpcGameError(f"small bet {config.small_bet}: an ACPC limit game raises pre-flop by the big blind "
                            f"({config.big_blind})")
    cap = config.raise_cap
    return AcpcGame(Betting.LIMIT, players, stacks, blinds, (config.small_bet,) * 2 + (config.big_bet,) * 2,
                    (cap - 1, cap, cap, cap), first, source="the table")


__all__ = ["INT32_MAX", "AcpcGame", "AcpcGameError", "AcpcTable", "Betting", "game_of", "parse_game", "read_game",
           "table_of"]
