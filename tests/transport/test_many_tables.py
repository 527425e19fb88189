"""Many tables on one connection, over real gRPC, with bots written against the wire alone (tests/transport/raw_bot):
each table's clock is its own, a batch may be answered in parts, a bot that takes one table is never in two hands,
and no message of any batch shows another seat's hole cards."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from arena.cards import format_card
from arena.engine import EventKind
from arena.referee import ClockPolicy, HandRecord, MatchResult, MatchSpec
from arena.runner.remote_match import play, prepare_match
from arena_sdk.pb import bot_pb2
from tests.transport.raw_bot import RawBot, folder, raiser

pytestmark = pytest.mark.timeout(120)


def run(spec: MatchSpec, bots: list[dict[str, object]]) -> tuple[MatchResult, list[RawBot], list[HandRecord]]:
    """A match between raw bots (keyword arguments of RawBot besides address and token) on a real server."""
    records: list[HandRecord] = []

    async def main() -> tuple[MatchResult, list[RawBot]]:
        setup = await prepare_match(spec, [f"bot{i}" for i in range(len(bots))], on_hand=records.append)
        raw = [RawBot(setup.server.address, seat.token, **kw) for seat, kw in zip(setup.seats, bots, strict=True)]
        try:
            result, *_ = await asyncio.gather(play(setup), *(bot.run() for bot in raw))
        finally:
            await setup.server.stop()
        return result, raw

    result, raw = asyncio.run(main())
    return result, raw, records


def spec(tables: int, hands: int = 64, **clock: int) -> MatchSpec:
    policy = ClockPolicy(**{"per_action_ms": 2000, "time_bank_ms": 0, "max_violations": 0, **clock})
    return MatchSpec("many", "many-tables-seed", hands, policy=policy, tables=tables)


@pytest.mark.foreground  # a 150 ms clock: on a loaded host the answering bot's replies came late (twice in this suite)
def test_a_bot_silent_at_one_table_times_out_there_only() -> None:
    silent = "table-1.2"

    def skip_one(requests: list[bot_pb2.ActionRequest]) -> list[float | None]:
        return [None if r.table_id == silent else 0.0 for r in requests]

    result, (slow, fast), records = run(spec(4, 40, per_action_ms=150), [
        {"max_tables": 4, "batches": True, "answer": skip_one}, {"max_tables": 4, "batches": True}])
    assert result.reason == "completed" and result.hands_played == 40
    timed_out = [(r.table_id, d.participant) for r in records for d in r.decisions if d.how == "timeout"]
    assert timed_out and {table for table, _ in timed_out} == {silent} and {p for _, p in timed_out} == {0}
    assert result.results[0].timeouts == len(timed_out) and result.results[1].timeouts == 0
    assert {r.table_id for r in records} == {f"table-1.{k}" for k in range(1, 5)}
    assert sum(1 for r in records if r.table_id != silent) > sum(1 for r in records if r.table_id == silent)
    errors = [m.error for m in slow.of("error")]
    assert errors and all(e.code == bot_pb2.ERROR_CODE_TIMEOUT and e.table_id == silent for e in errors)
    assert not fast.of("error")


def test_a_bot_may_answer_part_of_a_batch_now_and_the_rest_later() -> None:
    def first_now(requests: list[bot_pb2.ActionRequest]) -> list[float | None]:
        return [0.0] + [0.02] * (len(requests) - 1)

    result, (partial, _), records = run(spec(8, 96), [
        {"max_tables": 8, "batches": True, "answer": first_now}, {"max_tables": 8, "batches": True}])
    assert result.reason == "completed" and result.hands_played == 96
    assert partial.deferred > 0 and max(partial.batch_sizes) >= 2  # batches did hold several requests
    assert all(d.how == "ok" for r in records for d in r.decisions)
    assert result.results[0].violations == 0 and result.results[1].violations == 0


@pytest.mark.parametrize("max_tables", [1, 8])
def test_a_bot_that_takes_n_tables_is_never_in_more_hands_at_once(max_tables: int) -> None:
    result, (bot, _other), _records = run(spec(8, 96), [{"max_tables": max_tables}, {"max_tables": 8}])
    assert result.reason == "completed" and result.hands_played == 96
    assert bot.welcome is not None and bot.welcome.tables == min(max_tables, 8) and not bot.welcome.batches
    assert bot.most_hands <= max_tables and bot.most_requests <= max_tables
    assert not any(m.WhichOneof("msg") == "batch" for m in bot.received)  # it did not ask for batches
    if max_tables == 1:
        assert bot.most_hands == 1 and bot.most_requests == 1
    else:  # the control: the same match with 8 tables at once does put it in several hands (so 1 above means it)
        assert bot.most_hands > 1


def cards_in(message: bot_pb2.RefereeMessage) -> Iterator[str]:
    """Every card any field of the message names."""
    body = getattr(message, message.WhichOneof("msg") or "error")
    yield from getattr(body, "hole_cards", ())
    yield from getattr(body, "board", ())
    for shown in getattr(body, "shown", ()):
        yield from shown.cards
    for event in getattr(body, "history", ()):
        yield from event.cards


def hand_of(message: bot_pb2.RefereeMessage) -> str:
    return str(getattr(getattr(message, message.WhichOneof("msg") or "error"), "hand_id", ""))


def test_no_message_of_any_batch_shows_another_seats_hole_cards() -> None:
    result, bots, records = run(spec(8, 200), [{"max_tables": 8, "batches": True, "act": folder},
                                               {"max_tables": 8, "batches": True, "act": raiser}])
    assert result.reason == "completed"
    assert sum(1 for r in records if not any(e.kind is EventKind.SHOW for e in r.events)) > 150  # folded hands
    by_hand = {r.hand_id: r for r in records}
    for participant, bot in enumerate(bots):
        assert sum(1 for size in bot.batch_sizes if size > 1) > 0
        checked = 0
        for message in bot.received:
            record = by_hand.get(hand_of(message))
            if record is None:
                continue
            seat = record.seating.index(participant)
            shown = {c for e in record.events if e.kind is EventKind.SHOW for c in e.cards}
            allowed = {format_card(c) for c in (*record.hole[seat], *record.board, *shown)}
            leaked = set(cards_in(message)) - allowed
            assert not leaked, (participant, message.WhichOneof("msg"), record.hand_id, leaked)
            checked += 1
        assert checked > 3 * len(records) // 2  # every HandStart, HandEnd and request of its hands


def test_batches_are_cut_at_a_mebibyte_and_parse_as_the_messages_in_order() -> None:
    from arena.transport.wire import BATCH_BYTES, batches

    def message(n: int, size: int) -> bytes:
        return bot_pb2.RefereeMessage(error=bot_pb2.Error(message="x" * size, request_id=n)).SerializeToString()

    sizes = [10, 600_000, 600_000, 20, 30, 2_000_000, 5]
    messages = [message(n, size) for n, size in enumerate(sizes)]
    cut = list(batches(messages))
    assert [count for _, count in cut] == [2, 3, 1, 1]
    assert cut[2][0] == messages[5] and cut[3][0] == messages[6]  # a batch of one is the message as it is
    for (data, count), first in zip(cut[:2], (0, 2), strict=True):
        parsed = bot_pb2.RefereeMessage.FromString(data)
        assert [m.error.request_id for m in parsed.batch.messages] == list(range(first, first + count))
        assert [m.SerializeToString() for m in parsed.batch.messages] == messages[first:first + count]
        assert sum(len(m) for m in messages[first:first + count]) <= BATCH_BYTES
