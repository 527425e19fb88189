"""The compiled engine's encoding of a request's view (``Hand.view_wire``, taken by ``RequestBuilder`` from
``Decision.view_wire``), of a whole request (``Hand.request_wire``, the table's fast path's ``WireRequest``) and of
a hand end's history (``Hand.end_wire``, taken by ``hand_end_bytes`` from ``HandRecord.end_wire``) are byte for byte
the encodings the transport builds in Python, over random hands of every structure, ante, seat count and stack, with
random time-out marks in the history."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.engine import Action, ActionKind, TableConfig, hand_class, seat_view
from arena.referee import Decision, DecisionHow, DecisionRecord, HandRecord, HandStart, TurnTimer, WireRequest
from arena.referee.table import posted
from arena.transport import wire
from arena_sdk.pb import bot_pb2, poker_pb2
from tests.engine.test_properties import BASE, Table, offered, tables

COMPILED = hand_class("compiled")


def request(table: Table, hand: Any, seat: int, timeouts: frozenset[int], encoded: bool) -> bytes:
    names = tuple(f"bot-{k}" if k % 3 else "" for k in range(len(table.stacks)))  # an empty name is not written
    decision = Decision("m", "t-1", "m-7", 7, 7001, seat_view(hand, seat), names, table.stacks[seat], 1500, 90_000,
                        timeouts)
    if encoded:
        decision.view_wire = hand.view_wire(seat, names, timeouts, 1500, 90_000)
        assert decision.view_wire
    return wire.RequestBuilder().serialized(decision, timeouts)


def whole_request(table: Table, hand: Any, seat: int, timeouts: frozenset[int], request_id: int) -> bytes:
    """The request as the fast path sends it (``RequestBuilder.request_wire``), the same names and clock."""
    names = tuple(f"bot-{k}" if k % 3 else "" for k in range(len(table.stacks)))
    asked = WireRequest("t-1", "m-7", request_id, TurnTimer(1.5), hand, seat, names, timeouts, table.stacks[seat], 1500,
                        90_000)
    return wire.RequestBuilder().request_wire(asked)


def play_drawn(hand: Any, legal: Any, data: st.DataObject) -> None:
    """Apply one offered action (kind and amount drawn) for the seat to act."""
    moves = offered(hand, legal, lambda low, high: data.draw(st.integers(low, high), label="amount"))
    kind, amount = data.draw(st.sampled_from(moves), label="action")
    hand.apply(legal.seat, kind, amount)


@settings(BASE, max_examples=40)
@given(table=tables(max_seats=10), data=st.data())
def test_the_compiled_view_is_the_transport_encoding(table: Table, data: st.DataObject) -> None:
    hand = COMPILED(table.config, table.stacks, table.deck, button=table.button, entry_blinds=table.entry_blinds)
    while not hand.is_over:
        legal = hand.legal_actions()
        events = len(hand.events)
        timeouts = frozenset(data.draw(st.lists(st.integers(0, events + 2), max_size=3), label="timeouts"))
        built = request(table, hand, legal.seat, timeouts, encoded=True)
        assert built == request(table, hand, legal.seat, timeouts, encoded=False)
        assert whole_request(table, hand, legal.seat, timeouts, 7001) == built
        message = bot_pb2.RefereeMessage.FromString(built).action_request
        assert len(message.history) == events and message.seat == legal.seat
        play_drawn(hand, legal, data)


def test_only_the_seat_to_act_is_encoded() -> None:
    hand: Any = COMPILED(TableConfig(), [1000, 1000, 1000], list(range(52)))
    seat = hand.to_act
    with pytest.raises(ValueError, match="only built for the seat to act"):
        hand.view_wire((seat + 1) % 3, ("a", "b", "c"), frozenset(), 0, 0)
    with pytest.raises(TypeError, match="names must be a tuple of 3 names"):
        hand.view_wire(seat, ("a", "b"), frozenset(), 0, 0)
    with pytest.raises(ValueError, match="only built for the seat to act"):
        hand.request_wire((seat + 1) % 3, ("a", "b", "c"), frozenset(), 0, 0, b"", 1, b"")
    with pytest.raises(TypeError, match="head and tail are bytes"):
        hand.request_wire(seat, ("a", "b", "c"), frozenset(), 0, 0, "", 1, b"")
    with pytest.raises(ValueError, match="not negative"):
        hand.request_wire(seat, ("a", "b", "c"), frozenset(), 0, 0, b"", -1, b"")


def test_a_request_id_of_zero_and_a_large_one_are_encoded_as_protobuf_does() -> None:
    table = Table(TableConfig(), (1000, 1000), 0, tuple(range(52)), ())
    hand: Any = COMPILED(table.config, list(table.stacks), list(table.deck))
    for request_id in (0, 1, 127, 128, 2**40):
        message = bot_pb2.RefereeMessage.FromString(whole_request(table, hand, hand.to_act, frozenset(), request_id))
        assert message.action_request.request_id == request_id


def hand_end_messages(table: Table, hand: Any, timeouts: frozenset[int], encoded: bool) -> list[bytes]:
    """Every seat's HandEnd of the finished ``hand``, from a record with the compiled history or without it."""
    decisions = [DecisionRecord(0, 0, 7001 + i, Action(ActionKind.FOLD), 0.0, DecisionHow.TIMEOUT, index)
                 for i, index in enumerate(sorted(timeouts))]
    record = HandRecord("m", "t-1", "m-7", 7, 7, 0, tuple(range(len(table.stacks))), table.button, table.config,
                        table.stacks, table.deck, tuple(hand.hole), tuple(hand.board), tuple(hand.events),
                        tuple(hand.payoffs), tuple(hand.stacks), decisions,
                        end_wire=hand.end_wire(timeouts, "t-1", "m-7") if encoded else ())
    return [wire.hand_end_bytes(record, seat) for seat in range(len(table.stacks))]


@settings(BASE, max_examples=40)
@given(table=tables(max_seats=10), data=st.data())
def test_the_compiled_hand_end_history_is_the_transport_encoding(table: Table, data: st.DataObject) -> None:
    hand = COMPILED(table.config, table.stacks, table.deck, button=table.button, entry_blinds=table.entry_blinds)
    while not hand.is_over:
        legal = hand.legal_actions()
        play_drawn(hand, legal, data)
    events = len(hand.events)
    timeouts = frozenset(data.draw(st.lists(st.integers(0, events - 1), max_size=3), label="timeouts"))
    built = hand_end_messages(table, hand, timeouts, encoded=True)
    assert built == hand_end_messages(table, hand, timeouts, encoded=False)
    for seat, data_ in enumerate(built):
        end = bot_pb2.RefereeMessage.FromString(data_).hand_end
        assert len(end.history) == events
        own = [e for e in end.history if e.kind == poker_pb2.EVENT_KIND_DEAL_HOLE and e.cards]
        assert {e.seat for e in own} == {seat}  # its own hole cards, nobody else's (R4.2)


@pytest.mark.parametrize("seats", [2, 3, 6])
def test_a_showdown_hand_end_names_the_shown_hands_as_the_transport_does(seats: int) -> None:
    table = Table(TableConfig(), (1000,) * seats, 0, tuple(range(52)), ())
    hand: Any = COMPILED(table.config, list(table.stacks), list(table.deck))
    while not hand.is_over:  # called and checked down: every seat shows (R8)
        legal = hand.legal_actions()
        hand.apply(legal.seat, ActionKind.CHECK if legal.can_check else ActionKind.CALL)
    built = hand_end_messages(table, hand, frozenset(), encoded=True)
    assert built == hand_end_messages(table, hand, frozenset(), encoded=False)
    end = bot_pb2.RefereeMessage.FromString(built[0]).hand_end
    assert end.shown and all(shown.category for shown in end.shown)
    assert [p.final_stack for p in end.payoffs] == list(hand.stacks)


def test_a_hand_end_is_only_encoded_once_the_hand_is_over() -> None:
    hand: Any = COMPILED(TableConfig(), [1000, 1000], list(range(52)))
    with pytest.raises(ValueError, match="not over"):
        hand.end_wire(frozenset(), "t", "h")
    with pytest.raises(TypeError, match="table_id"):
        hand.end_wire(frozenset())


@settings(BASE, max_examples=40)
@given(table=tables(max_seats=10), number=st.integers(0, 10**6))
def test_the_compiled_hand_start_is_the_transport_encoding(table: Table, number: int) -> None:
    """Before anyone acts: every seat's HandStart (its hole cards; stacks, bets and committed chips after the posts,
    all-in where the posts took a whole stack) as ``wire.hand_start_bytes`` writes it."""
    hand: Any = COMPILED(table.config, table.stacks, table.deck, button=table.button, entry_blinds=table.entry_blinds)
    names = tuple(f"bot-{k}" if k % 3 else "" for k in range(len(table.stacks)))
    bets, committed = posted(hand)
    after_posts = tuple(stack - chips for stack, chips in zip(table.stacks, committed, strict=True))
    for seat in range(len(table.stacks)):
        start = HandStart("m", "t-1", f"m-{number}", number, seat, table.button, tuple(hand.hole[seat]),
                          after_posts, names, bets, committed)
        built = hand.start_wire(seat, "t-1", f"m-{number}", number, names)
        assert built == wire.hand_start_bytes(start)
        assert bot_pb2.RefereeMessage.FromString(built).hand_start.hand_number == number + 1  # the protocol's count


def test_a_hand_start_is_only_encoded_for_a_seat_at_the_table() -> None:
    hand: Any = COMPILED(TableConfig(), [1000, 1000], list(range(52)))
    with pytest.raises(ValueError, match="no seat 2"):
        hand.start_wire(2, "t", "h", 0, ("a", "b"))
    with pytest.raises(TypeError, match="names must be a tuple of 2"):
        hand.start_wire(0, "t", "h", 0, ("a",))


@settings(BASE, max_examples=60)
@given(sizes=st.lists(st.integers(0, 20_000), min_size=2, max_size=40))
def test_a_batch_packed_by_the_compiled_engine_is_the_transport_encoding(sizes: list[int]) -> None:
    messages = [bot_pb2.RefereeMessage(error=bot_pb2.Error(message="x" * size)).SerializeToString()
                for size in sizes]  # lengths either side of one-byte and two-byte varints
    built = wire.packed(messages)
    assert wire._PACK_BATCH is not None and built == wire.packed_here(messages)
    assert [m.SerializeToString() for m in bot_pb2.RefereeMessage.FromString(built).batch.messages] == messages
    with pytest.raises(TypeError, match="list of bytes"):
        wire._PACK_BATCH([b"a", "b"])  # type: ignore[list-item]
