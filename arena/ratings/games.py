"""Standings of cash games and freezeouts (RULES.md R11.3-R11.5): finishing places, wins and in-the-money counts
per bot, and each game as a TrueSkill game (its finishing order; shared places are draws).

A freezeout's game is rated by its finishing order (R11.4), which is what TrueSkill was made for: a ranking of
several players, ties allowed. A cash game has no finishing order; it is rated like the reset game, by chips:
one session per game and duplicate set (every rotation of the game; R11.5 compares game against game), each bot
placed by its chips won over them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from arena.referee.game import GameKind, GameResult, itm_places


@dataclass(frozen=True, slots=True)
class Standing:
    """One bot over the games it played: how many, how often first and in the money, its mean place, its chips."""

    bot: str
    games: int
    wins: int
    itm: int
    mean_place: float | None
    net: int
    hands: int

    def as_json(self) -> dict[str, object]:
        """The standing as JSON data (the leaderboard's and arena match's ``games``)."""
        return {"bot": self.bot, "games": self.games, "wins": self.wins, "itm": self.itm,
                "mean_place": self.mean_place, "net": self.net, "hands": self.hands}


def game_places(result: GameResult, names: Sequence[str]) -> dict[str, int]:
    """A finished freezeout's places by bot, 0 first (the form TrueSkill's games take: equal places draw)."""
    return {names[p]: place - 1 for p, place in enumerate(result.places) if place is not None}


def standings(games: Iterable[tuple[Sequence[str], GameResult]]) -> dict[str, Standing]:
    """Each bot's standing over the finished games given (with the bot names of each game's participants)."""
    count: dict[str, int] = {}
    wins: dict[str, int] = {}
    itm: dict[str, int] = {}
    place_sum: dict[str, int] = {}
    placed: dict[str, int] = {}
    net: dict[str, int] = {}
    hands: dict[str, int] = {}
    for names, result in games:
        if not result.finished:
            continue
        field_size = sum(1 for h in result.hands if h)
        for p, bot in enumerate(names):
            if not result.hands[p]:
                continue  # never dealt a hand of this game (a cash player due to join later)
            count[bot] = count.get(bot, 0) + 1
            net[bot] = net.get(bot, 0) + result.net(p)
            hands[bot] = hands.get(bot, 0) + result.hands[p]
            place = result.places[p]
            if result.kind is GameKind.FREEZEOUT and place is not None:
                wins[bot] = wins.get(bot, 0) + (place == 1)
                itm[bot] = itm.get(bot, 0) + (place <= itm_places(field_size))
                place_sum[bot] = place_sum.get(bot, 0) + place
                placed[bot] = placed.get(bot, 0) + 1
    return {
        bot: Standing(bot, count[bot], wins.get(bot, 0), itm.get(bot, 0),
                      place_sum[bot] / placed[bot] if placed.get(bot) else None, net[bot], hands[bot])
        for bot in sorted(count)
    }
