"""Duplicate sessions: the unit of every statistic. A session is one deal played in every seat rotation, so the
luck of the cards cancels out; its hands are not independent samples, the session is (RULES.md R11.2).

A cash game's or a freezeout's hands depend on each other, so there the game is the unit (R11.5 compares game
against game): a game's duplicate set (the game in every rotation, with the same decks) is one session, its chips
and hands the games' summed (arena.ratings.games). A cash game's set is one rating game, placed by chips won over
its rotations; each finished freezeout of a set is a rating game of its own, placed by its finishing order (R11.4,
ties shared: what TrueSkill was made for), kept in the session's ``parts``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from arena.deals.fold import fold_session, mbb_per_hand
from arena.ratings.estimators import Estimator, adjusted_payoffs
from arena.ratings.games import game_places
from arena.records import queries
from arena.records.db import Database
from arena.records.queries import HandResult
from arena.referee.game import GameKind, GameResult


def bot_key(name: str, version: str) -> str:
    """How a bot is named on leaderboards: ``name`` or ``name@version``."""
    return f"{name}@{version}" if version else name


@dataclass(slots=True)
class Session:
    """One deal of one match: each bot's chips over all its rotations, and how many hands it played."""

    match_id: str
    deal: int
    order: int
    big_blind: int
    chips: dict[str, float] = field(default_factory=dict)  # whole chips, or a cross-table score
    hands: dict[str, int] = field(default_factory=dict)
    complete: bool = True
    finish: dict[str, int] | None = None  # a freezeout's finishing places (0 first, equal places drawn)
    whole_game: bool = False  # a freezeout or a cash game's duplicate set: rated on its own (not in a block)
    parts: tuple[Session, ...] = ()  # a freezeout's duplicate set: each finished freezeout, rated on its own

    def mbb_per_hand(self, bot: str) -> float:
        """The bot's win rate in this session, in thousandths of a big blind per hand."""
        return mbb_per_hand(self.chips[bot], self.big_blind, self.hands[bot])

    def places(self) -> dict[str, int]:
        """Each bot's place by its total chips over the session's rotations: 0 for the most; equal totals share a
        place (a draw); a freezeout's by its finishing order."""
        if self.finish is not None:
            return dict(self.finish)
        totals = sorted(set(self.chips.values()), reverse=True)
        return {bot: totals.index(chips) for bot, chips in self.chips.items()}


def load_sessions(db: Database, match_ids: list[str] | None = None, complete_only: bool = True,
                  estimator: Estimator = Estimator.RAW) -> list[Session]:
    """Every duplicate session in the database, in the order the matches were played, with the payoffs of
    ``estimator`` (the dealt chips, or a variance-reduced estimate of them: arena.ratings.estimators).

    A session is complete when all its rotations (or, across tables, all its tables) were recorded; an interrupted
    match's last deals may not be, and by default they are left out so that no bot is credited with half a
    duplicate set. Across tables a bot's chips are its cross-table score (arena.deals.fold).
    """
    return load_sessions_by(db, (estimator,), match_ids, complete_only)[estimator]


def load_sessions_by(db: Database, estimators: Sequence[Estimator], match_ids: list[str] | None = None,
                     complete_only: bool = True) -> dict[Estimator, list[Session]]:
    """``load_sessions`` by each of ``estimators``, each match's hands read once for all of them (a leaderboard
    shows the raw figures, all-in EV and AIVAT)."""
    out: dict[Estimator, list[Session]] = {estimator: [] for estimator in estimators}
    for match_id in match_ids if match_ids is not None else queries.match_ids(db):
        spec = queries.match_spec(db, match_id)
        names = [bot_key(n, v) for n, v in queries.participants(db, match_id)]
        if spec.game.is_game:
            for sessions in out.values():
                for session in game_sessions(db, match_id, names, spec.config.big_blind):
                    session.order = len(sessions)
                    sessions.append(session)
            continue
        per_deal = spec.hands_per_deal(len(names))
        cross = spec.cross_table(len(names))
        by_deal: dict[int, list[HandResult]] = defaultdict(list)
        for hand in queries.hand_results(db, match_id):
            by_deal[hand.deal].append(hand)
        deals = sorted(by_deal.items())
        for estimator, sessions in out.items():
            adjusted = adjusted_payoffs(db, match_id, estimator)

            def payoffs(hand: HandResult, adjusted: dict[int, tuple[float, ...]] = adjusted) -> Sequence[float]:
                return adjusted.get(hand.hand_number, hand.payoffs)

            for deal, hands in deals:
                session = Session(match_id, deal, 0, spec.config.big_blind)
                session.complete = len({h.rotation for h in hands}) == per_deal
                if not session.complete and complete_only:
                    continue
                chips, count = fold_session(((h.seating, payoffs(h)) for h in hands), cross)
                session.chips = {names[p]: value for p, value in chips.items()}
                session.hands = {names[p]: n for p, n in count.items()}
                session.order = len(sessions)
                sessions.append(session)
    return out


def game_sessions(db: Database, match_id: str, names: list[str], big_blind: int) -> list[Session]:
    """The sessions of a cash game's or a freezeout's match: one per game's duplicate set of finished games (see
    the module docstring), its freezeouts each in ``parts``, placed by its finishing order."""
    by_game: dict[int, list[GameResult]] = defaultdict(list)
    for g in queries.game_results(db, match_id):
        if g.finished:
            by_game[g.game].append(g)
    if not by_game:
        return []
    rotations = 1 + max(g.rotation for played in by_game.values() for g in played)
    out: list[Session] = []
    for game, played in sorted(by_game.items()):
        session = Session(match_id, game, 0, big_blind, whole_game=True)
        parts = []
        for g in played:
            part = Session(match_id, g.game * rotations + g.rotation, 0, big_blind, whole_game=True)
            for p, bot in enumerate(names):
                if g.hands[p]:
                    part.chips[bot] = g.net(p)
                    part.hands[bot] = g.hands[p]
                    session.chips[bot] = session.chips.get(bot, 0) + g.net(p)
                    session.hands[bot] = session.hands.get(bot, 0) + g.hands[p]
            if g.kind is GameKind.FREEZEOUT:
                part.finish = game_places(g, names)
                parts.append(part)
        session.parts = tuple(parts)
        out.append(session)
    return out
