"""Games around the hands (RULES.md R11.2-R11.5): the reset game, the cash game and the freezeout.

A *game* is a sequence of hands at one table whose stacks carry over. ``Game`` is its pure, deterministic state
machine: it says who is dealt into the next hand, in which seat, with which stacks, blinds and entry blinds, and
it takes each finished hand's final stacks back. The same code plays a game, resumes one (the recorded hands are
fed back in order) and verifies one (``arena verify``), so all three agree by construction.

Seats. The table has one physical seat per participant; in duplicate rotation ``r`` (R11.5) seat ``s`` holds
participant ``order[s]``, exactly as in the reset game. A hand is dealt to the occupied seats (with chips) in
clockwise order, so the engine's seat ``i`` of a hand is the ``i``-th of them.

Choices where the rulebook leaves room (each is also said where it is made):

* First button (R2.2): fixed by the seed, the same physical seat in every rotation of a game
  (``first_button``), so that every rotation deals the same first deck to the same positions.
* Button (R11.3, R11.4): after every hand it moves to the next physical seat clockwise that is dealt in; the
  blinds follow it (moving button, no dead button), also after an elimination, a join or a leave.
* Freezeout blinds (R11.4): levels by hands played. Without a schedule the table's stakes (and ante) double every
  ``level_hands`` hands; after the last level of a given schedule the blinds go on doubling at the same pace, so
  that every freezeout ends. Blinds never grow beyond the chips in play. Fixed-limit bet units follow the big
  blind (one and two big blinds).
* Freezeout end: when one player holds every chip, or after ``hand_limit`` hands (a guard, default 2,000): then
  the players left are placed by their stacks (larger first, equal stacks share the place).
* Places (R11.4): ties share the place, and the next place skips (two players sharing 3rd of 4: both 3rd).
* Cash game (R11.3): every player buys in with the table's starting stack, which must lie in the buy-in range
  (R11.1). ``join_at[p]`` is the hand (counted from 0 in the game) before which participant ``p`` sits down
  (0: from the start), ``leave_at[p]`` the hand before which it leaves with its stack (0: never). A busted player
  re-buys the starting stack between hands (``rebuy``) or, without re-buys, leaves. A re-buy is not a join: no
  entry blind. A player who joins while play is under way (any hand but the first) posts the entry blind (R2.4);
  one who joins in the small or big blind posts only that blind. A player who left does not come back. A table
  with fewer than two players waits for the next player due to join (who then posts no entry blind: play was
  not under way) and the game ends when nobody is due.
"""

from __future__ import annotations

import dataclasses
import enum
import hmac
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.deals import DealPlan
from arena.engine import AnteMode, ConfigError, Structure, TableConfig


class GameKind(enum.StrEnum):
    """Which game a match plays (R11.2-R11.4); stored as its value."""

    RESET = "reset"  # every hand starts with the same stacks (R11.2)
    CASH = "cash"  # stacks carry over, players buy in, come and go (R11.3)
    FREEZEOUT = "freezeout"  # equal stacks, rising blinds, eliminations, until one player has every chip (R11.4)


DEFAULT_LEVEL_HANDS = 20
DEFAULT_HAND_LIMIT = 2000


@dataclass(frozen=True, slots=True)
class Level:
    """One level of a freezeout's blind schedule: small blind, big blind, ante (R3.1, R3.2, R11.4)."""

    small: int
    big: int
    ante: int = 0

    def __post_init__(self) -> None:
        if self.big <= 0 or self.small < 0 or self.small > self.big or self.ante < 0:
            raise ConfigError("R11.4", f"a blind level needs 0 <= small <= big, big > 0 and ante >= 0, got {self}")

    def __str__(self) -> str:
        return f"{self.small}/{self.big}" + (f"/{self.ante}" if self.ante else "")

    @classmethod
    def parse(cls, text: str) -> Level:
        """``"50/100"`` or ``"50/100/10"`` (small/big/ante)."""
        parts = text.strip().split("/")
        if len(parts) not in (2, 3) or not all(p.strip().isdigit() for p in parts):
            raise ValueError(f'a level is "SMALL/BIG" or "SMALL/BIG/ANTE" in whole chips, got {text!r}')
        return cls(*(int(p) for p in parts))


@dataclass(frozen=True, slots=True)
class GameRules:
    """What game a match plays and how (see the module docstring for every choice made)."""

    kind: GameKind = GameKind.RESET
    games: int = 1  # games per match (cash and freezeout), each with its own sequence of decks
    levels: tuple[Level, ...] = ()  # freezeout: the schedule; empty: the table's stakes doubling each level
    level_hands: int = DEFAULT_LEVEL_HANDS  # freezeout: hands per level
    hand_limit: int = DEFAULT_HAND_LIMIT  # freezeout: the most hands a game may last (a guard)
    buy_in: tuple[int, int] = (0, 0)  # cash: the buy-in range in chips (R11.1); (0, 0): 1/5 of the stack..the stack
    rebuy: bool = True  # cash: a busted player re-buys the starting stack
    join_at: tuple[int, ...] = ()  # cash: per participant, the hand before which it sits down (0: the start)
    leave_at: tuple[int, ...] = ()  # cash: per participant, the hand before which it leaves (0: never)

    def __post_init__(self) -> None:
        if self.games < 1:
            raise ConfigError("R11.2", f"a match plays at least one game, got {self.games}")
        if self.level_hands < 1:
            raise ConfigError("R11.4", f"a blind level lasts at least one hand, got {self.level_hands}")
        if self.hand_limit < 1:
            raise ConfigError("R11.4", f"the hand limit must be at least one hand, got {self.hand_limit}")
        if any(h < 0 for h in (*self.join_at, *self.leave_at)):
            raise ConfigError("R11.3", "join and leave hands must not be negative")

    @property
    def is_game(self) -> bool:
        """Whether stacks carry over (cash game or freezeout), rather than the reset game."""
        return self.kind is not GameKind.RESET

    def stride(self, hands: int) -> int:
        """Deals reserved per game: its most hands (a freezeout's hand limit; a cash game's length)."""
        return self.hand_limit if self.kind is GameKind.FREEZEOUT else hands

    def buy_in_range(self, stack: int) -> tuple[int, int]:
        """The cash table's buy-in range (R11.1): the one given, else a fifth of the starting stack to all of it."""
        if self.buy_in != (0, 0):
            return self.buy_in
        return max(1, stack // 5), stack

    def check(self, num_players: int, stack: int) -> None:
        """Refuse rules that cannot be played with these players and this starting stack, naming the rule."""
        if self.kind is GameKind.CASH:
            low, high = self.buy_in_range(stack)
            if not 0 < low <= high:
                raise ConfigError("R11.1", f"the buy-in range {low}..{high} is empty")
            if not low <= stack <= high:
                raise ConfigError("R11.1", f"the buy-in (starting stack) {stack} is outside the range {low}..{high}")
            for name, values in (("join_at", self.join_at), ("leave_at", self.leave_at)):
                if values and len(values) != num_players:
                    raise ConfigError("R11.3", f"{name} gives {len(values)} hands for {num_players} players")
            joins, leaves = self.joins(num_players), self.leaves(num_players)
            for p in range(num_players):
                if leaves[p] and leaves[p] <= joins[p]:
                    raise ConfigError("R11.3", f"player {p} would leave (before hand {leaves[p]}) before it joins "
                                               f"(before hand {joins[p]})")
        elif self.join_at or self.leave_at:
            raise ConfigError("R11.3", "join_at and leave_at are for a cash game")

    def joins(self, n: int) -> tuple[int, ...]:
        """The hand each of ``n`` participants sits down before (0: from the start)."""
        return self.join_at or (0,) * n

    def leaves(self, n: int) -> tuple[int, ...]:
        """The hand each of ``n`` participants leaves before (0: never)."""
        return self.leave_at or (0,) * n

    def level(self, index: int, base: TableConfig, total_chips: int) -> Level:
        """The blinds of level ``index`` (R11.4): the schedule's, then doubling; never beyond the chips in play."""
        levels = self.levels or (Level(base.small_blind, base.big_blind, base.ante if base.antes_posted else 0),)
        if index < len(levels):
            return levels[index]
        level = levels[-1]
        for _ in range(index - len(levels) + 1):
            if level.big >= total_chips:
                break
            level = Level(2 * level.small, 2 * level.big, 2 * level.ante)
        return level

    def config_for(self, hand_index: int, base: TableConfig, total_chips: int) -> TableConfig:
        """The table of a game's hand: the base table with the hand's level of blinds (freezeout), else the base."""
        if self.kind is not GameKind.FREEZEOUT:
            return base
        level = self.level(hand_index // self.level_hands, base, total_chips)
        same = (level.small, level.big, level.ante) == (base.small_blind, base.big_blind,
                                                        base.ante if base.antes_posted else 0)
        if same:
            return base
        mode = base.ante_mode if base.ante_mode is not AnteMode.NONE else AnteMode.EACH
        fixed = base.structure is Structure.FIXED_LIMIT  # fixed-limit units follow the big blind (R7.6)
        return dataclasses.replace(base, small_blind=level.small, big_blind=level.big, ante=level.ante,
                                   ante_mode=mode if level.ante else AnteMode.NONE,
                                   small_bet=level.big if fixed else 0, big_bet=2 * level.big if fixed else 0)

    def to_json(self) -> str:
        """The rules as JSON (stored with the match)."""
        data: dict[str, Any] = dataclasses.asdict(self)
        data["kind"] = self.kind.value
        data["levels"] = [str(level) for level in self.levels]
        return json.dumps(data, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> GameRules:
        """The inverse of ``to_json``; an empty text is the reset game (matches recorded before games existed)."""
        if not text:
            return cls()
        data = json.loads(text)
        data["kind"] = GameKind(data["kind"])
        data["levels"] = tuple(Level.parse(t) for t in data["levels"])
        for key in ("buy_in", "join_at", "leave_at"):
            data[key] = tuple(data[key])
        return cls(**data)


RESET = GameRules()


def first_button(seed: str, game: int, num_seats: int) -> int:
    """The physical seat of a game's first button (R2.2: fixed by the seed), the same in every rotation."""
    digest = hmac.digest(seed.encode("utf-8"), b"arena-first-button-v1:%d" % game, "sha256")
    return int.from_bytes(digest[:8], "big") % num_seats


@dataclass(frozen=True, slots=True)
class GameHand:
    """The next hand of a game: its plan (engine seats in ``plan.seating``), table, stacks and entry blinds."""

    plan: DealPlan
    config: TableConfig
    stacks: tuple[int, ...]  # per engine seat
    entry_blinds: tuple[int, ...]  # engine seats that post the entry blind (R2.4)
    seats: tuple[int, ...]  # the physical seat of each engine seat
    index: int  # the hand's number in its game, from 0


class EndReason(enum.StrEnum):
    """Why a game ended; stored as its value."""

    ONE_LEFT = "one player holds every chip"  # a freezeout's end (R11.4)
    HAND_LIMIT = "hand limit reached"  # a freezeout's guard
    HANDS_PLAYED = "every hand played"  # a cash game's length
    TOO_FEW = "fewer than two players"  # a cash table nobody else is due to join (R11.3)
    UNFINISHED = "unfinished"  # still being played, or cut short


@dataclass(frozen=True, slots=True)
class GameResult:
    """How one game (one rotation of one game index) went, per participant (``None``: not in the game)."""

    game: int
    rotation: int
    kind: GameKind
    hands_played: int
    end: EndReason
    places: tuple[int | None, ...]  # freezeout: 1 for the winner; ties share (R11.4); cash: None
    hands: tuple[int, ...]  # hands each participant was dealt
    bought_in: tuple[int, ...]  # chips each participant put on the table (buy-in and re-buys)
    final_stacks: tuple[int, ...]  # chips each took away (freezeout: the winner holds them all)
    eliminated: tuple[int | None, ...]  # freezeout: the hand (of the game, from 0) each was eliminated in

    @property
    def finished(self) -> bool:
        """Whether the game was played to its end."""
        return self.end is not EndReason.UNFINISHED

    def net(self, participant: int) -> int:
        """Chips won: taken away minus put on the table."""
        return self.final_stacks[participant] - self.bought_in[participant]


def shared_places(scores: Sequence[tuple[int, tuple[int, ...]]], first: int = 1) -> dict[int, int]:
    """Places from ``(participant, key)`` pairs, best key first: equal keys share the place and the next place
    skips ("1, 2, 2, 4")."""
    ordered = sorted(scores, key=lambda s: s[1], reverse=True)
    places: dict[int, int] = {}
    for position, (participant, key) in enumerate(ordered):
        if position and key == ordered[position - 1][1]:
            places[participant] = places[ordered[position - 1][0]]
        else:
            places[participant] = first + position
    return places


@dataclass(slots=True)
class _Player:
    participant: int
    seat: int
    stack: int = 0
    seated: bool = False
    joined: bool = False
    left: bool = False
    bought_in: int = 0
    hands: int = 0
    entry_due: bool = False
    eliminated: int | None = None  # hand index
    start_of_last: int = 0  # stack at the start of the hand it was eliminated in


@dataclass(slots=True)
class Game:
    """One game at one table: rotation ``rotation`` (seat order ``order``) of game ``game`` of a match."""

    rules: GameRules
    base: TableConfig
    order: tuple[int, ...]  # order[physical seat] = participant
    rotation: int
    rotations: int
    game: int
    seed: str
    starting_stack: int
    hands: int  # a cash game's length
    index: int = 0  # hands dealt so far
    end: EndReason = EndReason.UNFINISHED
    _players: list[_Player] = field(default_factory=list)
    _button: int | None = None  # physical seat of the last hand's button
    _pending: GameHand | None = None

    def __post_init__(self) -> None:
        n = len(self.order)
        self.rules.check(n, self.starting_stack)
        by_participant = {p: s for s, p in enumerate(self.order)}
        self._players = [_Player(p, by_participant[p]) for p in range(n)]
        if self.rules.kind is GameKind.FREEZEOUT:
            for player in self._players:
                self._sit(player)
        else:
            joins = self.rules.joins(n)
            for player in self._players:
                if joins[player.participant] == 0:
                    self._sit(player)

    # ---------------------------------------------------------------- queries

    @property
    def over(self) -> bool:
        """Whether the game has ended (``end`` says why)."""
        return self.end is not EndReason.UNFINISHED

    @property
    def total_chips(self) -> int:
        """The chips on the table (a freezeout's never change; a cash table's with buy-ins, re-buys, leaves)."""
        return sum(p.stack for p in self._players if p.seated)

    def hand_number(self, index: int) -> tuple[int, int]:
        """(hand number, deal) of the game's hand ``index``: deal = game * stride + index, and the rotations of
        a deal are numbered one after another, as in the reset game's schedule."""
        deal = self.game * self.rules.stride(self.hands) + index
        return deal * self.rotations + self.rotation, deal

    # ---------------------------------------------------------------- the game

    def _sit(self, player: _Player) -> None:
        player.seated = player.joined = True
        player.stack = self.starting_stack
        player.bought_in += self.starting_stack

    def next_hand(self) -> GameHand | None:
        """The next hand to deal, or None when the game is over (``end`` says why). Asking again before the hand
        is recorded gives the same hand."""
        if self._pending is not None:
            return self._pending
        if self.over:
            return None
        if self.rules.kind is GameKind.FREEZEOUT:
            alive = [p for p in self._players if p.stack > 0]
            if len(alive) <= 1:
                self.end = EndReason.ONE_LEFT
                return None
            if self.index >= self.rules.hand_limit:
                self.end = EndReason.HAND_LIMIT
                return None
        elif not self._cash_between_hands():
            return None
        dealt = sorted((p for p in self._players if p.seated and p.stack > 0), key=lambda p: p.seat)
        seats = tuple(p.seat for p in dealt)
        n = len(self.order)
        if self._button is None:  # R2.2: the first button is fixed by the seed, then the next seat dealt in
            start = first_button(self.seed, self.game, n)
            button_seat = next(s for s in ((start + k) % n for k in range(n)) if s in seats)
        else:  # R11.3, R11.4: the button moves to the next seat dealt in (moving button, no dead button)
            button_seat = next(s for s in ((self._button + 1 + k) % n for k in range(n)) if s in seats)
        number, deal = self.hand_number(self.index)
        plan = DealPlan(number, deal, self.rotation, tuple(p.participant for p in dealt), seats.index(button_seat))
        config = self.rules.config_for(self.index, self.base, self.total_chips)
        entries = tuple(i for i, p in enumerate(dealt) if p.entry_due)
        self._pending = GameHand(plan, config, tuple(p.stack for p in dealt), entries, seats, self.index)
        return self._pending

    def _cash_between_hands(self) -> bool:
        """Leaves, re-buys and joins before a cash hand (R11.3); False when the game is over."""
        if self.index >= self.hands:
            self.end = EndReason.HANDS_PLAYED
            return False
        n = len(self.order)
        joins, leaves = self.rules.joins(n), self.rules.leaves(n)
        k = self.index
        for player in self._players:
            if not player.seated:
                continue
            if leaves[player.participant] and leaves[player.participant] <= k:
                player.seated, player.left = False, True  # takes its stack (R11.3)
            elif player.stack == 0 and not self.rules.rebuy:
                player.seated, player.left = False, True
        if sum(p.seated or not p.joined for p in self._players) < 2:  # nobody to play: nobody sits down to wait
            self.end = EndReason.TOO_FEW
            return False
        for player in self._players:
            if not player.joined and 0 < joins[player.participant] <= k:
                self._sit(player)
                player.entry_due = True  # R2.4: play is under way
        while sum(p.seated for p in self._players) < 2:  # two can play (above): the table waits for those due
            due = [joins[p.participant] for p in self._players if not p.joined]
            first = min(due)
            for player in self._players:  # the table waited for them: play was not under way, no entry blind
                if not player.joined and joins[player.participant] == first:
                    self._sit(player)
        for player in self._players:  # a hand will be dealt: re-buys inside the range (R11.3); not a join: no entry
            if player.seated and player.stack == 0:  # blind
                player.stack = self.starting_stack
                player.bought_in += self.starting_stack
        return True

    def record(self, final_stacks: Sequence[int]) -> None:
        """Take the final stacks of the hand ``next_hand`` gave (per engine seat)."""
        hand = self._pending
        if hand is None:
            raise RuntimeError("no hand of this game is being played")
        if len(final_stacks) != len(hand.seats) or sum(final_stacks) != sum(hand.stacks):
            raise ValueError(f"R10.5: final stacks {list(final_stacks)} do not match the hand's {list(hand.stacks)}")
        by_seat = {p.seat: p for p in self._players}
        for seat, start, final in zip(hand.seats, hand.stacks, final_stacks, strict=True):
            player = by_seat[seat]
            player.stack = final
            player.hands += 1
            player.entry_due = False
            if final == 0 and self.rules.kind is GameKind.FREEZEOUT:  # R11.4: eliminated at the end of the hand
                player.eliminated = hand.index
                player.start_of_last = start
        self._button = hand.seats[hand.plan.button]
        self.index += 1
        self._pending = None
        if self.rules.kind is GameKind.FREEZEOUT:
            self.next_hand()  # a freezeout is over as soon as its last hand is (its places are known)

    def result(self) -> GameResult:
        """The game's result so far (places once a freezeout is over)."""
        n = len(self._players)
        places: list[int | None] = [None] * n
        if self.rules.kind is GameKind.FREEZEOUT and self.over:
            # R11.4: the last eliminated place best; players out in the same hand by their stack at its start;
            # at the hand limit the players left by their stacks (equal keys share the place)
            keys = []
            for p in self._players:
                if p.eliminated is None:
                    keys.append((p.participant, (self.index + 1, p.stack)))
                else:
                    keys.append((p.participant, (p.eliminated, p.start_of_last)))
            for participant, place in shared_places(keys).items():
                places[participant] = place
        return GameResult(
            game=self.game, rotation=self.rotation, kind=self.rules.kind, hands_played=self.index, end=self.end,
            places=tuple(places), hands=tuple(p.hands for p in self._players),
            bought_in=tuple(p.bought_in for p in self._players),
            final_stacks=tuple(p.stack if p.joined else 0 for p in self._players),
            eliminated=tuple(p.eliminated for p in self._players),
        )


def itm_places(num_players: int) -> int:
    """How many places are "in the money" in the counts shown beside the ratings: a third of the field, at least
    one (heads-up and 3-4 players: the winner; 6: two; 9-11: three), as sit-and-go payouts usually are."""
    return max(1, num_players // 3)
