"""The golden transcript (see ``tests/transport/golden.py``): the exact messages of a seeded match for one seat, and
the README's example exchange made from them."""

from __future__ import annotations

import asyncio
import os

import pytest

from arena.referee.fast import fast_loop
from arena_sdk.pb import bot_pb2
from tests.transport import golden

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def entries() -> list[golden.Entry]:
    return asyncio.run(golden.play_transcript())


def test_the_referee_sends_exactly_the_golden_transcript(entries: list[golden.Entry]) -> None:
    text = golden.transcript(entries)
    if os.environ.get("ARENA_UPDATE_GOLDEN"):
        golden.write(text)
    assert text == golden.GOLDEN.read_text(), (
        "the messages differ from tests/transport/golden/: if the change is meant, regenerate with "
        "ARENA_UPDATE_GOLDEN=1 and read the diff"
    )


def test_every_block_of_the_transcript_is_the_text_format_of_its_message(entries: list[golden.Entry]) -> None:
    found = golden.blocks(golden.transcript(entries))
    assert len(found) == len(entries)
    for block, entry in zip(found, entries, strict=True):
        assert golden.parse(block) == entry.message


def test_the_readme_example_is_the_golden_transcript() -> None:
    example = golden.readme_example(golden.GOLDEN.read_text())
    assert golden.readme_section(golden.README.read_text()) == example, (
        "proto/README.md's example differs from the golden transcript: run python -m tests.transport.golden --write"
    )


@pytest.fixture(scope="module")
def batch_entries() -> list[golden.Entry]:
    return asyncio.run(golden.play_transcript(batches=True))


@pytest.mark.skipif(not fast_loop(), reason="ARENA_TABLE_LOOP=reference: a request that follows an answer leaves "
                    "when its table's coroutine runs, so the two tables' requests can share a batch in the other order")
def test_two_tables_in_batches_send_exactly_the_golden_batch_transcript(batch_entries: list[golden.Entry]) -> None:
    text = golden.transcript(batch_entries, batches=True)
    if os.environ.get("ARENA_UPDATE_GOLDEN"):
        golden.write(text, batches=True)
    assert text == golden.GOLDEN_BATCHES.read_text(), (
        "the batch messages differ from tests/transport/golden/: if the change is meant, regenerate with "
        "ARENA_UPDATE_GOLDEN=1 and read the diff"
    )
    received = [e.message for e in batch_entries if not e.sent]
    assert any(m.WhichOneof("msg") == "batch" and len(m.batch.messages) > 2 for m in received)  # really batched
    sent = [e.message for e in batch_entries if e.sent]
    assert any(m.WhichOneof("msg") == "actions" and len(m.actions.actions) == 2 for m in sent)


def test_the_readme_batch_example_is_the_golden_batch_transcript() -> None:
    example = golden.readme_batch_example(golden.GOLDEN_BATCHES.read_text())
    assert golden.readme_section(golden.README.read_text(), batches=True) == example, (
        "proto/README.md's batch example differs from the golden transcript: regenerate with ARENA_UPDATE_GOLDEN=1")


def test_a_match_end_packed_with_the_last_hand_ends_is_written_apart() -> None:
    """The one packing that depends on the machine's load (``golden.ends_apart``): the batch keeps the rest, in
    order, and a batch of one becomes its message."""
    end = bot_pb2.RefereeMessage(match_end=bot_pb2.MatchEnd(match_id="m2"))
    ends = [bot_pb2.RefereeMessage(hand_end=bot_pb2.HandEnd(table_id=f"t0.{i}", hand_id="m2-0")) for i in (0, 1)]
    batch = bot_pb2.RefereeMessage(batch=bot_pb2.RefereeBatch(messages=[*ends, end]))
    assert golden.ends_apart(batch) == [bot_pb2.RefereeMessage(batch=bot_pb2.RefereeBatch(messages=ends)), end]
    pair = bot_pb2.RefereeMessage(batch=bot_pb2.RefereeBatch(messages=[ends[1], end]))
    assert golden.ends_apart(pair) == [ends[1], end]
    assert golden.ends_apart(end) == [end]
    apart = bot_pb2.RefereeMessage(batch=bot_pb2.RefereeBatch(messages=ends))
    assert golden.ends_apart(apart) == [apart]
