"""How each bot plays, from the recorded actions: VPIP, PFR, aggression, showdowns, time and violations."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from arena.ratings.sessions import bot_key
from arena.records.db import Database


@dataclass(frozen=True, slots=True)
class PlayStats:
    """Per-bot play statistics over every recorded hand.

    ``vpip``: share of hands with chips put in voluntarily pre-flop (a call, bet or raise, not a blind);
    ``pfr``: share of hands with a pre-flop bet or raise; ``aggression``: bets and raises per call after the
    flop (None when the bot never called after the flop: the ratio is undefined); ``showdown``: share of hands
    that reached a showdown; ``think_ms``: mean time per decision.
    """

    hands: int
    vpip: float
    pfr: float
    aggression: float | None
    showdown: float
    think_ms: float
    decisions: int
    violations: int
    timeouts: int


def play_stats(db: Database, match_ids: list[str] | None = None) -> dict[str, PlayStats]:
    """Statistics for every bot in the given matches (default: all)."""
    ids = match_ids if match_ids is not None else db.match_ids()
    names = {m: [bot_key(n, v) for n, v in db.participants(m)] for m in ids}
    hands: dict[str, int] = defaultdict(int)
    vpip: dict[str, set[tuple[str, int]]] = defaultdict(set)
    pfr: dict[str, set[tuple[str, int]]] = defaultdict(set)
    showdown: dict[str, set[tuple[str, int]]] = defaultdict(set)
    aggressive: dict[str, int] = defaultdict(int)
    calls: dict[str, int] = defaultdict(int)
    think: dict[str, float] = defaultdict(float)
    decisions: dict[str, int] = defaultdict(int)
    violations: dict[str, int] = defaultdict(int)
    timeouts: dict[str, int] = defaultdict(int)
    for match_id in ids:
        seating: dict[tuple[int, int], int] = {}
        for row in db.conn.execute("SELECT hand_number, seat, participant FROM hand_seats WHERE match_id = ?",
                                   (match_id,)):
            seating[row["hand_number"], row["seat"]] = row["participant"]
            hands[names[match_id][row["participant"]]] += 1
        rows = db.conn.execute(
            "SELECT hand_number, seat, street, kind, how, elapsed_ms FROM actions WHERE match_id = ? AND seat >= 0",
            (match_id,),
        )
        for row in rows:
            participant = seating.get((row["hand_number"], row["seat"]))
            if participant is None:
                continue
            bot = names[match_id][participant]
            key = (match_id, row["hand_number"])
            kind = row["kind"]
            if row["how"] is not None:
                decisions[bot] += 1
                think[bot] += row["elapsed_ms"] or 0.0
                if row["how"] == "timeout":
                    timeouts[bot] += 1
            if kind in ("SHOW", "MUCK"):
                showdown[bot].add(key)
            elif row["street"] == 0 and kind in ("CALL", "BET", "RAISE"):
                vpip[bot].add(key)
                if kind != "CALL":
                    pfr[bot].add(key)
            elif row["street"] > 0 and kind in ("BET", "RAISE"):
                aggressive[bot] += 1
            elif row["street"] > 0 and kind == "CALL":
                calls[bot] += 1
        for row in db.conn.execute("SELECT participant, COUNT(*) AS n FROM violations WHERE match_id = ?"
                                   " GROUP BY participant", (match_id,)):
            violations[names[match_id][row["participant"]]] += row["n"]
    return {
        bot: PlayStats(
            hands=n,
            vpip=len(vpip[bot]) / n,
            pfr=len(pfr[bot]) / n,
            aggression=aggressive[bot] / calls[bot] if calls[bot] else None,
            showdown=len(showdown[bot]) / n,
            think_ms=think[bot] / decisions[bot] if decisions[bot] else 0.0,
            decisions=decisions[bot],
            violations=violations[bot],
            timeouts=timeouts[bot],
        )
        for bot, n in hands.items()
    }
