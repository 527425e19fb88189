"""The MATCHSTATE encoder against states written by hand: the examples of the ACPC server's protocol.md (heads-up
limit with reverse blinds, heads-up no-limit with an all-in on the turn, 3-player limit), and 3-player no-limit
with an all-in pre-flop run out to the river. Each arena history below is what the referee sends for that hand."""

from __future__ import annotations

from arena.adapters.acpc.gamedef import Betting
from arena.adapters.acpc.matchstate import HandStates, position, seat_of
from arena_sdk.cards import parse_cards
from arena_sdk.types import Event, EventKind, Street

K = EventKind
PRE, FLOP, TURN, RIVER, SHOW = Street.PREFLOP, Street.FLOP, Street.TURN, Street.RIVER, Street.SHOWDOWN


def ev(kind: EventKind, seat: int, street: Street, amount: int = 0, cards: str = "") -> Event:
    return Event(kind, seat, street, amount, tuple(parse_cards(cards)))


def deal(street: Street, cards: str) -> Event:
    return ev(K.DEAL_BOARD, -1, street, 0, cards)


def lines(text: str) -> list[str]:
    return [line.split("> ", 1)[1] for line in text.strip().splitlines()]


def test_positions_count_from_the_first_seat_after_the_button() -> None:
    assert [position(s, 1, 2) for s in (0, 1)] == [0, 1]  # heads-up: the big blind 0, the button 1
    assert [position(s, 0, 3) for s in (0, 1, 2)] == [2, 0, 1]  # the button is the last position
    assert all(seat_of(position(s, b, 6), b, 6) == s for s in range(6) for b in range(6))


def test_heads_up_limit_reverse_blinds_to_a_showdown() -> None:
    """protocol.md, two player limit, hand 0, seen by position 0 (the big blind): every state, in order."""
    history = [
        ev(K.POST_SMALL_BLIND, 1, PRE, 5), ev(K.POST_BIG_BLIND, 0, PRE, 10),
        ev(K.DEAL_HOLE, 0, PRE, 0, "TdAs"), ev(K.DEAL_HOLE, 1, PRE),
        ev(K.RAISE, 1, PRE, 20), ev(K.RAISE, 0, PRE, 30), ev(K.CALL, 1, PRE, 10),
        deal(FLOP, "2c8c3h"), ev(K.BET, 0, FLOP, 10), ev(K.CALL, 1, FLOP, 10),
        deal(TURN, "9c"), ev(K.CHECK, 0, TURN), ev(K.BET, 1, TURN, 20), ev(K.CALL, 0, TURN, 20),
        deal(RIVER, "Kh"), ev(K.CHECK, 0, RIVER), ev(K.BET, 1, RIVER, 20), ev(K.CALL, 0, RIVER, 20),
        ev(K.SHOW, 0, SHOW, 0, "TdAs"), ev(K.SHOW, 1, SHOW, 0, "8hTc"),
    ]
    hand = HandStates(Betting.LIMIT, 2, button=1, seat=0, hand_number=0, hole=parse_cards("TdAs"))
    assert hand.initial() == "MATCHSTATE:0:0::TdAs|"
    assert hand.states(history, final=True) == lines("""
        S-> MATCHSTATE:0:0::TdAs|
        S-> MATCHSTATE:0:0:r:TdAs|
        S-> MATCHSTATE:0:0:rr:TdAs|
        S-> MATCHSTATE:0:0:rrc/:TdAs|/2c8c3h
        S-> MATCHSTATE:0:0:rrc/r:TdAs|/2c8c3h
        S-> MATCHSTATE:0:0:rrc/rc/:TdAs|/2c8c3h/9c
        S-> MATCHSTATE:0:0:rrc/rc/c:TdAs|/2c8c3h/9c
        S-> MATCHSTATE:0:0:rrc/rc/cr:TdAs|/2c8c3h/9c
        S-> MATCHSTATE:0:0:rrc/rc/crc/:TdAs|/2c8c3h/9c/Kh
        S-> MATCHSTATE:0:0:rrc/rc/crc/c:TdAs|/2c8c3h/9c/Kh
        S-> MATCHSTATE:0:0:rrc/rc/crc/cr:TdAs|/2c8c3h/9c/Kh
        S-> MATCHSTATE:0:0:rrc/rc/crc/crc:TdAs|8hTc/2c8c3h/9c/Kh
    """)
    # before the hand is over nobody's cards but the viewer's are shown, whatever the history holds
    assert hand.states(history)[-1] == "MATCHSTATE:0:0:rrc/rc/crc/crc:TdAs|/2c8c3h/9c/Kh"


def test_heads_up_no_limit_raises_are_whole_hand_totals_and_an_all_in_jumps_to_the_river() -> None:
    """protocol.md, two player no-limit, hand 31, seen by position 1 (the button): the arena's raise-to totals per
    street become the chips put in over the whole hand, the all-in called on the turn deals the river at once."""
    history = [
        ev(K.POST_SMALL_BLIND, 0, PRE, 50), ev(K.POST_BIG_BLIND, 1, PRE, 100),
        ev(K.DEAL_HOLE, 0, PRE, 0, "JdTc"), ev(K.DEAL_HOLE, 1, PRE),
        ev(K.RAISE, 0, PRE, 300), ev(K.RAISE, 1, PRE, 900), ev(K.CALL, 0, PRE, 600),
        deal(FLOP, "6dJc9c"), ev(K.BET, 1, FLOP, 900), ev(K.RAISE, 0, FLOP, 2700), ev(K.RAISE, 1, FLOP, 8100),
        ev(K.CALL, 0, FLOP, 5400),
        deal(TURN, "Kh"), ev(K.ALL_IN, 1, TURN, 11000), ev(K.ALL_IN, 0, TURN, 11000),
        deal(RIVER, "Qc"), ev(K.SHOW, 1, SHOW, 0, "KsJs"), ev(K.SHOW, 0, SHOW, 0, "JdTc"),
        ev(K.WIN_POT, 1, SHOW, 40000),
    ]
    hand = HandStates(Betting.NO_LIMIT, 2, button=0, seat=0, hand_number=31, hole=parse_cards("JdTc"))
    assert hand.states(history, final=True) == lines("""
        S-> MATCHSTATE:1:31::|JdTc
        S-> MATCHSTATE:1:31:r300:|JdTc
        S-> MATCHSTATE:1:31:r300r900:|JdTc
        S-> MATCHSTATE:1:31:r300r900c/:|JdTc/6dJc9c
        S-> MATCHSTATE:1:31:r300r900c/r1800:|JdTc/6dJc9c
        S-> MATCHSTATE:1:31:r300r900c/r1800r3600:|JdTc/6dJc9c
        S-> MATCHSTATE:1:31:r300r900c/r1800r3600r9000:|JdTc/6dJc9c
        S-> MATCHSTATE:1:31:r300r900c/r1800r3600r9000c/:|JdTc/6dJc9c/Kh
        S-> MATCHSTATE:1:31:r300r900c/r1800r3600r9000c/r20000:|JdTc/6dJc9c/Kh
        S-> MATCHSTATE:1:31:r300r900c/r1800r3600r9000c/r20000c/:KsJs|JdTc/6dJc9c/Kh/Qc
    """)


def test_three_player_limit_with_folds_and_no_showdown() -> None:
    """protocol.md, three player limit, hand 55, seen by position 2 (the button, first to act pre-flop)."""
    history = [
        ev(K.POST_SMALL_BLIND, 0, PRE, 5), ev(K.POST_BIG_BLIND, 1, PRE, 10),
        ev(K.DEAL_HOLE, 0, PRE), ev(K.DEAL_HOLE, 1, PRE), ev(K.DEAL_HOLE, 2, PRE, 0, "AsTs"),
        ev(K.RAISE, 2, PRE, 20), ev(K.CALL, 0, PRE, 15), ev(K.CALL, 1, PRE, 10),
        deal(FLOP, "4cJh8h"), ev(K.BET, 0, FLOP, 10), ev(K.FOLD, 1, FLOP), ev(K.CALL, 2, FLOP, 10),
        deal(TURN, "Kd"), ev(K.BET, 0, TURN, 20), ev(K.CALL, 2, TURN, 20),
        deal(RIVER, "8c"), ev(K.BET, 0, RIVER, 20), ev(K.FOLD, 2, RIVER),
        ev(K.UNCALLED_RETURN, 0, RIVER, 20), ev(K.WIN_POT, 0, SHOW, 130),
    ]
    hand = HandStates(Betting.LIMIT, 3, button=2, seat=2, hand_number=55, hole=parse_cards("AsTs"))
    assert hand.states(history, final=True) == lines("""
        S-> MATCHSTATE:2:55::||AsTs
        S-> MATCHSTATE:2:55:r:||AsTs
        S-> MATCHSTATE:2:55:rc:||AsTs
        S-> MATCHSTATE:2:55:rcc/:||AsTs/4cJh8h
        S-> MATCHSTATE:2:55:rcc/r:||AsTs/4cJh8h
        S-> MATCHSTATE:2:55:rcc/rf:||AsTs/4cJh8h
        S-> MATCHSTATE:2:55:rcc/rfc/:||AsTs/4cJh8h/Kd
        S-> MATCHSTATE:2:55:rcc/rfc/r:||AsTs/4cJh8h/Kd
        S-> MATCHSTATE:2:55:rcc/rfc/rc/:||AsTs/4cJh8h/Kd/8c
        S-> MATCHSTATE:2:55:rcc/rfc/rc/r:||AsTs/4cJh8h/Kd/8c
        S-> MATCHSTATE:2:55:rcc/rfc/rc/rf:||AsTs/4cJh8h/Kd/8c
    """)


def test_three_player_no_limit_all_in_before_the_flop_runs_out_and_shows_only_who_reached_the_showdown() -> None:
    """The small blind (position 0) moves all in over a raise, the big blind folds, the button calls all in: the
    final state has every round's separator and the whole board, and the cards of the two players who showed."""
    history = [
        ev(K.POST_SMALL_BLIND, 0, PRE, 50), ev(K.POST_BIG_BLIND, 1, PRE, 100),
        ev(K.DEAL_HOLE, 0, PRE, 0, "AhKh"), ev(K.DEAL_HOLE, 1, PRE), ev(K.DEAL_HOLE, 2, PRE),
        ev(K.RAISE, 2, PRE, 300), ev(K.ALL_IN, 0, PRE, 20000), ev(K.FOLD, 1, PRE), ev(K.ALL_IN, 2, PRE, 20000),
        deal(FLOP, "2c3d4h"), deal(TURN, "5s"), deal(RIVER, "6c"),
        ev(K.SHOW, 0, SHOW, 0, "AhKh"), ev(K.SHOW, 2, SHOW, 0, "QsQd"),
    ]
    hand = HandStates(Betting.NO_LIMIT, 3, button=2, seat=0, hand_number=7, hole=parse_cards("AhKh"))
    assert hand.states(history, final=True) == [
        "MATCHSTATE:0:7::AhKh||",
        "MATCHSTATE:0:7:r300:AhKh||",
        "MATCHSTATE:0:7:r300r20000:AhKh||",
        "MATCHSTATE:0:7:r300r20000f:AhKh||",
        "MATCHSTATE:0:7:r300r20000fc///:AhKh||QsQd/2c3d4h/5s/6c",
    ]


def test_a_raise_on_a_later_street_counts_the_chips_of_every_street_before_it() -> None:
    """A call pre-flop and a check-raise on the flop: r<N> is the whole-hand total, blinds included."""
    history = [
        ev(K.POST_SMALL_BLIND, 1, PRE, 50), ev(K.POST_BIG_BLIND, 0, PRE, 100), ev(K.DEAL_HOLE, 0, PRE, 0, "2c2d"),
        ev(K.CALL, 1, PRE, 50), ev(K.CHECK, 0, PRE), deal(FLOP, "AsKsQs"),
        ev(K.CHECK, 0, FLOP), ev(K.BET, 1, FLOP, 100), ev(K.RAISE, 0, FLOP, 350), ev(K.FOLD, 1, FLOP),
    ]
    hand = HandStates(Betting.NO_LIMIT, 2, button=1, seat=0, hand_number=2, hole=parse_cards("2c2d"))
    assert hand.states(history, final=True)[-1] == "MATCHSTATE:0:2:cc/cr200r450f:2c2d|/AsKsQs"
