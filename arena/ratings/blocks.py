"""Rating games: what one TrueSkill game is. A game is a **block of consecutive duplicate deals of one match**, every
deal in all its rotations, and its bots finish in the order of the chips they won over the block (raw chips, the
estimator of the leaderboard's headline mbb/hand); results within ``draw_margin_mbb`` of each other are a draw.

Why a block and not one deal. TrueSkill counts who beat whom, never by how much. Scored deal by deal it estimates how
often a bot wins a deal, a median, not a mean: the sample random bot wins most deals by a little (its opponents fold
to its raises) and loses a few by its whole stack, so one-deal games ranked it first or second while it lost 8 to 13
big blinds a hand (issue 23). Over a block the chips add up, and the sign of a block's result follows the sign of
the pair's mean as the block grows. Measured on a 20,000-hand round-robin of the five sample bots (``arena demo
--hands 2000``, then ``python -m tests.bench.bench_blocks out/demo/demo.db``), for the hardest pair (the C++ bot
beats the random bot by +4,838 mbb/hand with a per-deal sd of 23,680 but wins only 12% of the deals) the share of
blocks won by the pair's winner in chips is 12% for one deal, 50% for 10, 70% for 20, 82% for 30, 92% for 40.
Resampled into 200 demo-sized tournaments (150 deals a pairing) and fitted with TrueSkill: one-deal games rank 2.4
pairs a tournament against a significant head-to-head result and 2.6 pairs against both the mbb/hand order and
their own head-to-head mean (up to 5); blocks of 30 deals rank 0.015 and 0.24 (never more than one). Blocks of 40
or 50 agree a little more but give TrueSkill fewer games (a demo pairing has 150 deals: 3 blocks), so the default
is 30 deals (``ratings.block_deals``). A freezeout and a cash game's duplicate set are long games already and stay
one game each (arena.ratings.sessions).

Raw chips, not all-in EV or AIVAT: the block is ranked by what the leaderboard's headline mbb/hand and its
head-to-head table count, so the order it gives can be checked against them by anyone who adds up the chips (the
adjusted estimators are shown beside them; AIVAT also costs 1-3 ms of CPU a hand to compute).

A match's complete sessions, in deal order, are cut into ``n // block_deals`` blocks of ``block_deals`` deals, the
last taking the remainder (so it holds ``block_deals`` to ``2 * block_deals - 1``), and a match with fewer complete
deals than ``block_deals`` gives no game: its hands still count in mbb/hand. Blocks never span two matches (a
match has one set of bots), and their boundaries do not depend on the order in which matches were recorded.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from arena.deals.fold import mbb_per_hand
from arena.ratings.estimators import Estimator
from arena.ratings.sessions import Session

DEFAULT_BLOCK_DEALS = 30
DEFAULT_DRAW_MARGIN_MBB = 50.0
DEFAULT_MIN_GAMES = 10
MAX_BLOCK_DEALS = 100_000


class RatingRulesError(ValueError):
    """Rating settings that cannot be used; the message names the setting."""


@dataclass(frozen=True, slots=True)
class RatingRules:
    """What a rating game is: ``block_deals`` consecutive complete duplicate deals of one match, ranked by chips won
    (``estimator``: raw, the headline's), two results within ``draw_margin_mbb`` mbb/hand a draw; a bot with fewer
    than ``min_games`` games is provisional."""

    block_deals: int = DEFAULT_BLOCK_DEALS
    draw_margin_mbb: float = DEFAULT_DRAW_MARGIN_MBB
    min_games: int = DEFAULT_MIN_GAMES
    estimator: Estimator = Estimator.RAW

    def __post_init__(self) -> None:
        if isinstance(self.block_deals, bool) or not 1 <= self.block_deals <= MAX_BLOCK_DEALS:
            raise RatingRulesError(f"ratings.block_deals = {self.block_deals!r}: a game is 1 to "
                                   f"{MAX_BLOCK_DEALS:,} duplicate deals")
        if not math.isfinite(self.draw_margin_mbb) or self.draw_margin_mbb < 0:
            raise RatingRulesError(f"ratings.draw_margin_mbb = {self.draw_margin_mbb!r}: a margin in mbb/hand, 0 "
                                   "or more")
        if isinstance(self.min_games, bool) or self.min_games < 0:
            raise RatingRulesError(f"ratings.min_games = {self.min_games!r}: a number of games, 0 or more")

    def describe(self) -> str:
        """A game in words, for the terminal, the site and the JSON."""
        margin = f"{self.draw_margin_mbb:g}"
        deals = "deal" if self.block_deals == 1 else "deals"
        return (f"a rating game is a block of {self.block_deals} consecutive duplicate {deals} of one match (each in "
                f"all its rotations), its bots placed by {self.estimator.label} chips won over the block, results "
                f"within {margin} mbb/hand a draw; a freezeout, or a cash game's duplicate set, is one game; fewer "
                f"than {self.min_games} games: provisional")

    def as_json(self) -> dict[str, object]:
        """The rules as JSON data."""
        return {"block_deals": self.block_deals, "estimator": self.estimator.value,
                "draw_margin_mbb": self.draw_margin_mbb, "min_games": self.min_games, "text": self.describe()}


DEFAULT_RULES = RatingRules()


@dataclass(frozen=True, slots=True)
class RatingGame:
    """One rating game: a block of deals of one match (or one whole freezeout or cash-game set), each bot's chips
    and hands over it, and the places they finished in (0 first; equal places drawn)."""

    match_id: str
    first_deal: int
    deals: int
    order: int
    big_blind: int
    chips: Mapping[str, float]
    hands: Mapping[str, int]
    finish: Mapping[str, int] = field(default_factory=dict)

    def places(self) -> dict[str, int]:
        """Each bot's place (0 first, equal places drawn)."""
        return dict(self.finish)

    def mbb_per_hand(self, bot: str) -> float:
        """The bot's result over the block, in thousandths of a big blind per hand."""
        return mbb_per_hand(self.chips[bot], self.big_blind, self.hands[bot])


def places_by_result(results: Mapping[str, float], margin: float) -> dict[str, int]:
    """Places from results (higher is better): sorted best first, a bot shares the place of the one just above it
    when their results differ by at most ``margin``; else its place is the number of bots above it."""
    ordered = sorted(results.items(), key=lambda item: (-item[1], item[0]))
    places: dict[str, int] = {}
    for index, (bot, value) in enumerate(ordered):
        if index and ordered[index - 1][1] - value <= margin:
            places[bot] = places[ordered[index - 1][0]]
        else:
            places[bot] = index
    return places


def block_bounds(deals: int, block_deals: int) -> list[tuple[int, int]]:
    """How ``deals`` consecutive deals are cut into games: ``deals // block_deals`` blocks of ``block_deals``, the
    last with the remainder; none when there are fewer deals than a block. As (start, end) index pairs."""
    count = deals // block_deals
    bounds = [(i * block_deals, (i + 1) * block_deals) for i in range(count)]
    if bounds:
        bounds[-1] = (bounds[-1][0], deals)
    return bounds


def _block(sessions: Sequence[Session], order: int, margin: float) -> RatingGame:
    chips: dict[str, float] = {}
    hands: dict[str, int] = {}
    for session in sessions:
        for bot, value in session.chips.items():
            chips[bot] = chips.get(bot, 0.0) + value
            hands[bot] = hands.get(bot, 0) + session.hands[bot]
    first = sessions[0]
    rates = {bot: mbb_per_hand(chips[bot], first.big_blind, hands[bot]) for bot in chips}
    return RatingGame(first.match_id, first.deal, len(sessions), order, first.big_blind, chips, hands,
                      places_by_result(rates, margin))


def _whole(session: Session, order: int, margin: float) -> RatingGame:
    """A freezeout (placed by its finishing order) or a cash game's duplicate set (by chips) as one game."""
    finish = session.finish if session.finish is not None else places_by_result(
        {bot: session.mbb_per_hand(bot) for bot in session.chips}, margin)
    return RatingGame(session.match_id, session.deal, 1, order, session.big_blind, dict(session.chips),
                      dict(session.hands), dict(finish))


def rating_games(sessions: Iterable[Session], rules: RatingRules = DEFAULT_RULES) -> list[RatingGame]:
    """The rating games of complete sessions (as ``load_sessions`` gives them: match by match, deals in order):
    blocks of ``rules.block_deals`` deals per match, or whole games; in play order."""
    by_match: dict[str, list[Session]] = {}
    for session in sessions:
        if session.complete:
            by_match.setdefault(session.match_id, []).append(session)
    games: list[RatingGame] = []
    for match_sessions in by_match.values():
        match_sessions.sort(key=lambda s: s.deal)
        blocks = [s for s in match_sessions if not s.whole_game]
        for session in match_sessions:
            for whole in session.parts or ((session,) if session.whole_game else ()):
                if len(whole.chips) >= 2:
                    games.append(_whole(whole, len(games), rules.draw_margin_mbb))
        for start, end in block_bounds(len(blocks), rules.block_deals):
            game = _block(blocks[start:end], len(games), rules.draw_margin_mbb)
            if len(game.chips) >= 2:
                games.append(game)
    return games


def games_played(games: Iterable[RatingGame]) -> dict[str, int]:
    """How many rating games each bot played."""
    counts: dict[str, int] = {}
    for game in games:
        for bot in game.chips:
            counts[bot] = counts.get(bot, 0) + 1
    return counts
