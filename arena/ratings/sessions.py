"""Duplicate sessions: the unit of every statistic. A session is one deal played in every seat rotation, so the
luck of the cards cancels out; its hands are not independent samples, the session is (RULES.md R11.2).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from arena.records.db import Database, config_from_json


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
    chips: dict[str, int] = field(default_factory=dict)
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


def load_sessions(db: Database, match_ids: list[str] | None = None, complete_only: bool = True) -> list[Session]:
    """Every duplicate session in the database, in the order the matches were played.

    A session is complete when all its rotations were recorded; an interrupted match's last deal may not be,
    and by default it is left out so that no bot is credited with half a duplicate set.
    """
    sessions: list[Session] = []
    for match_id in match_ids if match_ids is not None else db.match_ids():
        match = db.match_row(match_id)
        if match is None:
            raise KeyError(f"no match {match_id!r}")
        big_blind = config_from_json(match["config"]).big_blind
        names = [bot_key(n, v) for n, v in db.participants(match_id)]
        rotations = len(names) if match["duplicate"] else 1
        if match["all_orders"]:
            rotations = 1
            for k in range(2, len(names) + 1):
                rotations *= k
        rows = db.conn.execute(
            "SELECT h.deal, h.rotation, s.participant, s.payoff FROM hands h JOIN hand_seats s"
            " USING (match_id, hand_number) WHERE h.match_id = ? ORDER BY h.hand_number, s.seat",
            (match_id,),
        )
        by_deal: dict[int, Session] = {}
        seen: dict[int, set[int]] = defaultdict(set)
        for row in rows:
            deal = int(row["deal"])
            session = by_deal.get(deal)
            if session is None:
                session = by_deal[deal] = Session(match_id, deal, 0, big_blind)
            bot = names[int(row["participant"])]
            session.chips[bot] = session.chips.get(bot, 0) + int(row["payoff"])
            session.hands[bot] = session.hands.get(bot, 0)
            seen[deal].add(int(row["rotation"]))
        for deal, session in sorted(by_deal.items()):
            session.complete = len(seen[deal]) == rotations
            session.hands = {bot: len(seen[deal]) for bot in session.chips}
            if session.complete or not complete_only:
                session.order = len(sessions)
                sessions.append(session)
    return sessions
