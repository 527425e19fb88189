"""One test (or a few) per rule of RULES.md that concerns one hand, named after the rule."""

from __future__ import annotations

import pytest

from arena.cards import parse_cards
from arena.engine import (
    ActionKind,
    AnteMode,
    ConfigError,
    DeckError,
    EventKind,
    Hand,
    IllegalActionError,
    Street,
    Structure,
    TableConfig,
    seat_view,
)
from tests.engine.table import play, rigged, snapshot

NL = TableConfig(50, 100)
PL = TableConfig(50, 100, Structure.POT_LIMIT)
FL = TableConfig(50, 100, Structure.FIXED_LIMIT)


def refused(hand: Hand, move: str, rule: str) -> IllegalActionError:
    """Assert ``move`` is refused citing ``rule`` and changes nothing."""
    before = snapshot(hand)
    with pytest.raises(IllegalActionError) as info:
        play(hand, move)
    assert info.value.rule == rule, str(info.value)
    assert snapshot(hand) == before
    return info.value


# ----------------------------------------------------------------------------- R1 cards and deck


def test_R1_1_deck_must_not_repeat_a_card() -> None:
    deck = list(range(52))
    deck[5] = deck[0]
    with pytest.raises(DeckError) as info:
        Hand(NL, [1000, 1000], deck)
    assert info.value.rule == "R1.1"


def test_R1_1_cards_outside_the_deck_are_refused() -> None:
    with pytest.raises(DeckError):
        Hand(NL, [1000, 1000], [*range(11), 52])


def test_R1_4_a_card_is_burned_before_flop_turn_and_river() -> None:
    deck = list(range(52))
    hand = Hand(NL, [1000, 1000], deck, button=0)
    play(hand, "0 call", "1 check", "1 check", "0 check", "1 check", "0 check")
    # 4 hole cards (0..3), burn 4, flop 5-7, burn 8, turn 9, burn 10, river 11
    assert hand.board == [5, 6, 7, 9, 11]
    burned = {4, 8, 10}
    for seat in range(2):
        for event in seat_view(hand, seat).history:
            assert not burned & set(event.cards)


# ----------------------------------------------------------------------------- R2 players and positions


@pytest.mark.parametrize("seats", [2, 6, 10, 22])
def test_R2_1_two_to_twenty_two_seats(seats: int) -> None:
    hand = Hand(NL, [1000] * seats, list(range(52)))
    assert hand.num_seats == seats
    assert hand.to_act is not None


@pytest.mark.parametrize("seats", [0, 1, 23, 30])
def test_R2_1_other_seat_counts_are_refused(seats: int) -> None:
    with pytest.raises(ConfigError) as info:
        Hand(NL, [1000] * seats, list(range(52)))
    assert info.value.rule == "R2.1"
    assert "2 to 22" in str(info.value)


def test_R2_1_twenty_two_seats_use_the_whole_deck() -> None:
    hand = Hand(NL, [1000] * 22, list(range(52)))
    while hand.to_act is not None:
        play(hand, f"{hand.to_act} call" if hand.legal_actions().can_call else f"{hand.to_act} check")
    dealt = [c for pair in hand.hole for c in pair] + hand.board
    assert len(set(dealt)) == 49  # and 3 burns: 52


def test_R2_2_button_must_be_a_seat() -> None:
    with pytest.raises(ConfigError) as info:
        Hand(NL, [1000] * 3, list(range(52)), button=3)
    assert info.value.rule == "R2.2"


def test_R2_3_blinds_are_left_of_the_button() -> None:
    hand = Hand(NL, [1000] * 4, list(range(52)), button=2)
    assert (hand.small_blind_seat, hand.big_blind_seat) == (3, 0)
    assert hand.bets == [100, 0, 0, 50]
    assert hand.to_act == 1  # R5.2: left of the big blind


def test_R2_3_heads_up_button_posts_small_blind_and_acts_first_preflop_last_after() -> None:
    hand = Hand(NL, [1000, 1000], list(range(52)), button=1)
    assert (hand.small_blind_seat, hand.big_blind_seat) == (1, 0)
    assert hand.bets == [100, 50]
    assert hand.to_act == 1
    play(hand, "1 call", "0 check")
    assert hand.street == Street.FLOP
    assert hand.to_act == 0  # the big blind acts first after the flop


def test_R2_4_entry_blind_is_a_live_big_blind_with_the_option() -> None:
    hand = rigged([1000] * 5, button=0, entry_blinds=[4])
    assert hand.bets == [0, 50, 100, 0, 100]
    assert [e.kind for e in hand.events[:3]] == [
        EventKind.POST_SMALL_BLIND,
        EventKind.POST_BIG_BLIND,
        EventKind.POST_ENTRY_BLIND,
    ]
    play(hand, "3 call")
    assert hand.to_act == 4
    legal = hand.legal_actions()
    assert legal.can_check and legal.can_raise  # plays normally: checks its live blind or raises


def test_R2_4_entry_blind_out_of_the_table_is_refused() -> None:
    with pytest.raises(ConfigError) as info:
        rigged([1000] * 3, entry_blinds=[7])
    assert info.value.rule == "R2.4"


# ----------------------------------------------------------------------------- R3 forced bets


def test_R3_1_blinds_are_live() -> None:
    hand = Hand(NL, [1000] * 3, list(range(52)), button=0)
    play(hand, "0 call", "1 call")
    assert hand.to_act == 2
    assert hand.legal_actions().can_check  # the big blind's 100 counts toward its bet
    assert hand.committed == [100, 100, 100]


def test_R3_1_blinds_must_be_sane() -> None:
    with pytest.raises(ConfigError):
        TableConfig(100, 50)
    with pytest.raises(ConfigError):
        TableConfig(0, 0)


def test_R3_2_antes_are_dead_for_every_player() -> None:
    config = TableConfig(50, 100, ante=10, ante_mode=AnteMode.EACH)
    hand = Hand(config, [1000] * 3, list(range(52)), button=0)
    assert hand.committed == [10, 60, 110]
    assert hand.bets == [0, 50, 100]  # antes do not count toward a bet
    assert hand.legal_actions().call_amount == 100


def test_R3_2_big_blind_ante_is_posted_by_the_big_blind_only() -> None:
    config = TableConfig(50, 100, ante=100, ante_mode=AnteMode.BIG_BLIND)
    hand = Hand(config, [1000] * 4, list(range(52)), button=0)
    assert hand.committed == [0, 50, 200, 0]
    assert hand.bets == [0, 50, 100, 0]


def test_R3_2_an_ante_needs_a_mode() -> None:
    with pytest.raises(ConfigError) as info:
        TableConfig(ante=10)
    assert info.value.rule == "R3.2"


def test_R3_3_a_short_blind_posts_what_it_has_and_is_all_in() -> None:
    hand = Hand(NL, [1000, 1000, 60], list(range(52)), button=0)
    assert hand.bets == [0, 50, 60]
    assert hand.stacks[2] == 0
    assert hand.events[1].all_in
    play(hand, "0 call", "1 call")
    assert hand.committed == [60, 60, 60]


def test_R3_3_a_short_ante_posts_what_it_has() -> None:
    config = TableConfig(50, 100, ante=100, ante_mode=AnteMode.EACH)
    hand = Hand(config, [1000, 1000, 1000, 40], list(range(52)), button=0)
    assert hand.committed[3] == 40 and hand.stacks[3] == 0


# ----------------------------------------------------------------------------- R4 dealing


def test_R4_1_hole_cards_one_at_a_time_from_the_left_of_the_button() -> None:
    deck = list(range(52))
    hand = Hand(NL, [1000] * 3, deck, button=1)
    # seat 2 is first left of the button, then 0, then 1; twice round
    assert hand.hole[2] == (0, 3)
    assert hand.hole[0] == (1, 4)
    assert hand.hole[1] == (2, 5)


def test_R4_2_a_seat_sees_only_its_own_hole_cards() -> None:
    hand = rigged([1000] * 3, {0: "AsKs", 1: "2c2d", 2: "7h8h"})
    view = seat_view(hand, 1)
    assert view.hole_cards == tuple(parse_cards("2c2d"))
    seen = {c for event in view.history for c in event.cards}
    assert seen == set(parse_cards("2c2d"))


# ----------------------------------------------------------------------------- R5 betting order and rounds


def test_R5_1_four_betting_rounds() -> None:
    hand = Hand(NL, [1000, 1000], list(range(52)), button=0)
    streets = []
    while hand.to_act is not None:
        streets.append(hand.street)
        legal = hand.legal_actions()
        play(hand, f"{legal.seat} check" if legal.can_check else f"{legal.seat} call")
    assert sorted(set(streets)) == [Street.PREFLOP, Street.FLOP, Street.TURN, Street.RIVER]
    assert len(hand.board) == 5


def test_R5_2_big_blind_has_the_option() -> None:
    hand = Hand(NL, [1000] * 3, list(range(52)), button=0)
    assert hand.to_act == 0
    play(hand, "0 call", "1 call")
    assert hand.to_act == 2 and hand.street == Street.PREFLOP
    play(hand, "2 raise 300")
    assert hand.to_act == 0


def test_R5_3_after_the_flop_first_seat_left_of_the_button_acts_first() -> None:
    hand = Hand(NL, [1000] * 4, list(range(52)), button=2)
    play(hand, "1 call", "2 call", "3 fold", "0 check")
    assert hand.street == Street.FLOP
    assert hand.to_act == 0  # seat 3 (first left of the button) folded


def test_R5_4_round_ends_only_when_everyone_acted_and_matched() -> None:
    hand = Hand(NL, [1000] * 3, list(range(52)), button=0)
    play(hand, "0 raise 300", "1 call")
    assert hand.street == Street.PREFLOP and hand.to_act == 2
    play(hand, "2 raise 600")
    assert hand.to_act == 0  # must act again on the raise
    play(hand, "0 call", "1 call")
    assert hand.street == Street.FLOP


def test_R5_5_everybody_folds_the_last_player_wins_without_showing() -> None:
    hand = Hand(NL, [1000] * 3, list(range(52)), button=0)
    play(hand, "0 raise 300", "1 fold", "2 fold")
    assert hand.is_over
    assert hand.payoffs == [150, -50, -100]
    assert not hand.shown
    kinds = [e.kind for e in hand.events]
    assert EventKind.SHOW not in kinds and EventKind.UNCALLED_RETURN in kinds


def test_R5_6_all_in_runs_out_the_board_without_betting() -> None:
    hand = rigged([500, 1000], {0: "AsAd", 1: "KsKd"}, board="2c7d9hJs3c", button=0)
    play(hand, "0 allin", "1 call")
    assert hand.is_over
    assert hand.board == parse_cards("2c7d9hJs3c")
    assert hand.stacks == [1000, 500]


def test_R5_6_one_player_left_with_chips_is_not_asked_to_act() -> None:
    hand = Hand(NL, [1000, 1000, 300], list(range(52)), button=0)
    play(hand, "0 fold", "1 call", "2 allin", "1 call")
    assert hand.is_over  # seat 1 alone has chips: nobody to bet against


# ----------------------------------------------------------------------------- R6 actions


def test_R6_1_check_only_when_nothing_is_owed() -> None:
    hand = Hand(NL, [1000] * 3, list(range(52)), button=0)
    error = refused(hand, "0 check", "R6.1")
    assert "call 100" in str(error)


def test_R6_1_fold_only_facing_a_bet_and_call_only_facing_one() -> None:
    hand = Hand(NL, [1000] * 3, list(range(52)), button=0)
    play(hand, "0 call", "1 call")
    refused(hand, "2 fold", "R6.1")
    refused(hand, "2 call", "R6.1")


def test_R6_1_all_in_is_a_raise_or_a_call() -> None:
    hand = Hand(NL, [1000, 150], list(range(52)), button=0)
    play(hand, "0 raise 300", "1 allin")  # 150 is less than the 300 owed: an all-in call
    assert hand.committed == [150, 150] and hand.is_over


def test_R6_2_amounts_are_raise_to_totals_for_the_street() -> None:
    hand = Hand(NL, [1000] * 2, list(range(52)), button=0)
    play(hand, "0 raise 300")
    assert hand.bets == [300, 100] and hand.stacks[0] == 700
    play(hand, "1 raise 900")
    assert hand.bets == [300, 900] and hand.stacks[1] == 100


def test_R6_2_a_call_for_more_than_the_stack_is_all_in_for_less() -> None:
    hand = Hand(NL, [1000, 400], list(range(52)), button=1)
    play(hand, "1 call", "0 raise 800")
    legal = hand.legal_actions()
    assert legal.call_amount == 300 and not legal.can_raise
    play(hand, "1 call")
    assert hand.committed == [400, 400] and hand.is_over  # 400 of seat 0 returned uncalled


def test_R6_3_out_of_turn_is_refused_and_changes_nothing() -> None:
    hand = Hand(NL, [1000] * 3, list(range(52)), button=0)
    error = refused(hand, "1 call", "R6.3")
    assert "seat 0 is to act" in str(error) and error.seat == 1


def test_R6_3_folded_player_cannot_act() -> None:
    hand = Hand(NL, [1000] * 3, list(range(52)), button=0)
    play(hand, "0 fold", "1 call", "2 check")
    error = refused(hand, "0 check", "R6.3")
    assert "folded" in str(error)


def test_R6_3_negative_and_non_integer_amounts_are_refused() -> None:
    hand = Hand(NL, [1000] * 2, list(range(52)), button=0)
    refused(hand, "0 raise -300", "R6.3")
    before = snapshot(hand)
    for amount in (250.5, "300", None, True):
        with pytest.raises(IllegalActionError) as info:
            hand.apply(0, ActionKind.RAISE, amount)  # type: ignore[arg-type]
        assert info.value.rule == "R6.3"
    assert snapshot(hand) == before


def test_R6_3_nothing_is_accepted_after_the_hand_is_over() -> None:
    hand = Hand(NL, [1000] * 2, list(range(52)), button=0)
    play(hand, "0 fold")
    with pytest.raises(IllegalActionError) as info:
        play(hand, "1 check")
    assert info.value.rule == "R6.3"


# ----------------------------------------------------------------------------- R7 betting structures


def test_R7_1_no_limit_bet_is_at_least_a_big_blind_and_at_most_the_stack() -> None:
    hand = Hand(NL, [1000] * 2, list(range(52)), button=0)
    play(hand, "0 call", "1 check")
    legal = hand.legal_actions()
    assert (legal.min_raise_to, legal.max_raise_to) == (100, 900)
    refused(hand, "1 bet 99", "R7.1")
    error = refused(hand, "1 bet 901", "R7.1")
    assert "all-in" in str(error)


def test_R7_2_minimum_raise_is_the_largest_increment() -> None:
    """Worked example 4: blinds 50/100, a raise to 250: the minimum re-raise is to 400."""
    hand = Hand(NL, [5000] * 3, list(range(52)), button=0)
    play(hand, "0 raise 250")
    assert hand.legal_actions().min_raise_to == 400
    refused(hand, "1 raise 399", "R7.2")
    play(hand, "1 raise 400")
    assert hand.legal_actions().min_raise_to == 550


def test_R7_3_a_stack_between_call_and_minimum_raise_may_only_call_fold_or_go_all_in() -> None:
    hand = Hand(NL, [5000, 5000, 350], list(range(52)), button=0)
    play(hand, "0 raise 250", "1 fold")
    legal = hand.legal_actions()
    assert legal.call_amount == 150
    assert (legal.min_raise_to, legal.max_raise_to) == (350, 350)  # only all-in
    refused(hand, "2 raise 340", "R7.2")
    play(hand, "2 raise 350")
    assert hand.stacks[2] == 0


def test_R7_3_no_raise_when_the_stack_does_not_cover_more_than_the_call() -> None:
    hand = Hand(NL, [5000, 5000, 250], list(range(52)), button=0)
    play(hand, "0 raise 300", "1 fold")
    assert not hand.legal_actions().can_raise
    refused(hand, "2 raise 250", "R7.3")


def test_R7_4_short_all_in_does_not_reopen_for_those_who_acted() -> None:
    hand = Hand(NL, [5000, 5000, 5000, 450], list(range(52)), button=3)
    # seat 0 SB, seat 1 BB, seat 2 first to act
    play(hand, "2 raise 300", "3 allin")  # 450: increment 150 < 200, short
    assert hand.to_act == 0
    assert hand.legal_actions().can_raise  # seat 0 has not acted: may raise
    play(hand, "0 call", "1 call")
    assert hand.to_act == 2
    legal = hand.legal_actions()
    assert legal.call_amount == 150 and not legal.can_raise
    error = refused(hand, "2 raise 900", "R7.4")
    assert "not reopened" in str(error)


def test_R7_4_several_short_all_ins_that_add_up_to_a_full_raise_reopen() -> None:
    hand = Hand(NL, [5000, 5000, 5000, 250, 330], list(range(52)), button=4)
    # seat 0 SB, 1 BB, 2 first to act
    play(hand, "2 raise 200")  # increment 100
    play(hand, "3 allin")  # to 250: +50, short
    play(hand, "4 allin")  # to 330: +80, short; 130 since seat 2 acted >= 100
    play(hand, "0 fold", "1 call")
    assert hand.to_act == 2
    legal = hand.legal_actions()
    assert legal.can_raise and legal.min_raise_to == 430


def test_R7_5_pot_limit_maximum_is_the_pot_after_the_call() -> None:
    """Worked example 5: pot-limit, blinds 50/100, one call: the maximum raise is to 450."""
    hand = Hand(PL, [5000] * 4, list(range(52)), button=0)
    play(hand, "3 call")
    legal = hand.legal_actions()
    assert legal.seat == 0 and legal.max_raise_to == 450
    error = refused(hand, "0 raise 451", "R7.5")
    assert "450" in str(error)
    play(hand, "0 raise 450")


def test_R7_6_fixed_limit_units_and_the_cap() -> None:
    hand = Hand(FL, [5000] * 3, list(range(52)), button=0)
    legal = hand.legal_actions()
    assert (legal.min_raise_to, legal.max_raise_to) == (200, 200)
    refused(hand, "0 raise 300", "R7.6")
    play(hand, "0 raise 200", "1 raise 300", "2 raise 400")  # bet + 3 raises = 4 bets
    assert not hand.legal_actions().can_raise
    error = refused(hand, "0 raise 500", "R7.6")
    assert "capped" in str(error)
    play(hand, "0 call", "1 call")
    assert hand.street == Street.FLOP
    play(hand, "1 bet 100")
    play(hand, "2 call", "0 call")
    assert hand.street == Street.TURN
    assert hand.legal_actions().min_raise_to == 200  # the big bet on turn and river


def test_R7_6_cap_can_be_lifted_heads_up() -> None:
    config = TableConfig(50, 100, Structure.FIXED_LIMIT, uncapped_heads_up=True)
    hand = Hand(config, [5000] * 2, list(range(52)), button=0)
    play(hand, "0 raise 200", "1 raise 300", "0 raise 400", "1 raise 500")
    assert hand.legal_actions().can_raise
    capped = Hand(FL, [5000] * 2, list(range(52)), button=0)
    play(capped, "0 raise 200", "1 raise 300", "0 raise 400")
    assert not capped.legal_actions().can_raise


def test_R7_6_short_all_in_in_fixed_limit_does_not_reopen() -> None:
    hand = Hand(FL, [5000, 5000, 5000, 250], list(range(52)), button=3)
    play(hand, "2 raise 200", "3 allin")  # 250: half a unit, short
    play(hand, "0 call")
    assert hand.legal_actions().min_raise_to == 350  # a full unit over the all-in, as PokerKit has it
    play(hand, "1 call")
    assert not hand.legal_actions().can_raise


# ----------------------------------------------------------------------------- R8 showdown


def test_R8_1_R8_2_best_five_of_seven_wins() -> None:
    hand = rigged([1000, 1000], {0: "AhKh", 1: "2c2d"}, board="QhJhTh3s4d", button=0)
    play(hand, "0 call", "1 check", *(["1 check", "0 check"] * 3))
    assert hand.payoffs == [100, -100]


def test_R8_3_last_river_aggressor_shows_first() -> None:
    hand = rigged([1000] * 3, {0: "AhKh", 1: "2c2d", 2: "7s8s"}, board="QhJh3c3s4d", button=0)
    play(hand, "0 call", "1 call", "2 check")
    play(hand, "1 check", "2 check", "0 check", "1 check", "2 check", "0 check")
    play(hand, "1 check", "2 bet 100", "0 call", "1 call")
    shows = [e.seat for e in hand.events if e.kind is EventKind.SHOW]
    assert shows == [2, 0, 1]


def test_R8_3_without_a_river_bet_first_left_of_the_button_shows_first() -> None:
    hand = rigged([1000] * 3, {0: "AhKh", 1: "2c2d", 2: "7s8s"}, board="QhJh3c3s4d", button=1)
    play(hand, "1 call", "2 call", "0 check", *(["2 check", "0 check", "1 check"] * 3))
    shows = [e.seat for e in hand.events if e.kind is EventKind.SHOW]
    assert shows == [2, 0, 1]


def test_R8_4_reveal_all_by_default_and_muck_when_the_table_allows() -> None:
    cards = {0: "AhAd", 1: "2c3d", 2: "KsKd"}
    board = "QhJh7c8s4d"
    moves = ["0 call", "1 call", "2 check", *(["1 check", "2 check", "0 check"] * 3)]
    revealed = play(rigged([1000] * 3, cards, board, button=0), *moves)
    assert set(revealed.shown) == {0, 1, 2}
    mucking = TableConfig(50, 100, reveal_all=False)
    hand = play(rigged([1000] * 3, cards, board, button=0, config=mucking), *moves)
    # seat 1 shows first (left of the button); kings then aces each beat what was shown before: all show
    assert set(hand.shown) == {0, 1, 2}
    assert [e.seat for e in hand.events if e.kind is EventKind.MUCK] == []
    late = play(rigged([1000] * 3, {0: "2c3d", 1: "AhAd", 2: "KsKd"}, board, button=0, config=mucking), *moves)
    assert [e.seat for e in late.events if e.kind is EventKind.MUCK] == [2, 0]
    assert set(late.shown) == {1}
    assert late.hand_values.keys() == {0, 1, 2}  # the referee keeps every card


# ----------------------------------------------------------------------------- R10 pots


def test_R10_example_1_three_all_ins_main_side_and_uncalled() -> None:
    """Worked example 1: A 60, B 80, C 100 all-in: main 180, side 40 (B, C), C's extra 20 returned."""
    config = TableConfig(5, 10)
    # C (100) on the button, A (60) small blind, B (80) big blind
    hand = rigged([100, 60, 80], {1: "AsAd", 2: "KsKd", 0: "QsQd"}, board="2c7d9hJc3s", button=0, config=config)
    play(hand, "0 allin", "1 call", "2 call")
    returns = [e for e in hand.events if e.kind is EventKind.UNCALLED_RETURN]
    assert [(e.seat, e.amount) for e in returns] == [(0, 20)]
    wins = [(e.seat, e.amount, e.pot) for e in hand.events if e.kind is EventKind.WIN_POT]
    assert wins == [(1, 180, 0), (2, 40, 1)]
    assert hand.stacks == [20, 180, 40]


def test_R10_example_2_six_players_four_side_pots() -> None:
    """Worked example 2: F folds after 500; A 50, B 250, C 350 all-in; D and E 800. Ranks F > A > B > D > E > C."""
    config = TableConfig(5, 10)
    holes = {0: "9c9d", 1: "AhAd", 2: "3c5d", 3: "QcQh", 4: "JcJh", 5: "KcKd"}
    hand = rigged([50, 250, 350, 1000, 1000, 1000], holes, board="2c7d9hKs4s", button=5, config=config)
    play(hand, "2 raise 50", "3 call", "4 call", "5 call", "0 call", "1 call")  # A all-in for 50
    play(hand, "1 bet 200", "2 allin", "3 call", "4 call", "5 call")  # B all-in 250, C all-in 350
    play(hand, "3 bet 150", "4 call", "5 call")
    play(hand, "3 bet 300", "4 call", "5 fold")
    assert hand.committed == [50, 250, 350, 800, 800, 500] and sum(hand.committed) == 2750
    pots = hand.pots()
    # R10.1 levels: 300 (x6), 1000, 400; the 450 (F's level) and 600 levels are both D and E's, so one pot
    assert [p.amount for p in pots] == [300, 1000, 400, 450 + 600]
    assert [p.eligible for p in pots] == [(0, 1, 2, 3, 4), (1, 2, 3, 4), (2, 3, 4), (3, 4)]
    assert hand.stacks == [300, 1000, 0, 200 + 400 + 450 + 600, 200, 500]


def test_R10_example_3_odd_chip_goes_closest_left_of_the_button() -> None:
    """Worked example 3: A..E, A on the button, chip 10: C, D, E split 1000: C 340, D and E 330."""
    config = TableConfig(50, 100, ante=10, ante_mode=AnteMode.EACH, chip=10)
    holes = {0: "4c5c", 1: "4d5d", 2: "2c3c", 3: "2d3d", 4: "2h3h"}
    hand = rigged([5000] * 5, holes, board="ThJdQsKcAs", button=0, config=config)
    play(hand, "3 raise 300", "4 call", "0 fold", "1 fold", "2 call")
    assert hand.pot_total == 1000
    play(hand, *(["2 check", "3 check", "4 check"] * 3))
    wins = {e.seat: e.amount for e in hand.events if e.kind is EventKind.WIN_POT}
    assert wins == {2: 340, 3: 330, 4: 330}


def test_R10_example_6_eight_all_ins_make_a_main_pot_and_seven_side_pots() -> None:
    """Worked example 6: eight all-ins of eight sizes (and a covering caller, so no level is uncalled)."""
    config = TableConfig(5, 10)
    stacks = [100, 200, 300, 400, 500, 600, 700, 800, 5000]
    hand = Hand(config, stacks, list(range(52)), button=8)
    for seat in range(2, 8):
        play(hand, f"{seat} allin")
    play(hand, "8 call", "0 call", "1 call")
    assert hand.is_over
    # pots are recomputed from the final contributions, before payouts
    from arena.engine import build_pots

    pots = build_pots(hand.committed, hand.folded)
    assert len(pots) == 8
    assert [p.amount for p in pots] == [900, 800, 700, 600, 500, 400, 300, 200]
    assert sum(hand.stacks) == sum(stacks)


def test_R10_2_uncalled_bet_is_returned_not_won() -> None:
    hand = Hand(NL, [1000, 1000], list(range(52)), button=0)
    play(hand, "0 call", "1 check", "1 bet 500", "0 fold")
    returns = [(e.seat, e.amount) for e in hand.events if e.kind is EventKind.UNCALLED_RETURN]
    assert returns == [(1, 500)]
    wins = [(e.seat, e.amount) for e in hand.events if e.kind is EventKind.WIN_POT]
    assert wins == [(1, 200)]


def test_R10_2_dead_antes_are_never_returned_as_uncalled() -> None:
    config = TableConfig(50, 100, ante=100, ante_mode=AnteMode.BIG_BLIND)
    hand = Hand(config, [1000, 1000, 1000], list(range(52)), button=0)
    play(hand, "0 fold", "1 call", "2 check", "1 check", "2 bet 300", "1 fold")
    returns = [(e.seat, e.amount) for e in hand.events if e.kind is EventKind.UNCALLED_RETURN]
    assert returns == [(2, 300)]
    assert hand.payoffs == [0, -100, 100]


def test_R10_3_pots_are_settled_main_first_to_the_best_eligible_hand() -> None:
    config = TableConfig(5, 10)
    hand = rigged([100, 300, 300], {0: "AsAd", 1: "KsKd", 2: "QsQd"}, board="2c7d9hJc3s", button=0, config=config)
    play(hand, "0 allin", "1 allin", "2 call")
    wins = [(e.pot, e.seat, e.amount) for e in hand.events if e.kind is EventKind.WIN_POT]
    assert wins == [(0, 0, 300), (1, 1, 400)]


def test_R10_4_odd_chip_with_one_chip_units() -> None:
    holes = {0: "2c3c", 1: "2d3d", 2: "4h5h"}
    hand = rigged([1001, 1000, 1000], holes, "ThJdQsKcAs", button=2, config=TableConfig(1, 2))
    play(hand, "2 raise 5", "0 call", "1 raise 501", "2 fold", "0 call")
    play(hand, *(["0 check", "1 check"] * 3))
    wins = {e.seat: e.amount for e in hand.events if e.kind is EventKind.WIN_POT}
    assert wins == {0: 504, 1: 503}  # 1007 chips: seat 0 is closest left of the button


def test_R10_5_chips_are_conserved() -> None:
    hand = rigged([700, 1300, 2000], {0: "AsAd"}, button=1)
    play(hand, "1 raise 500", "2 allin", "0 allin", "1 call")
    assert hand.is_over
    assert sum(hand.stacks) == 4000 and sum(hand.payoffs or []) == 0


# ----------------------------------------------------------------------------- R11 stakes


def test_R11_1_every_seat_needs_a_positive_whole_stack() -> None:
    for bad in (0, -5, 10.5):
        with pytest.raises(ConfigError) as info:
            Hand(NL, [1000, bad], list(range(52)))  # type: ignore[list-item]
        assert info.value.rule == "R11.1"


def test_R6_1_all_in_is_the_largest_legal_commitment_in_every_structure() -> None:
    nl = play(Hand(NL, [1000, 1000], list(range(52)), button=0), "0 allin")
    assert nl.bets[0] == 1000
    pl = play(Hand(PL, [5000] * 3, list(range(52)), button=0), "0 allin")
    assert pl.bets[0] == 350  # the pot limit (R7.5): call 100, pot 250 + 100
    fl = play(Hand(FL, [5000] * 3, list(range(52)), button=0), "0 allin")
    assert fl.bets[0] == 200  # one unit (R7.6)
    closed = Hand(NL, [5000, 5000, 5000, 450], list(range(52)), button=3)
    play(closed, "2 raise 300", "3 allin", "0 call", "1 call")
    play(closed, "2 allin")  # raising is closed (R7.4): all-in means call
    assert closed.committed[2] == 450 and closed.street == Street.FLOP
    free = Hand(NL, [1000, 1000], list(range(52)), button=0)
    play(free, "0 call", "1 check", "1 check")
    assert free.to_act == 0
    play(free, "0 allin")  # nothing owed and raising open: a bet of the whole stack
    assert free.bets[0] == 900
