"""Which payoffs a statistic is computed from: the chips as dealt (``raw``) or a variance-reduced estimate of the
same expectation (``allin``: all-in EV, arena.ratings.allin; ``aivat``: the luck of every card taken out,
arena.ratings.aivat). Every estimate is a pure function of the recorded hands, computed when asked (nothing is
stored that ``arena verify`` could not recompute)."""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence

from arena.ratings.aivat import aivat_payoffs
from arena.ratings.allin import allin_payoffs, runout_point
from arena.records import queries
from arena.records.db import Database
from arena.referee import HandRecord


class Estimator(enum.StrEnum):
    """An estimator of a hand's payoffs."""

    RAW = "raw"  # the chips won and lost as the cards fell
    ALLIN = "allin"  # all-in EV: an all-in before the river scored by its expectation over the rest of the board
    AIVAT = "aivat"  # AIVAT's chance-node control variates: every card's luck on the pots taken out

    @property
    def label(self) -> str:
        return {"raw": "raw", "allin": "all-in EV", "aivat": "AIVAT"}[self.value]


ADJUSTED = (Estimator.ALLIN, Estimator.AIVAT)  # the estimators shown beside the raw figures, in this order


def per_hand(estimator: Estimator) -> Callable[[HandRecord], Sequence[float]]:
    """A finished hand's payoffs by ``estimator``, one hand at a time (the live test of arena compare, the tally)."""
    if estimator is Estimator.RAW:
        return lambda record: record.payoffs
    if estimator is Estimator.AIVAT:
        return aivat_payoffs

    def allin(record: HandRecord) -> Sequence[float]:
        payoffs = allin_payoffs(record) if runout_point(record) is not None else None
        return payoffs if payoffs is not None else record.payoffs

    return allin


_CACHE: dict[tuple[str, str, Estimator, int], dict[int, tuple[float, ...]]] = {}
_CACHE_KEPT = 4096  # matches: a live site rebuilds its leaderboard after every match, from every match


def adjusted_payoffs(db: Database, match_id: str, estimator: Estimator) -> dict[int, tuple[float, ...]]:
    """The hands of a match whose payoffs ``estimator`` replaces, by hand number, with each seat's estimate.
    Remembered per database file, match and number of hands recorded (a hand added is a new key), so a leaderboard
    rebuilt after every match of a league recomputes only the new match."""
    if estimator is Estimator.RAW:
        return {}
    key = (str(db.path.resolve()), match_id, estimator, queries.hands_recorded(db, match_id))
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    out: dict[int, tuple[float, ...]] = {}
    if estimator is Estimator.AIVAT:
        for record in queries.hand_records(db, match_id):
            out[record.hand_number] = aivat_payoffs(record)
    else:
        numbers = queries.runouts(db, match_id)
        for record in queries.hand_records(db, match_id, numbers) if numbers else ():
            payoffs = allin_payoffs(record)
            if payoffs is not None:
                out[record.hand_number] = payoffs
    _CACHE[key] = out
    while len(_CACHE) > _CACHE_KEPT:
        del _CACHE[next(iter(_CACHE))]
    return out
