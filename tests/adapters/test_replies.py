"""An ACPC client's action as an arena action, with the ACPC dealer's treatment of invalid ones: unreadable or
not allowed -> call (check when free) and counted; a fold when checking is free -> check and counted; a no-limit
raise out of range -> clamped, not counted."""

from __future__ import annotations

from arena.adapters.acpc.gamedef import Betting
from arena.adapters.acpc.replies import decode
from arena_sdk.actions import call, check, fold, raise_to
from arena_sdk.types import LegalActions

FACING = LegalActions(can_fold=True, can_check=False, can_call=True, call_amount=200, can_raise=True,
                      min_raise_to=500, max_raise_to=19700)  # flop: 300 in before, facing a bet of 200 (raise-to 500)
FREE = LegalActions(can_fold=False, can_check=True, can_call=False, call_amount=0, can_raise=True,
                    min_raise_to=100, max_raise_to=19700)
CAPPED = LegalActions(can_fold=True, can_check=False, can_call=True, call_amount=10, can_raise=False,
                      min_raise_to=0, max_raise_to=0)
LIMIT = LegalActions(can_fold=True, can_check=False, can_call=True, call_amount=10, can_raise=True,
                     min_raise_to=30, max_raise_to=30)
NL, FL = Betting.NO_LIMIT, Betting.LIMIT


def test_valid_actions() -> None:
    assert decode("f", NL, FACING, 300).action == fold()
    assert decode("c", NL, FACING, 300).action == call()
    assert decode("c", NL, FREE, 300).action == check()  # ACPC's c is check or call
    assert decode("k", NL, FREE, 300).action == check()
    # r<N> is the whole hand's total: 300 in before this round, so r800 is a raise to 500 on this round
    reply = decode("r800", NL, FACING, 300)
    assert reply.action == raise_to(500) and not reply.invalid and not reply.note and reply.as_sent is None
    assert decode("R20000", NL, FACING, 300).action == raise_to(19700)  # all in
    assert decode("b1000", NL, FREE, 300).action == raise_to(700)
    assert decode("r", FL, LIMIT, 0).action == raise_to(30)
    assert decode("r800 and some words", NL, FACING, 300).action == raise_to(500)  # what follows is ignored


def test_invalid_actions_are_the_dealers_call_and_counted() -> None:
    for text, legal, betting, want, sent in (
        ("f", FREE, NL, check(), fold()),  # a fold when checking is free
        ("x", FACING, NL, call(), None),  # unreadable: nothing to show the referee
        ("", FACING, NL, call(), None),
        ("r", FACING, NL, call(), None),  # a no-limit raise without its size
        ("r", CAPPED, FL, call(), raise_to(0)),  # over the cap
        ("r900", CAPPED, NL, call(), raise_to(600)),  # no raise allowed: as sent, a raise to 600 on this round
    ):
        reply = decode(text, betting, legal, 300)
        assert reply.action == want and reply.invalid and reply.note, text
        assert reply.as_sent == sent, text
        if sent is not None:
            assert not legal.allows(sent.kind, sent.amount)  # the referee refuses it (and records why)


def test_a_raise_out_of_range_is_clamped_and_not_counted() -> None:
    low = decode("r350", NL, FACING, 300)
    assert low.action == raise_to(500) and not low.invalid and low.note == "raise of 350 increased to 800"
    high = decode("r99999999999", NL, FACING, 300)
    assert high.action == raise_to(19700) and not high.invalid
    assert high.note == "raise of 99999999999 decreased to 20000"
    assert decode("r-5", NL, FACING, 300).action == raise_to(500)
