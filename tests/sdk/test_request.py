"""``Request``, ``Action`` and friends: reading an ActionRequest, building actions, the safe fallback."""

from __future__ import annotations

import dataclasses
import random

import pytest
from google.protobuf import text_format

from arena.cards import parse_card, parse_cards
from arena_sdk import (
    Action,
    ActionKind,
    EventKind,
    LegalActions,
    Request,
    SeatStatus,
    Street,
    Structure,
    all_in,
    call,
    check,
    fold,
    raise_to,
    safe_action,
)
from arena_sdk.pb import bot_pb2, poker_pb2
from tests.sdk.helpers import make_request, random_request

# The flop request of the example exchange in proto/README.md.
README_FLOP_REQUEST = """
  table_id: "t0"
  hand_id: "m1-t0-h1"
  request_id: 2
  seat: 0
  hole_cards: ["As", "Kd"]
  board: ["Qh", "7c", "2d"]
  button: 0
  street: STREET_FLOP
  seats { seat: 0 name: "js-caller" stack: 9700 bet: 0 committed: 300 status: SEAT_STATUS_ACTIVE }
  seats { seat: 1 name: "py-folder" stack: 9300 bet: 400 committed: 700 status: SEAT_STATUS_ACTIVE }
  pots { amount: 1000 eligible_seats: [0, 1] }
  legal {
    can_fold: true
    can_call: true
    call_amount: 400
    can_raise: true
    min_raise_to: 800
    max_raise_to: 9700
  }
  clock { action_ms_left: 1000 bank_ms_left: 30000 }
  history { kind: EVENT_KIND_POST_SMALL_BLIND seat: 0 street: STREET_PREFLOP amount: 50 }
  history { kind: EVENT_KIND_POST_BIG_BLIND seat: 1 street: STREET_PREFLOP amount: 100 }
  history { kind: EVENT_KIND_DEAL_HOLE seat: 1 street: STREET_PREFLOP }
  history { kind: EVENT_KIND_DEAL_HOLE seat: 0 street: STREET_PREFLOP cards: ["As", "Kd"] }
  history { kind: EVENT_KIND_RAISE seat: 0 street: STREET_PREFLOP amount: 300 }
  history { kind: EVENT_KIND_CALL seat: 1 street: STREET_PREFLOP amount: 200 }
  history { kind: EVENT_KIND_DEAL_BOARD seat: -1 street: STREET_FLOP cards: ["Qh", "7c", "2d"] }
  history { kind: EVENT_KIND_BET seat: 1 street: STREET_FLOP amount: 400 }
  config {
    num_seats: 2
    structure: STRUCTURE_NO_LIMIT
    small_blind: 50
    big_blind: 100
    starting_stack: 10000
    reveal_all_at_showdown: true
  }
"""


def readme_request() -> Request:
    return Request(text_format.Parse(README_FLOP_REQUEST, bot_pb2.ActionRequest()))


def test_request_reads_the_readme_example() -> None:
    r = readme_request()
    assert (r.table_id, r.hand_id, r.request_id, r.seat, r.button) == ("t0", "m1-t0-h1", 2, 0, 0)
    assert r.hole_cards == (parse_card("As"), parse_card("Kd"))
    assert r.board == tuple(parse_cards("Qh7c2d"))
    assert r.street is Street.FLOP and Street.PREFLOP < r.street < Street.TURN
    assert r.stacks == (9700, 9300) and r.bets == (0, 400) and r.committed == (300, 700)
    assert r.statuses == (SeatStatus.ACTIVE, SeatStatus.ACTIVE)
    assert r.names == ("js-caller", "py-folder")
    assert (r.my_stack, r.my_bet, r.pot, r.to_call) == (9700, 0, 1000, 400)
    assert r.pot_odds == pytest.approx(400 / 1400)
    assert r.legal == LegalActions(
        can_fold=True,
        can_check=False,
        can_call=True,
        call_amount=400,
        can_raise=True,
        min_raise_to=800,
        max_raise_to=9700,
    )
    assert (r.clock.action_ms_left, r.clock.bank_ms_left) == (1000, 30_000)
    assert (r.config.small_blind, r.config.big_blind, r.config.structure) == (50, 100, Structure.NO_LIMIT)
    assert r.config.num_seats == r.num_seats == 2
    assert r.num_active_opponents == 1
    assert r.hole_ranks == (12, 11) and not r.is_pocket_pair
    assert len(r.history) == 8
    assert r.history[3].kind is EventKind.DEAL_HOLE and r.history[3].cards == r.hole_cards
    assert r.history[6].seat == -1 and r.history[6].street is Street.FLOP
    assert str(r.history[7]) == "bet seat 1 400"
    assert r.pb.request_id == 2
    assert "to_call=400" in repr(r)


def test_request_is_read_only() -> None:
    r = readme_request()
    with pytest.raises(AttributeError):
        r.seat = 1
    with pytest.raises(AttributeError):
        del r.board
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.legal.can_raise = False  # type: ignore[misc]


def test_request_counts_opponents_still_in_the_hand() -> None:
    statuses = [
        poker_pb2.SEAT_STATUS_ACTIVE,
        poker_pb2.SEAT_STATUS_FOLDED,
        poker_pb2.SEAT_STATUS_ALL_IN,
        poker_pb2.SEAT_STATUS_SITTING_OUT,
        poker_pb2.SEAT_STATUS_ACTIVE,
    ]
    pb = make_request(seat=4, stacks=[1000] * 5, bets=[0, 0, 100, 0, 0], statuses=statuses)
    assert Request(pb).num_active_opponents == 2  # seats 0 and 2; not 1 (folded) or 3 (sitting out)


def test_request_tolerates_unknown_enums_and_missing_fields() -> None:
    pb = make_request(board="Qh7c2d")
    pb.street = 0  # type: ignore[assignment]
    pb.seats[1].status = 99  # type: ignore[assignment]
    pb.ClearField("pots")
    pb.config.num_seats = 0
    r = Request(pb)
    assert r.street is Street.FLOP  # from the number of board cards
    assert r.statuses[1] is SeatStatus.UNSPECIFIED
    assert r.pot == sum(r.committed)
    assert r.num_seats == 2


def test_pocket_pair() -> None:
    assert Request(make_request(hole="7c7d")).is_pocket_pair


def test_action_constructors() -> None:
    assert fold() == Action(ActionKind.FOLD)
    assert check() == Action(ActionKind.CHECK, 0)
    assert call().kind is ActionKind.CALL
    assert all_in().kind is ActionKind.ALL_IN
    assert raise_to(300) == Action(ActionKind.RAISE, 300)
    assert raise_to(266.9) == Action(ActionKind.RAISE, 266)
    assert str(raise_to(300)) == "raise to 300" and str(all_in()) == "all-in"
    with pytest.raises(ValueError, match="amount"):
        raise_to(-5)
    with pytest.raises(ValueError, match="kind"):
        Action(ActionKind.UNSPECIFIED)
    with pytest.raises(dataclasses.FrozenInstanceError):
        call().amount = 5  # type: ignore[misc]


def test_safe_action_is_check_if_free_else_fold() -> None:
    assert safe_action(readme_request()) == fold()
    free = make_request(bets=(100, 100))
    assert safe_action(Request(free)) == check()


def test_legal_actions_allows_and_clamp() -> None:
    legal = readme_request().legal
    assert legal.allows(ActionKind.CALL) and legal.allows(ActionKind.FOLD) and legal.allows(ActionKind.ALL_IN)
    assert not legal.allows(ActionKind.CHECK)
    assert legal.allows(ActionKind.RAISE, 800) and legal.allows(ActionKind.RAISE, 9700)
    assert not legal.allows(ActionKind.RAISE, 799) and not legal.allows(ActionKind.RAISE, 9701)
    assert (legal.clamp(10), legal.clamp(5000), legal.clamp(10**9)) == (800, 5000, 9700)


def test_random_requests_are_consistent() -> None:
    rng = random.Random(5)
    for i in range(200):
        r = Request(random_request(rng, i))
        assert len(r.hole_cards) == 2 and len(set(r.hole_cards + r.board)) == 2 + len(r.board)
        assert r.num_active_opponents >= 1
        assert r.legal.can_check != r.legal.can_call
        assert not r.legal.can_raise or r.legal.min_raise_to <= r.legal.max_raise_to
