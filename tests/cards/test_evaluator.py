"""The hand evaluator against RULES.md R9: each rule, describe(), bad input, eval7 and every 7-card hand."""

from __future__ import annotations

import random
import warnings
from collections import Counter
from itertools import combinations
from math import comb

import pytest

from arena.cards import FULL_DECK, card_rank, card_suit, format_cards, parse_cards
from arena.cards.evaluator import (
    CATEGORY_SHIFT,
    TIEBREAK_COUNT,
    Category,
    HandRank,
    category_counts,
    category_counts_7,
    category_of,
    describe,
    evaluate,
    evaluate_many,
    hand_name,
    hand_names_by_top_bits,
    tiebreak_ranks,
)
from arena_sdk import _eval

with warnings.catch_warnings():  # eval7 calls deprecated pyparsing APIs when imported
    warnings.simplefilter("ignore", DeprecationWarning)
    import eval7

ROYAL_VALUE = (Category.STRAIGHT_FLUSH << CATEGORY_SHIFT) | (12 << 16)


def ev(text: str) -> int:
    """Evaluate cards given as text."""
    return evaluate(parse_cards(text))


def random_hands(count: int, size: int, seed: int) -> list[list[int]]:
    """``count`` seeded random hands of ``size`` distinct cards."""
    rng = random.Random(seed)
    return [rng.sample(FULL_DECK, size) for _ in range(count)]


# ----------------------------------------------------------------------------------------------------
# Categories


@pytest.mark.parametrize(
    ("hand", "category"),
    [
        ("As Kd 9h 7c 4s 3d 2c", Category.HIGH_CARD),
        ("As Ad 9h 7c 4s 3d 2c", Category.ONE_PAIR),
        ("As Ad 9h 9c 4s 3d 2c", Category.TWO_PAIR),
        ("As Ad Ah 9c 4s 3d 2c", Category.THREE_OF_A_KIND),
        ("9s 8d 7h 6c 5s 3d 2c", Category.STRAIGHT),
        ("As 9s 7s 4s 2s 3d 2c", Category.FLUSH),
        ("As Ad Ah 9c 9s 3d 2c", Category.FULL_HOUSE),
        ("As Ad Ah Ac 9s 3d 2c", Category.FOUR_OF_A_KIND),
        ("9s 8s 7s 6s 5s 3d 2c", Category.STRAIGHT_FLUSH),
        ("As Ks Qs Js Ts 3d 2c", Category.STRAIGHT_FLUSH),
        # five and six cards
        ("As Kd 9h 7c 4s", Category.HIGH_CARD),
        ("Ts Td 9h 9c 9s", Category.FULL_HOUSE),
        ("Ts Js Qs Ks 9s 9d", Category.STRAIGHT_FLUSH),
        ("2h 3h 4h 6h 7h Ah", Category.FLUSH),
        ("2h 3h 4h 5h 7h Ah", Category.STRAIGHT_FLUSH),
    ],
)
def test_category(hand: str, category: Category) -> None:
    value = ev(hand)
    assert category_of(value) is category
    assert value >> CATEGORY_SHIFT == category


def test_categories_are_ordered_as_r9() -> None:
    """R9: straight flush > quads > full house > flush > straight > trips > two pair > pair > high card."""
    weakest_of_each = [
        "7c 5d 4h 3s 2c",  # the weakest high card
        "2c 2d 3h 4s 5c",
        "2c 2d 3h 3s 4c",
        "2c 2d 2h 3s 4c",
        "Ac 2d 3h 4s 5c",  # the wheel
        "7c 5c 4c 3c 2c",
        "2c 2d 2h 3s 3c",
        "2c 2d 2h 2s 3c",
        "Ac 2c 3c 4c 5c",  # the steel wheel
    ]
    strongest_of_each = [
        "Ac Kd Qh Js 9c",
        "Ac Ad Kh Qs Jc",
        "Ac Ad Kh Ks Qc",
        "Ac Ad Ah Ks Qc",
        "Ac Kd Qh Js Tc",
        "Ac Kc Qc Jc 9c",
        "Ac Ad Ah Ks Kc",
        "Ac Ad Ah As Kc",
        "Ac Kc Qc Jc Tc",
    ]
    weak = [ev(h) for h in weakest_of_each]
    strong = [ev(h) for h in strongest_of_each]
    assert [category_of(v) for v in weak] == list(Category)
    assert [category_of(v) for v in strong] == list(Category)
    for i in range(len(Category) - 1):
        assert weak[i] <= strong[i] < weak[i + 1]
    assert list(Category) == sorted(Category)
    assert [c.value for c in Category] == list(range(9))


# ----------------------------------------------------------------------------------------------------
# R9.1 the ace plays high or low


def test_r9_1_wheel_is_the_lowest_straight() -> None:
    wheel = ev("Ah 2c 3d 4s 5h")
    assert category_of(wheel) is Category.STRAIGHT
    assert wheel < ev("2c 3d 4s 5h 6c")
    assert wheel > ev("Ah Ac Ad Ks Qh")  # still beats the best three of a kind
    assert tiebreak_ranks(wheel) == (3,)  # the five is its top card


def test_r9_1_six_high_beats_wheel_in_seven_cards() -> None:
    """A-2-3-4-5-6 plays as the six-high straight, not the wheel."""
    assert ev("Ah 2c 3d 4s 5h 6c Kd") == ev("2c 3d 4s 5h 6c")


def test_r9_1_ace_high_straight_is_the_highest() -> None:
    broadway = ev("Ah Kc Qd Js Th")
    assert tiebreak_ranks(broadway) == (12,)
    assert broadway > ev("Kc Qd Js Th 9h")
    assert broadway < ev("2c 3c 4c 5c 7c")  # any flush beats it


def test_r9_1_no_wrap_around() -> None:
    assert category_of(ev("Qh Kc Ad 2s 3h")) is Category.HIGH_CARD
    assert category_of(ev("Jh Qh Kh Ah 2h")) is Category.FLUSH


def test_r9_1_steel_wheel_is_the_lowest_straight_flush() -> None:
    steel = ev("As 2s 3s 4s 5s")
    assert category_of(steel) is Category.STRAIGHT_FLUSH
    assert steel < ev("2s 3s 4s 5s 6s")
    assert steel > ev("As Ad Ah Ac Ks")
    assert ev("As Ks Qs Js Ts") == ROYAL_VALUE == max(_eval.value_histogram(5))


def test_r9_1_straight_flush_needs_the_five_in_one_suit() -> None:
    """A flush and a straight in the same seven cards are not a straight flush unless the same five."""
    value = ev("9s 8s 7s 6s 2s 5h Ah")
    assert category_of(value) is Category.FLUSH
    assert tiebreak_ranks(value) == (7, 6, 5, 4, 0)


# ----------------------------------------------------------------------------------------------------
# R9.2 tiebreaks within a category: (weaker, stronger)


@pytest.mark.parametrize(
    ("weaker", "stronger"),
    [
        # straight flush: the top card
        ("5d 6d 7d 8d 9d", "6d 7d 8d 9d Td"),
        ("As 2s 3s 4s 5s", "2h 3h 4h 5h 6h"),
        # four of a kind: the quad, then the kicker
        ("Kc Kd Kh Ks Ac", "Ac Ad Ah As 2c"),
        ("9c 9d 9h 9s Qc", "9c 9d 9h 9s Kc"),
        # full house: the trips, then the pair
        ("3c 3d 3h Ac As", "4c 4d 4h 2c 2s"),
        ("Qc Qd Qh 7c 7s", "Qc Qd Qh 8c 8s"),
        # flush: all five cards from the highest down
        ("Kh Qh Jh 9h 7h", "Ah 3h 4h 5h 7h"),
        ("Ah Kh 9h 7h 5h", "Ah Kh Th 7h 5h"),
        ("Ah Kh Qh 7h 5h", "Ah Kh Qh 8h 2h"),
        ("Ah Kh Qh Jh 2h", "As Ks Qs Js 3s"),
        # straight: the top card
        ("4c 5d 6h 7s 8c", "5d 6h 7s 8c 9c"),
        ("9c Td Jh Qs Kc", "Td Jh Qs Kc Ac"),
        # three of a kind: the trips, then two kickers
        ("Jc Jd Jh As Kc", "Qc Qd Qh 3s 2c"),
        ("7c 7d 7h Ks 2c", "7c 7d 7h As 2c"),
        ("7c 7d 7h As 3c", "7c 7d 7h As 4c"),
        # two pair: the high pair, the low pair, then the kicker
        ("Kc Kd Qh Qs Ac", "Ac Ad 2h 2s 3c"),
        ("Ac Ad 8h 8s Kc", "Ac Ad 9h 9s 2c"),
        ("Ac Ad 9h 9s Qc", "Ac Ad 9h 9s Kc"),
        # one pair: the pair, then three kickers
        ("Kc Kd Ah Qs Jc", "Ac Ad 4h 3s 2c"),
        ("Tc Td Kh 7s 5c", "Tc Td Ah 3s 2c"),
        ("Tc Td Ah 7s 5c", "Tc Td Ah 8s 2c"),
        ("Tc Td Ah 8s 5c", "Tc Td Ah 8s 6c"),
        # high card: all five cards from the highest down
        ("Kc Qd Jh 9s 8c", "Ac 2d 3h 4s 6c"),
        ("Ac Kd Jh 9s 8c", "Ac Kd Qh 4s 3c"),
        ("Ac Kd Qh 9s 7c", "Ac Kd Qh Ts 2c"),
        ("Ac Kd Qh Js 8c", "Ac Kd Qh Js 9c"),
        ("Ac Kd Qh 9s 7c", "Ac Kd Qh 9s 8c"),
    ],
)
def test_r9_2_tiebreak(weaker: str, stronger: str) -> None:
    w, s = ev(weaker), ev(stronger)
    assert category_of(w) is category_of(s)
    assert w < s


@pytest.mark.parametrize(
    ("hand", "ranks"),
    [
        ("As Ks Qs Js Ts", (12,)),
        ("Ac Ad Ah As 2c", (12, 0)),
        ("3c 3d 3h Ac As", (1, 12)),
        ("Ah 3h 4h 5h 7h", (12, 5, 3, 2, 1)),
        ("9c Td Jh Qs Kc", (11,)),
        ("7c 7d 7h As 2c", (5, 12, 0)),
        ("Ac Ad 9h 9s Qc", (12, 7, 10)),
        ("Tc Td Ah 8s 5c", (8, 12, 6, 3)),
        ("Ac 2d 3h 4s 6c", (12, 4, 2, 1, 0)),
    ],
)
def test_r9_2_tiebreak_ranks_decode(hand: str, ranks: tuple[int, ...]) -> None:
    value = ev(hand)
    assert tiebreak_ranks(value) == ranks
    assert len(ranks) == TIEBREAK_COUNT[category_of(value)]


# ----------------------------------------------------------------------------------------------------
# R9.3 only five cards count, the board can play, suits never break a tie


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # the sixth and seventh cards never count
        ("As Ad Kh Qs Jc 3d 2h", "Ac Ah Ks Qd Jh 4c 2d"),
        ("Ac Kd Qh Js 9c 3d 2h", "Ah Ks Qd Jc 9h 4s 2d"),
        # three pairs: the third pair only gives the kicker
        ("As Ad Ks Kd Qs Qd 2c", "Ac Ah Kc Kh Qc 3h 2d"),
        # two sets of trips: the lower one plays as the pair
        ("Ks Kd Kc Qs Qd Qc 2c", "Ks Kd Kc Qs Qd 3c 2c"),
        # four of a kind with trips: one card of the trips is the kicker
        ("7c 7d 7h 7s Kc Kd Kh", "7c 7d 7h 7s Kc 2d 3h"),
        # a flush of six or seven cards counts its top five
        ("Ah Kh Qh 9h 7h 5h 3h", "As Ks Qs 9s 7s 2d 3c"),
        # straight of six or seven cards counts its top
        ("4c 5d 6h 7s 8c 9d Th", "6h 7s 8c 9d Th 2c 2d"),
        # suits never break a tie
        ("As Kd Qh Js 9c", "Ad Kh Qs Jc 9d"),
        ("Ah Kh 9h 7h 5h", "As Ks 9s 7s 5s"),
        ("2c 3c 4c 5c 6c", "2s 3s 4s 5s 6s"),
        ("As Ks Qs Js Ts", "Ah Kh Qh Jh Th"),
    ],
)
def test_r9_3_equal_five_cards_tie(a: str, b: str) -> None:
    assert ev(a) == ev(b)


def test_r9_3_board_plays_splits() -> None:
    board = "As Kd Qh Jc Ts"
    assert ev(board + " 2c 3d") == ev(board + " 4h 5c") == ev(board)
    board = "7c 7d 7h 7s Ac"
    assert ev(board + " 2c 3d") == ev(board + " Kh Qc") == ev(board + " Ad Kd")


def test_r9_3_seven_cards_is_the_best_five() -> None:
    """A 6- or 7-card value equals the best value among its 5-card subsets, on random hands."""
    for size, seed in ((7, 91), (6, 92)):
        for hand in random_hands(30_000, size, seed):
            assert evaluate(hand) == max(evaluate(five) for five in combinations(hand, 5))


def test_order_of_input_does_not_matter() -> None:
    rng = random.Random(5)
    for hand in random_hands(5_000, 7, 93):
        shuffled = hand[:]
        rng.shuffle(shuffled)
        assert evaluate(hand) == evaluate(shuffled) == evaluate(tuple(reversed(hand)))


# ----------------------------------------------------------------------------------------------------
# describe()


@pytest.mark.parametrize(
    ("hand", "text", "best_five"),
    [
        ("As Ks Qs Js Ts 2d 3c", "Royal flush", "AsKsQsJsTs"),
        ("5d Ad 4d 3d 2d Kc Ah", "Straight flush, five high", "5d4d3d2dAd"),
        ("9h 8h 7h 6h 5h 4h Th", "Straight flush, ten high", "Th9h8h7h6h"),
        ("Qc Qd 2h Qh Qs Ac Kd", "Four of a kind, queens", "QcQdQhQsAc"),
        ("Kh Tc Ks 2d Td Kc 3c", "Full house, kings full of tens", "KhKsKcTcTd"),
        ("6h 6c 6d 9s 9d 9h 2c", "Full house, nines full of sixes", "9s9d9h6h6c"),
        ("Ah 2h 9h 5h 7h 8c Kh", "Flush, ace high", "AhKh9h7h5h"),
        ("Jd 9c Th 8s Qd 2c 2h", "Straight, queen high", "QdJdTh9c8s"),
        ("Ac 2d 3h 4s 5c 5d 5h", "Straight, five high", "5c4s3h2dAc"),
        ("7c 7d 7h Ks 2c 9d 4h", "Three of a kind, sevens", "7c7d7hKs9d"),
        ("Ac 9d Ah 9s 4c 4d Kh", "Two pair, aces and nines", "AcAh9d9sKh"),
        ("6c 6d Ah Ts 4c 3d 2h", "One pair, sixes", "6c6dAhTs4c"),
        ("Kc 9d 7h 5s 3c 2d 4h", "High card, king", "Kc9d7h5s4h"),
        ("2c 3d 4h 5s 7c", "High card, seven", "7c5s4h3d2c"),
    ],
)
def test_describe(hand: str, text: str, best_five: str) -> None:
    cards = parse_cards(hand)
    rank = describe(cards)
    assert isinstance(rank, HandRank)
    assert rank.text == text
    assert format_cards(rank.best_five) == best_five
    assert rank.value == evaluate(cards) == evaluate(rank.best_five)
    assert rank.category is category_of(rank.value)


def test_hand_name_is_describes_text_for_5_6_and_7_cards_and_refuses_what_describe_refuses() -> None:
    for size, seed in ((5, 11), (6, 12), (7, 13)):
        for hand in random_hands(2_000, size, seed):
            assert hand_name(hand) == describe(hand).text
    for bad in ([0, 1, 2, 3], [0, 0, 1, 2, 3]):
        with pytest.raises(ValueError):
            describe(bad)
        with pytest.raises(ValueError):
            hand_name(bad)


def test_the_names_by_top_bits_name_every_value_as_hand_name_does() -> None:
    """The table the compiled engine encodes HandEnds with (``hand_names_by_top_bits``): every one of the 7,462
    values of five cards (all 2,598,960 hands) is named by its entry as ``hand_name`` names it."""
    table = hand_names_by_top_bits()
    assert len(table) == 4096
    hands = list(combinations(range(52), 5))
    firsts: dict[int, tuple[int, ...]] = {}
    for hand, value in zip(hands, evaluate_many(hands), strict=True):
        firsts.setdefault(value, hand)
    assert len(firsts) == 7462
    for value, hand in firsts.items():
        assert table[value >> 12] == hand_name(hand), hand


def test_describe_accepts_tuples_and_is_frozen() -> None:
    rank = describe(tuple(parse_cards("As Ks Qs Js Ts")))
    assert rank.text == "Royal flush"
    with pytest.raises(AttributeError):
        rank.text = "x"  # type: ignore[misc]


def test_describe_best_five_on_random_hands() -> None:
    """best_five are five of the cards, worth the whole hand, grouped in the order they count."""
    for hand in random_hands(3_000, 7, 94):
        rank = describe(hand)
        assert len(rank.best_five) == 5
        assert set(rank.best_five) <= set(hand)
        assert evaluate(rank.best_five) == rank.value
        ranks = [card_rank(c) for c in rank.best_five]
        if rank.category in (Category.STRAIGHT, Category.STRAIGHT_FLUSH):
            expected = [ranks[0] - i for i in range(5)]
            if ranks[0] == 3:
                expected[4] = 12  # the wheel's ace comes last
            assert ranks == expected
        else:
            counts = Counter(ranks)
            keys = [(counts[r], r) for r in ranks]
            assert keys == sorted(keys, reverse=True)
            distinct = list(dict.fromkeys(ranks))
            assert tuple(distinct) == tiebreak_ranks(rank.value)


# ----------------------------------------------------------------------------------------------------
# Bad input


@pytest.mark.parametrize("count", [0, 1, 4, 8, 52])
def test_wrong_count(count: int) -> None:
    with pytest.raises(ValueError, match=r"5, 6 or 7 cards"):
        evaluate(list(range(count)))


@pytest.mark.parametrize("bad", [52, 53, -1, 1000, 2**70, -(2**70)])
def test_out_of_range(bad: int) -> None:
    with pytest.raises(ValueError, match="out of range"):
        evaluate([0, 1, 2, 3, bad])


def test_duplicate() -> None:
    with pytest.raises(ValueError, match=r"duplicate card 51 \(As\)"):
        evaluate([51, 0, 1, 2, 51])
    with pytest.raises(ValueError, match="duplicate"):
        evaluate((5, 5, 6, 7, 8, 9, 10))


@pytest.mark.parametrize(
    "bad",
    [
        [0, 1, 2, 3, "4"],
        [0, 1, 2, 3, 4.0],
        [0, 1, 2, 3, None],
        [0, 1, 2, 3, True],
        "AsKsQsJsTs",
        12345,
        None,
        {0, 1, 2, 3, 4},
    ],
)
def test_wrong_type(bad: object) -> None:
    with pytest.raises(TypeError):
        evaluate(bad)  # type: ignore[arg-type]


def test_errors_from_other_entry_points() -> None:
    with pytest.raises(ValueError, match="duplicate"):
        evaluate_many([[0, 1, 2, 3, 4], [0, 0, 1, 2, 3]])
    with pytest.raises(TypeError):
        evaluate_many(5)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"5, 6 or 7 cards"):
        describe([0, 1, 2, 3])
    with pytest.raises(ValueError):
        category_counts(4)
    with pytest.raises(ValueError):
        category_of(9 << CATEGORY_SHIFT)


# ----------------------------------------------------------------------------------------------------
# Entry points agree


def test_entry_points_agree_on_a_random_sample() -> None:
    """evaluate on lists and tuples, evaluate_many and describe give the same value for each hand."""
    hands = random_hands(300_000, 7, 95)
    values = [evaluate(h) for h in hands]
    assert evaluate_many(hands) == values
    assert evaluate_many(tuple(tuple(h) for h in hands)) == values
    assert [evaluate(tuple(h)) for h in hands] == values
    assert all(describe(h).value == v for h, v in zip(hands[:5_000], values, strict=False))
    mixed = random_hands(30_000, 5, 96) + random_hands(30_000, 6, 97)
    assert evaluate_many(mixed) == [evaluate(h) for h in mixed]


# ----------------------------------------------------------------------------------------------------
# Against eval7

_EVAL7_CATEGORY = {
    "High Card": Category.HIGH_CARD,
    "Pair": Category.ONE_PAIR,
    "Two Pair": Category.TWO_PAIR,
    "Trips": Category.THREE_OF_A_KIND,
    "Straight": Category.STRAIGHT,
    "Flush": Category.FLUSH,
    "Full House": Category.FULL_HOUSE,
    "Quads": Category.FOUR_OF_A_KIND,
    "Straight Flush": Category.STRAIGHT_FLUSH,
}


def _sign(x: int) -> int:
    return (x > 0) - (x < 0)


@pytest.mark.parametrize(("count", "size", "seed"), [(200_000, 7, 1), (50_000, 6, 2), (50_000, 5, 3)])
def test_against_eval7(count: int, size: int, seed: int) -> None:
    """Same category and same order as eval7, pair by pair and over the whole sample."""
    e7_deck = [eval7.Card(t) for t in (format_cards([c]) for c in FULL_DECK)]
    hands = random_hands(count, size, seed)
    ours = evaluate_many(hands)
    theirs = [eval7.evaluate([e7_deck[c] for c in h]) for h in hands]
    for i, (o, t) in enumerate(zip(ours, theirs, strict=True)):
        assert category_of(o) is _EVAL7_CATEGORY[eval7.handtype(t)], format_cards(hands[i], " ")
    for i in range(count - 1):
        assert _sign(ours[i + 1] - ours[i]) == _sign(theirs[i + 1] - theirs[i]), (
            format_cards(hands[i], " "),
            format_cards(hands[i + 1], " "),
        )
    # globally: one eval7 value per arena value and back, and sorting by one sorts the other
    pairs = sorted(set(zip(ours, theirs, strict=True)))
    assert len({o for o, _ in pairs}) == len(pairs) == len({t for _, t in pairs})
    assert [t for _, t in pairs] == sorted(t for _, t in pairs)


# ----------------------------------------------------------------------------------------------------
# Exhaustive counts (enumerated in C through the same evaluation function as evaluate)

SEVEN_CARD_COUNTS = {
    Category.STRAIGHT_FLUSH: 41_584,
    Category.FOUR_OF_A_KIND: 224_848,
    Category.FULL_HOUSE: 3_473_184,
    Category.FLUSH: 4_047_644,
    Category.STRAIGHT: 6_180_020,
    Category.THREE_OF_A_KIND: 6_461_620,
    Category.TWO_PAIR: 31_433_400,
    Category.ONE_PAIR: 58_627_800,
    Category.HIGH_CARD: 23_294_460,
}

FIVE_CARD_COUNTS = {
    Category.STRAIGHT_FLUSH: 40,
    Category.FOUR_OF_A_KIND: 624,
    Category.FULL_HOUSE: 3_744,
    Category.FLUSH: 5_108,
    Category.STRAIGHT: 10_200,
    Category.THREE_OF_A_KIND: 54_912,
    Category.TWO_PAIR: 123_552,
    Category.ONE_PAIR: 1_098_240,
    Category.HIGH_CARD: 1_302_540,
}

# distinct five-card ranks per category (7,462 in all)
FIVE_CARD_CLASSES = {
    Category.STRAIGHT_FLUSH: 10,
    Category.FOUR_OF_A_KIND: 156,
    Category.FULL_HOUSE: 156,
    Category.FLUSH: 1_277,
    Category.STRAIGHT: 10,
    Category.THREE_OF_A_KIND: 858,
    Category.TWO_PAIR: 858,
    Category.ONE_PAIR: 2_860,
    Category.HIGH_CARD: 1_277,
}


@pytest.mark.slow
def test_exhaustive_seven_card_category_counts() -> None:
    counts = category_counts_7()
    assert sum(counts) == comb(52, 7) == 133_784_560
    assert dict(zip(Category, counts, strict=True)) == SEVEN_CARD_COUNTS


def test_exhaustive_five_card_counts_and_classes() -> None:
    assert dict(zip(Category, category_counts(5), strict=True)) == FIVE_CARD_COUNTS
    histogram = _eval.value_histogram(5)
    assert sum(histogram.values()) == comb(52, 5)
    assert len(histogram) == 7_462
    assert Counter(category_of(v) for v in histogram) == FIVE_CARD_CLASSES
    assert histogram[ROYAL_VALUE] == 4


@pytest.mark.slow
def test_exhaustive_seven_card_histogram_and_royal_flushes() -> None:
    """Every 7-card hand once more, by value: 4,824 distinct values, 4,324 royal flushes."""
    histogram = _eval.value_histogram(7)
    assert len(histogram) == 4_824
    by_category: Counter[Category] = Counter()
    for value, count in histogram.items():
        by_category[category_of(value)] += count
    assert by_category == SEVEN_CARD_COUNTS
    assert histogram[ROYAL_VALUE] == 4_324 == 4 * comb(47, 2)
    # and by combinatorics: the five royal cards of a suit plus any two of the other 47 cards
    royals = 0
    for suit in range(4):
        royal = [c for c in FULL_DECK if card_suit(c) == suit and card_rank(c) >= 8]
        rest = [c for c in FULL_DECK if c not in royal]
        for extra in combinations(rest, 2):
            rank = describe([*royal, *extra])
            assert rank.value == ROYAL_VALUE and rank.text == "Royal flush"
            royals += 1
    assert royals == 4_324


def test_exhaustive_six_card_counts() -> None:
    """Six-card hands: 1,844 straight flushes = 4 suits x (188/4 royal + 9 tops x 46 sixth cards), etc."""
    counts = dict(zip(Category, category_counts(6), strict=True))
    assert sum(counts.values()) == comb(52, 6)
    assert counts == {
        Category.STRAIGHT_FLUSH: 4 * (47 + 9 * 46),
        Category.FOUR_OF_A_KIND: 13 * comb(48, 2),
        Category.FULL_HOUSE: 165_984,
        Category.FLUSH: 205_792,
        Category.STRAIGHT: 361_620,
        Category.THREE_OF_A_KIND: 732_160,
        Category.TWO_PAIR: 2_532_816,
        Category.ONE_PAIR: 9_730_740,
        Category.HIGH_CARD: 6_612_900,
    }
