"""A finished hand waiting in the spectators' log (``spectators.PublicHand``) keeps only what its public summary reads,
and serializes to the summary of the whole record, byte for byte: from the compiled engine's packed events or from
the events themselves, with decisions that timed out (their events flagged) and without."""

from __future__ import annotations

import dataclasses
import random

import pytest

from arena.records.phh_sink import rebuild_hand
from arena.referee.status import DecisionHow
from arena.transport import wire
from arena.transport.spectators import PublicHand
from tests.ratings.test_aivat import bettor, play


@pytest.mark.parametrize("packed", [True, False])
def test_a_kept_hand_serializes_to_the_whole_records_summary(packed: bool) -> None:
    records = play(12, "public-hand", bettor(random.Random(3)), 3)
    for number, record in enumerate(records):
        if packed:
            record = dataclasses.replace(record, packed_events=rebuild_hand(record).packed_events())
        if number % 3 == 0:  # a decision that timed out: its event is flagged in the summary's history
            late = dataclasses.replace(record.decisions[0], how=DecisionHow.TIMEOUT)
            record = dataclasses.replace(record, decisions=[late, *record.decisions[1:]])
        kept = PublicHand("m", record)
        assert len(kept.parts[8]) == (1 if number % 3 == 0 else 0)  # only the decisions the summary reads
        assert isinstance(kept.parts[5], bytes) == packed
        summary = wire.hand_summary("m", record).SerializeToString()
        assert kept() == summary
        assert kept() == summary  # read again by a second watcher
