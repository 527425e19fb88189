"""How each bot plays, from the recorded actions: VPIP, PFR, aggression, showdowns, time and violations."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from arena.engine import EventKind
from arena.ratings.sessions import bot_key
from arena.records import queries
from arena.records.db import Database
from arena.referee import DecisionHow


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
    ids = match_ids if match_ids is not None else queries.match_ids(db)
    names = {m: [bot_key(n, v) for n, v in queries.participants(db, m)] for m in ids}
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
        bots = names[match_id]
        for participant, n in queries.hands_per_participant(db, match_id).items():
            hands[bots[participant]] += n
        for event in queries.player_events(db, match_id):
            bot = bots[event.participant]
            key = (match_id, event.hand_number)
            kind = event.kind
            if event.how is not None:
                decisions[bot] += 1
                think[bot] += event.elapsed_ms
                if event.how is DecisionHow.TIMEOUT:
                    timeouts[bot] += 1
            if kind in (EventKind.SHOW, EventKind.MUCK):
                showdown[bot].add(key)
            elif event.street == 0 and kind in (EventKind.CALL, EventKind.BET, EventKind.RAISE):
                vpip[bot].add(key)
                if kind is not EventKind.CALL:
                    pfr[bot].add(key)
            elif event.street > 0 and kind in (EventKind.BET, EventKind.RAISE):
                aggressive[bot] += 1
            elif event.street > 0 and kind is EventKind.CALL:
                calls[bot] += 1
        for participant, n in queries.violation_counts(db, match_id).items():
            violations[bots[participant]] += n
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
