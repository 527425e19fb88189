"""Which payoffs a statistic is computed from: the chips as dealt (``raw``) or a variance-reduced estimate of the
same expectation (``allin``: all-in EV, arena.ratings.allin; ``aivat``: the luck of every card taken out,
arena.ratings.aivat). Every estimate is a pure function of the recorded hands, computed when asked (nothing is
stored that ``arena verify`` could not recompute)."""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Sequence

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


Rescored = dict[int, tuple[float, ...]]  # hand number -> each seat's payoff by an estimator (the hands it rescores)

_CACHE: dict[tuple[str, str, Estimator, int], Rescored] = {}
_CACHE_KEPT = 4096  # matches: a live site rebuilds its leaderboard after every match, from every match


def rescore(records: Iterable[HandRecord], estimator: Estimator) -> Rescored:
    """The hands among ``records`` whose payoffs ``estimator`` replaces, by hand number, with each seat's estimate:
    every hand by AIVAT, the hands that ended all-in before the river by all-in EV, none by the raw chips."""
    out: Rescored = {}
    if estimator is Estimator.AIVAT:
        for record in records:
            out[record.hand_number] = aivat_payoffs(record)
    elif estimator is Estimator.ALLIN:
        for record in records:
            payoffs = allin_payoffs(record)
            if payoffs is not None:
                out[record.hand_number] = payoffs
    return out


def _key(db: Database, match_id: str, estimator: Estimator) -> tuple[str, str, Estimator, int]:
    """A match's memo key: its database file, the match, the estimator and how many hands are recorded (a hand
    added is a new key)."""
    return str(db.path.resolve()), match_id, estimator, queries.hands_recorded(db, match_id)


def _keep(key: tuple[str, str, Estimator, int], rescored: Rescored) -> None:
    _CACHE[key] = rescored
    while len(_CACHE) > _CACHE_KEPT:
        del _CACHE[next(iter(_CACHE))]


def adjusted_payoffs(db: Database, match_id: str, estimator: Estimator) -> Rescored:
    """The hands of a match whose payoffs ``estimator`` replaces, by hand number, with each seat's estimate
    (``rescore`` of its recorded hands). Remembered per database file, match and number of hands recorded, so a
    leaderboard rebuilt after every match of a league recomputes only the new match, and one built after a
    tournament finds the matches its scoring worker rescored as they were played (``remember``)."""
    if estimator is Estimator.RAW:
        return {}
    key = _key(db, match_id, estimator)
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    if estimator is Estimator.AIVAT:
        out = rescore(queries.hand_records(db, match_id), estimator)
    else:  # only the hands that went to a showdown with board cards still to come are read
        numbers = queries.runouts(db, match_id)
        out = rescore(queries.hand_records(db, match_id, numbers), estimator) if numbers else {}
    _keep(key, out)
    return out


def remember(db: Database, match_id: str, estimator: Estimator, rescored: Rescored, hands: int) -> bool:
    """Keep ``rescored`` (``rescore`` of ``hands`` hands of the match, worked out elsewhere: arena.ratings.
    scoring_worker) as the match's ``adjusted_payoffs``, if those are all the hands recorded of it now; whether it
    was kept."""
    key = _key(db, match_id, estimator)
    if estimator is Estimator.RAW or key[3] != hands:
        return False
    _keep(key, rescored)
    return True
