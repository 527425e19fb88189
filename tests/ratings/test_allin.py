"""All-in EV (arena.ratings.allin): exact where it enumerates, unbiased where it samples, zero-sum, and only for
hands whose betting ended with board cards still to come."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import random
import statistics
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from arena.cards import parse_cards
from arena.cards.evaluator import evaluate
from arena.engine import Action, ActionKind, Hand
from arena.ratings import allin
from arena.ratings.allin import allin_payoffs, runout_point
from arena.ratings.runouts import board_orders
from arena.records import queries
from arena.records.ledger import Ledger
from arena.records.phh_sink import rebuild_hand
from arena.referee import Decision, FunctionSeat, HandRecord, Match, MatchSpec
from arena.runner.bots import BotSpec
from arena_sdk import _eval
from arena_sdk._eval import runout_orders, runout_strengths_wrong


def play(hands: int, seed: str, choose: object, duplicate: bool = False) -> list[HandRecord]:
    records: list[HandRecord] = []

    class Keep:
        def hand_finished(self, record: HandRecord) -> None:
            records.append(record)

    spec = MatchSpec("ev", seed, hands, duplicate=duplicate)
    seats = [(n, FunctionSeat(n, choose)) for n in ("a", "b")]  # type: ignore[arg-type]
    asyncio.run(Match(spec, seats, [Keep()]).run())
    return records


def shover(rng: random.Random, shove: float = 0.5) -> object:
    def choose(decision: Decision) -> Action:
        legal = decision.view.legal
        assert legal is not None
        if rng.random() < shove and legal.max_raise_to:
            return Action(ActionKind.RAISE, legal.max_raise_to)
        return Action(ActionKind.CALL) if legal.call_amount else Action(ActionKind.CHECK)

    return choose


def brute_orders(holes: list[tuple[int, ...]], board: tuple[int, ...]) -> Counter[tuple[int, ...]]:
    rest = [c for c in range(52) if c not in {*board, *(c for h in holes for c in h)}]
    out: Counter[tuple[int, ...]] = Counter()
    for more in itertools.combinations(rest, 5 - len(board)):
        values = [evaluate([*h, *board, *more]) for h in holes]
        out[tuple(sum(o > v for o in values) for v in values)] += 1
    return out


@pytest.mark.parametrize("holes, board", [
    ("AsAh KdKc", "2s3s4s"), ("AsKs QdQh JcTc", "2s9hTh"), ("7c2d 7h2s", "Ac Kd Qh Js".replace(" ", "")),
    ("AsAh KdKc", "2s3s4s5d"),
])
def test_runout_orders_are_exact_when_enumerated(holes: str, board: str) -> None:
    pairs = [tuple(parse_cards(h)) for h in holes.split()]
    known = tuple(parse_cards(board))
    assert runout_orders(pairs, known, 0, 0) == dict(brute_orders(pairs, known))
    assert runout_orders(pairs, known, 10**6, 0) == dict(brute_orders(pairs, known))  # few: enumerated anyway


def test_sampled_runouts_are_uniform() -> None:
    pairs = [tuple(parse_cards("AsAh")), tuple(parse_cards("KdKc"))]
    exact = runout_orders(pairs, (), 0, 0)
    total = sum(exact.values())
    sampled = runout_orders(pairs, (), 200_000, 12345)
    assert sum(sampled.values()) == 200_000
    for order, count in exact.items():
        p = count / total
        sd = (p * (1 - p) / 200_000) ** 0.5
        assert abs(sampled.get(order, 0) / 200_000 - p) < 5 * sd + 1e-9, order
    assert runout_orders(pairs, (), 1000, 7) == runout_orders(pairs, (), 1000, 7)  # seeded: reproducible


def test_sampled_runouts_are_pinned() -> None:
    """The draws of a seed are part of the estimators' figures (all-in EV, AIVAT): these counts, the order of the
    dict's keys included (it is the order their shares are added up in), were those of the first C core, and a
    faster one must give them unchanged."""
    first = runout_orders([(0, 1), (10, 11)], (), 1000, 7)
    assert list(first.items()) == [((0, 0), 37), ((1, 0), 800), ((0, 1), 163)]
    flop = runout_orders([(0, 1), (10, 11), (30, 47)], (20, 21, 22), 100, 99)
    assert list(flop.items()) == [((0, 0, 0), 5), ((1, 0, 2), 69), ((2, 1, 0), 23), ((1, 1, 0), 2), ((1, 0, 1), 1)]
    four = runout_orders([(48, 49), (50, 51), (44, 45), (40, 41)], (), 2000, 2**63 + 5)
    assert sum(four.values()) == 2000 and four[(0, 0, 2, 3)] == 1139 and four[(1, 1, 0, 3)] == 344
    assert list(four)[:3] == [(0, 0, 0, 0), (3, 0, 1, 2), (3, 2, 0, 1)]


def test_runout_strengths_order_every_seven_card_hand_as_evaluate_does() -> None:
    """runout_orders compares hands by a strength from two table lookups (evaluate's branches on the category cost
    half its time): over all 133,784,560 seven-card hands, hands of equal value get one strength and a higher value
    a higher one (about 1.4 s)."""
    assert runout_strengths_wrong() == 0


def test_runouts_counted_at_once_in_threads_are_the_ones_counted_in_turn() -> None:
    """The draws run without the GIL, and one call's table is kept for the next: calls made at once in threads (one
    holds the kept table, the others make their own) count what calls made one after another do, key order
    included, before and after a call that is refused."""
    rng = random.Random(11)
    calls = []
    for _ in range(120):
        players = rng.choice([2, 3, 6])
        cards = rng.sample(range(52), 2 * players + 5)
        holes = [tuple(cards[2 * p:2 * p + 2]) for p in range(players)]
        board = tuple(cards[2 * players:2 * players + rng.choice([0, 3, 4, 5])])
        calls.append((holes, board, rng.choice([200, 2000]), rng.getrandbits(64)))
    expected = [list(runout_orders(*call).items()) for call in calls]
    with ThreadPoolExecutor(4) as pool:
        assert [list(r.items()) for r in pool.map(lambda call: runout_orders(*call), calls)] == expected
    with pytest.raises(ValueError):
        runout_orders([(0, 1), (0, 2)], (), 0, 0)
    assert [list(runout_orders(*call).items()) for call in calls[:10]] == expected[:10]


def test_ten_players_or_more_with_more_orders_of_finish_than_the_usual_table_holds() -> None:
    """Twelve players all in before the flop, each holding suited cards: more than 8,192 distinct orders of finish,
    which once raised RuntimeError (the scoring worker's all-in EV with them). Now they are counted again in a table
    of their own: every completion of the board, as a brute force counts them, and 20,000 draws."""
    every = [(39, 15), (50, 34), (45, 21), (18, 6), (47, 27), (42, 22), (38, 10), (20, 28), (17, 29), (4, 40), (9, 1),
             (43, 35)]
    counted = runout_orders(every, (), 0, 0)
    assert len(counted) > 8_192
    rest = [c for c in range(52) if c not in {c for h in every for c in h}]
    brute: Counter[tuple[int, ...]] = Counter()
    for board in itertools.combinations(rest, 5):
        values = _eval.evaluate_many([[*h, *board] for h in every])
        brute[tuple(sum(o > v for o in values) for v in values)] += 1
    assert counted == dict(brute)
    drawn = [(40, 4), (26, 38), (20, 16), (48, 0), (24, 12), (35, 7), (42, 14), (19, 31), (51, 47), (28, 8), (32, 44),
             (37, 9)]
    sampled = runout_orders(drawn, (), 20_000, 2223)
    assert len(sampled) > 8_192 and sum(sampled.values()) == 20_000
    assert runout_orders(drawn, (), 20_000, 2223) == sampled
    # the kept table is whole again after a call that needed more: the pinned counts, in their key order
    assert list(runout_orders([(0, 1), (10, 11)], (), 1000, 7).items()) == [((0, 0), 37), ((1, 0), 800), ((0, 1), 163)]


@pytest.mark.parametrize("bad", [[(0, 1)], [(0, 1), (1, 2)], [(0, 1), (2, 52)], [(0, 1, 2), (3, 4)]])
def test_runout_orders_refuses_bad_cards(bad: list[tuple[int, ...]]) -> None:
    with pytest.raises(ValueError):
        runout_orders(bad, (), 0, 0)


def test_only_allin_showdowns_with_cards_to_come_are_adjusted() -> None:
    records = play(300, "allin-spots", shover(random.Random(3)))
    points = Counter(runout_point(r) for r in records)
    assert points[0] and points[3] and points[None]  # pre-flop and flop all-ins, and hands played out or folded
    for record in records:
        adjusted = allin_payoffs(record)
        ended = any(e.kind.name in ("SHOW", "MUCK") for e in record.events)
        if adjusted is None:
            assert runout_point(record) is None
            continue
        assert ended and sum(adjusted) == pytest.approx(0, abs=1e-6)
        hand = rebuild_hand(record)
        for seat in range(2):  # a player's EV lies between losing and winning everything it put in the pots
            assert -hand.committed[seat] - 1e-9 <= adjusted[seat] <= sum(hand.committed) - hand.committed[seat] + 1e-9


def test_the_estimate_is_the_mean_payoff_over_the_rest_of_the_board() -> None:
    """Unbiasedness, directly: for recorded all-in hands, deal the rest of the board afresh many times (the same
    hole cards and known board, the same decisions) and average the engine's payoffs."""
    records = [r for r in play(120, "allin-mean", shover(random.Random(8), 0.7)) if runout_point(r) is not None]
    flop = [r for r in records if runout_point(r) == 3][:3]
    preflop = [r for r in records if runout_point(r) == 0][:3]
    assert flop and preflop
    rng = random.Random(99)
    for record in flop + preflop:
        known = runout_point(record)
        assert known is not None
        estimate = allin_payoffs(record)
        assert estimate is not None
        dealt_to_seats = {c for h in record.hole for c in h}
        fixed = set(record.board[:known]) | dealt_to_seats
        total = [0.0, 0.0]
        trials = 4000
        free = [i for i, c in enumerate(record.deck) if c not in fixed]  # burns, the runout, the unused cards
        for _ in range(trials):
            deck = list(record.deck)
            shuffled = [record.deck[i] for i in free]
            rng.shuffle(shuffled)  # every card nobody holds, and not on the known board, anywhere it can be
            for i, card in zip(free, shuffled, strict=True):
                deck[i] = card
            hand = Hand(record.config, list(record.starting_stacks), deck, button=record.button)
            for decision in record.decisions:
                hand.act(decision.seat, decision.action)
            assert hand.payoffs is not None
            for seat in range(2):
                total[seat] += hand.payoffs[seat]
        pot = sum(rebuild_hand(record).committed)
        for seat in range(2):  # within 5 standard errors of the simulated mean (a payoff is at most the pot)
            assert abs(total[seat] / trials - estimate[seat]) < 5 * pot / trials**0.5 / 2, (record.hand_number, seat)


def test_over_matches_the_adjusted_mean_agrees_with_the_raw_one_and_its_interval_is_narrower() -> None:
    """A fixed set of seeds: shoving bots of equal skill (the true edge is zero in expectation) in non-duplicate
    matches; the all-in EV mean lies within the raw mean's interval and its standard deviation is far smaller."""
    raw: list[float] = []
    adjusted: list[float] = []
    for k in range(4):
        for record in play(250, f"unbiased-{k}", shover(random.Random(k), 0.4)):
            raw.append(record.payoffs[record.seating.index(0)])
            estimate = allin_payoffs(record)
            adjusted.append(estimate[record.seating.index(0)] if estimate else raw[-1])
    n = len(raw)
    sd_raw, sd_adj = statistics.pstdev(raw), statistics.pstdev(adjusted)
    mean_raw, mean_adj = statistics.mean(raw), statistics.mean(adjusted)
    assert abs(mean_adj - mean_raw) < 1.96 * sd_raw / n**0.5
    assert abs(mean_adj) < 3 * sd_adj / n**0.5 + 200  # zero edge: within 3 standard errors (and the blinds' skew)
    assert sd_adj < 0.75 * sd_raw, (sd_raw, sd_adj)


def test_a_deals_two_halves_all_in_before_the_flop_draw_their_runouts_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A shover goes all-in with the same cards in both halves of a deal (the seats keep their cards): the second
    half's orders of finish are the first's, remembered (20,000 draws with three players or more; a table read
    heads-up), and give the same figures as counting them again."""
    records = [r for r in play(40, "allin-halves", shover(random.Random(5), shove=1.0), duplicate=True)
               if runout_point(r) == 0]
    by_deal: dict[int, list[HandRecord]] = {}
    for record in records:
        by_deal.setdefault(record.deal, []).append(record)
    pairs = [halves for halves in by_deal.values() if len(halves) == 2]
    assert pairs
    allin._orders.cache_clear()
    drawn: list[object] = []

    def counted(*args: object) -> dict[tuple[int, ...], int]:
        drawn.append(args)
        return board_orders(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(allin, "board_orders", counted)
    remembered = [[allin_payoffs(r) for r in halves] for halves in pairs]
    assert len(drawn) == len(pairs)  # once a deal

    def fresh(record: HandRecord) -> tuple[float, ...] | None:
        allin._orders.cache_clear()
        return allin_payoffs(record)

    assert [[fresh(r) for r in halves] for halves in pairs] == remembered  # each half's draws made anew: the same
    assert len(drawn) == 3 * len(pairs)


def test_a_record_without_an_allin_is_left_alone() -> None:
    def caller(decision: Decision) -> Action:
        legal = decision.view.legal
        assert legal is not None
        return Action(ActionKind.CALL) if legal.call_amount else Action(ActionKind.CHECK)

    for record in play(20, "no-allin", caller):
        assert runout_point(record) is None and allin_payoffs(record) is None
        assert allin_payoffs(dataclasses.replace(record)) is None


def test_arena_verify_recomputes_the_allin_figures(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from arena.cli import main
    from arena.records.db import Database

    db = Database(tmp_path / "v.db")
    spec = MatchSpec("v1", "verify-allin", 60)
    rng = random.Random(4)
    seats = [(n, FunctionSeat(n, shover(rng))) for n in ("a", "b")]  # type: ignore[arg-type]
    entry = Ledger(db).open(spec, [BotSpec(n, "") for n, _ in seats])
    result = entry.finish(asyncio.run(Match(spec, seats, [entry]).run()))
    expected = [allin_payoffs(r) for r in queries.hand_records(db, "v1")]
    rescored = [e for e in expected if e is not None]
    records = list(queries.hand_records(db, "v1"))
    ev_a = sum((e or r.payoffs)[r.seating.index(0)] for e, r in zip(expected, records, strict=True))
    db.close()
    out = CliRunner().invoke(main, ["verify", "--db", str(tmp_path / "v.db")])
    assert out.exit_code == 0, out.output
    assert f"all-in EV recomputed: {len(rescored)} all-in hands rescored" in out.output
    assert f"a {result.results[0].net:+,} as dealt, {ev_a:+,.0f} by all-in EV" in out.output


def test_the_live_tally_gives_the_allin_figures_of_the_database(tmp_path: Path) -> None:
    """arena match's tally rescores all-ins lazily, as a change to each session's raw sample: the same win rates as
    the leaderboard reads from the recorded hands."""
    from arena.ratings.estimators import Estimator
    from arena.ratings.sessions import load_sessions
    from arena.ratings.stats import win_rates
    from arena.ratings.tally import SessionTally
    from arena.records.db import Database

    db = Database(tmp_path / "t.db")
    spec = MatchSpec("t1", "tally-allin", 80)
    rng = random.Random(6)
    seats = [(n, FunctionSeat(n, shover(rng))) for n in ("a", "b")]  # type: ignore[arg-type]
    entry = Ledger(db).open(spec, [BotSpec(n, "") for n, _ in seats])
    tally = SessionTally(2, spec.hands_per_deal(2), spec.config.big_blind)

    class Tally:
        def hand_finished(self, record: HandRecord) -> None:
            tally.add(record)

    entry.finish(asyncio.run(Match(spec, seats, [entry, Tally()]).run()))
    for estimator in Estimator:
        stored = win_rates(load_sessions(db, ["t1"], estimator=estimator))
        for index, name in enumerate(("a", "b")):
            live = tally.win_rate(index, estimator)
            assert live.sessions == stored[name].sessions == 40
            assert live.mean == pytest.approx(stored[name].mean, abs=1e-6)
            assert live.high == pytest.approx(stored[name].high, abs=1e-6)
    assert tally.win_rate(0, Estimator.ALLIN).mean != tally.win_rate(0).mean  # all-ins were rescored
