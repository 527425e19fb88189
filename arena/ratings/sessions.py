"""Duplicate sessions: the unit of every statistic. A session is one deal played in every seat rotation, so the
luck of the cards cancels out; its hands are not independent samples, the session is (RULES.md R11.2).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from arena.ratings.cross import cross_table_scores
from arena.ratings.estimators import Estimator, adjusted_payoffs
from arena.records.db import Database, HandResult


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

    def mbb_per_hand(self, bot: str) -> float:
        """The bot's win rate in this session, in thousandths of a big blind per hand."""
        return 1000.0 * self.chips[bot] / self.big_blind / self.hands[bot]

    def places(self) -> dict[str, int]:
        """Each bot's place by its total chips over the session's rotations: 0 for the most; equal totals share a
        place (a draw)."""
        totals = sorted(set(self.chips.values()), reverse=True)
        return {bot: totals.index(chips) for bot, chips in self.chips.items()}


def load_sessions(db: Database, match_ids: list[str] | None = None, complete_only: bool = True,
                  estimator: Estimator = Estimator.RAW) -> list[Session]:
    """Every duplicate session in the database, in the order the matches were played, with the payoffs of
    ``estimator`` (the dealt chips, or a variance-reduced estimate of them: arena.ratings.estimators).

    A session is complete when all its rotations (or, across tables, all its tables) were recorded; an interrupted
    match's last deals may not be, and by default they are left out so that no bot is credited with half a
    duplicate set. Across tables a bot's chips are its cross-table score (arena.ratings.cross).
    """
    sessions: list[Session] = []
    for match_id in match_ids if match_ids is not None else db.match_ids():
        spec = db.match_spec(match_id)
        names = [bot_key(n, v) for n, v in db.participants(match_id)]
        per_deal = spec.hands_per_deal(len(names))
        cross = spec.cross_table(len(names))
        by_deal: dict[int, list[HandResult]] = defaultdict(list)
        adjusted = adjusted_payoffs(db, match_id, estimator)
        for hand in db.hand_results(match_id):
            by_deal[hand.deal].append(hand)

        def payoffs(hand: HandResult, adjusted: dict[int, tuple[float, ...]] = adjusted) -> Sequence[float]:
            return adjusted.get(hand.hand_number, hand.payoffs)

        for deal, hands in sorted(by_deal.items()):
            session = Session(match_id, deal, 0, spec.config.big_blind)
            session.complete = len({h.rotation for h in hands}) == per_deal
            if not session.complete and complete_only:
                continue
            if cross:
                scores = cross_table_scores((h.seating, payoffs(h)) for h in hands)
                session.chips = {names[p]: score for p, score in scores.items()}
                session.hands = {names[p]: 1 for p in scores}
            else:
                for hand in hands:
                    chips = payoffs(hand)
                    for seat, participant in enumerate(hand.seating):
                        bot = names[participant]
                        session.chips[bot] = session.chips.get(bot, 0) + chips[seat]
                        session.hands[bot] = session.hands.get(bot, 0) + 1
            session.order = len(sessions)
            sessions.append(session)
    return sessions
