"""The SDK's fast paths: a lazy ``Request`` that reads only what the bot asks for, cheap card and enum reading, and
the answer built in place. Each must give exactly what the straightforward way gives."""

from __future__ import annotations

import queue
import random
from typing import Any

import pytest

from arena.cards import CardError, parse_card
from arena_sdk import (
    Action,
    Bot,
    EventKind,
    Request,
    SeatStatus,
    Street,
    Structure,
    TableConfig,
    call,
    check,
    raise_to,
)
from arena_sdk.pb import bot_pb2, poker_pb2
from arena_sdk.session import Session
from arena_sdk.types import _event_kind_of, _seat_status_of, _street_of, _structure_of, parse_card_list
from tests.sdk.helpers import make_request, random_request

LAZY = ("street", "stacks", "bets", "committed", "statuses", "names", "pots", "legal", "clock", "config", "history")


class Spy:
    """Stands in for an ActionRequest and records which of its fields are read."""

    def __init__(self, pb: bot_pb2.ActionRequest) -> None:
        self._pb = pb
        self.read: set[str] = set()

    def __getattr__(self, name: str) -> Any:
        self.read.add(name)
        return getattr(self._pb, name)


def with_history(events: int) -> bot_pb2.ActionRequest:
    pb = make_request()
    for i in range(events):
        pb.history.add(kind=poker_pb2.EVENT_KIND_CALL, seat=i % 2, street=poker_pb2.STREET_PREFLOP, amount=50)
    return pb


def test_a_request_reads_only_what_the_bot_asks_for() -> None:
    spy = Spy(with_history(500))
    request = Request(spy)  # type: ignore[arg-type]
    assert spy.read == {"table_id", "hand_id", "request_id", "seat", "hole_cards", "board", "button"}
    assert request.legal.can_call and not request.legal.can_check  # what a calling station reads
    assert spy.read.isdisjoint({"history", "seats", "pots", "config", "clock"})
    assert len(request.history) == 500
    assert "history" in spy.read


def test_lazy_fields_are_read_once_and_stay_read_only() -> None:
    request = Request(random_request(random.Random(3)))
    for name in LAZY:
        with pytest.raises(AttributeError):
            setattr(request, name, None)
        with pytest.raises(AttributeError):
            delattr(request, name)
        assert getattr(request, name) is getattr(request, name)
        with pytest.raises(AttributeError):
            setattr(request, name, None)
    assert isinstance(Request.__dict__["history"].__doc__, str)


@pytest.mark.parametrize("order", ["forwards", "backwards", "shuffled"])
def test_lazy_fields_do_not_depend_on_the_order_they_are_read_in(order: str) -> None:
    rng = random.Random(order)
    for i in range(50):
        pb = random_request(rng, i)
        if i % 3 == 0:
            pb.config.num_seats = 0  # the config then takes the seat count from the seats
        if i % 4 == 0:
            pb.street = poker_pb2.STREET_UNSPECIFIED  # the street then comes from the board
        names = [*LAZY, "num_seats", "pot", "num_active_opponents", "my_stack", "my_bet"]
        if order == "backwards":
            names.reverse()
        elif order == "shuffled":
            rng.shuffle(names)
        first, second = Request(pb), Request(pb)
        values = {name: getattr(first, name) for name in names}
        assert values == {name: getattr(second, name) for name in reversed(names)}
        assert first.config.num_seats == first.num_seats == len(first.statuses) >= pb.seat + 1
        assert isinstance(first.config, TableConfig) and isinstance(first.street, Street)


def test_a_malformed_card_still_fails_when_the_request_is_read() -> None:
    pb = make_request()
    pb.board[:] = ["Qh", "7x", "2d"]
    with pytest.raises(CardError):
        Request(pb)
    pb = make_request()
    pb.history.add(kind=poker_pb2.EVENT_KIND_DEAL_BOARD, seat=-1, street=poker_pb2.STREET_FLOP, cards=["Zz"])
    request = Request(pb)  # history is read only when asked for, as before
    with pytest.raises(CardError):
        _ = request.history


def test_card_lists_read_any_form_the_full_parser_accepts() -> None:
    texts = ["As", "as", "10d", "Td", " kh ", "2c"]
    assert parse_card_list(texts) == tuple(parse_card(t) for t in texts)
    assert parse_card_list(t for t in texts) == tuple(parse_card(t) for t in texts)  # a one-shot iterable
    assert parse_card_list([]) == ()
    for bad in (["As", "1s"], ["Ax"], [""]):
        with pytest.raises(CardError):
            parse_card_list(bad)


def test_enum_converters_match_the_enum_classes() -> None:
    cases = [
        (_street_of, Street),
        (_seat_status_of, SeatStatus),
        (_structure_of, Structure),
        (_event_kind_of, EventKind),
    ]
    for convert, enum in cases:
        for value in range(-2, 30):
            assert convert(value) is enum(value)
        assert convert(99) is enum(0)


class Scripted(Bot):
    def __init__(self, answer: Action) -> None:
        self.answer = answer

    def act(self, request: Request) -> Action:
        return self.answer


@pytest.mark.parametrize("answer", [check(), call(), raise_to(777)])
def test_the_answer_is_the_message_the_plain_constructors_build(answer: Action) -> None:
    session = Session(Scripted(answer), bot_pb2.Join())
    pb = make_request(request_id=41, hand_id="m1-t3-h9", table_id="t3")
    assert session.handle(bot_pb2.RefereeMessage(action_request=pb)) is None  # a plain bot's: handled here
    sent = session.outbox.get_nowait()
    expected = bot_pb2.BotMessage(
        action=poker_pb2.Action(
            table_id="t3",
            hand_id="m1-t3-h9",
            request_id=41,
            kind=int(answer.kind),  # type: ignore[arg-type]
            amount=answer.amount,
        )
    )
    assert sent == expected
    assert sent.SerializeToString(deterministic=True) == expected.SerializeToString(deterministic=True)
    with pytest.raises(queue.Empty):
        session.outbox.get_nowait()


def test_an_all_default_answer_still_carries_an_action() -> None:
    session = Session(Scripted(check()), bot_pb2.Join())
    session._send_pb("", "", 0, 0, 0)
    sent = session.outbox.get_nowait()
    assert sent is not None and sent.WhichOneof("msg") == "action"
    assert sent == bot_pb2.BotMessage(action=poker_pb2.Action())
