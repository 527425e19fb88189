"""What scoring a hand costs the scoring worker: AIVAT's luck terms by the compiled engine (``aivat.luck_terms``'s
default, ``compiled_luck_terms``) beside the Python reference (``reference_luck_terms``) in the same run, and the
worker's whole work on a packed hand (``scoring_worker.score_batch``: the packed path, ``packed_deltas``) beside
unpacking it and scoring the record (``unpack`` and ``hand_deltas``, the path every hand took before). The hands
are played in-process (heads-up and 6-max, no-limit, duplicate, bots that raise, call and fold at random), packed as
the referee packs them, and scored with cold check-down caches, as a worker meets them. Never asserts.

Run it alone with ``python -c "from tests.bench.bench_aivat import main; main()"``.
"""

from __future__ import annotations

import dataclasses
import pickle
import random
import time
from collections.abc import Callable, Sequence

from arena.engine import Action, ActionKind
from arena.ratings import aivat
from arena.ratings.allin import _orders
from arena.ratings.scoring_worker import Batch, pack, score_batch, unpack
from arena.ratings.session_scoring import hand_deltas
from arena.records.phh_sink import rebuild_hand
from arena.referee import Decision, HandRecord
from tests.ratings.test_aivat import play

HANDS = 4_000  # per table size


def prober(rng: random.Random) -> Callable[[Decision], Action]:
    """Raises the least it may a fifth of the time, folds to a bet one time in eight, else checks or calls: most
    hands reach a check-down or a fold, few an all-in (as the sample bots' matches do: 0.15% of the C++ bots')."""

    def choose(decision: Decision) -> Action:
        legal = decision.view.legal
        assert legal is not None
        roll = rng.random()
        if roll < 0.2 and legal.min_raise_to:
            return Action(ActionKind.RAISE, legal.min_raise_to)
        if roll > 0.875 and legal.call_amount:
            return Action(ActionKind.FOLD)
        return Action(ActionKind.CALL) if legal.call_amount else Action(ActionKind.CHECK)

    return choose


def _records(seats: int) -> list[HandRecord]:
    """``HANDS`` hands played in-process (each deal in every rotation, as a duplicate match plays it), with their
    events packed as the referee packs them."""
    records = play(HANDS, f"bench-aivat-{seats}", prober(random.Random(seats)), seats)
    return [dataclasses.replace(r, packed_events=rebuild_hand(r).packed_events()) for r in records]


def _us_a_hand(work: Callable[[], object], hands: int) -> float:
    """CPU µs a hand of ``work`` over ``hands`` hands, the check-down caches emptied first (best of three)."""
    best = float("inf")
    for _ in range(3):
        aivat._shares.cache_clear()
        _orders.cache_clear()
        started = time.process_time()
        work()
        best = min(best, time.process_time() - started)
    return best / hands * 1e6


def _row(seats: int, records: Sequence[HandRecord]) -> tuple[float, float, float, float]:
    configs = (records[0].config,)
    pickled = tuple(pickle.dumps(pack(r, 0), protocol=pickle.HIGHEST_PROTOCOL) for r in records)
    n = len(records)
    compiled = _us_a_hand(lambda: [aivat.luck_terms(r) for r in records], n)
    reference = _us_a_hand(lambda: [aivat.reference_luck_terms(r) for r in records], n)
    packed = _us_a_hand(lambda: score_batch(Batch(hands=pickled, configs=configs)), n)
    unpacked = _us_a_hand(lambda: [hand_deltas(unpack(pickle.loads(h), configs)) for h in pickled], n)
    return compiled, reference, packed, unpacked


def main() -> None:
    print(f"AIVAT and the scoring worker, CPU µs a hand, {HANDS:,} hands a row, check-down caches cold "
          "(the Python reference and the unpacked path: the peers, in the same run)")
    print(f"{'seats':>5}  {'luck terms: compiled':>21}  {'reference':>9}  {'×':>5}  "
          f"{'worker: packed':>14}  {'unpacked':>8}  {'×':>5}")
    for seats in (2, 6):
        compiled, reference, packed, unpacked = _row(seats, _records(seats))
        print(f"{seats:>5}  {compiled:>21.1f}  {reference:>9.1f}  {reference / compiled:>5.1f}  "
              f"{packed:>14.1f}  {unpacked:>8.1f}  {unpacked / packed:>5.1f}")


if __name__ == "__main__":
    main()
