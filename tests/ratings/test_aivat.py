"""AIVAT's chance-node control variates (arena.ratings.aivat): every term has expectation zero over its chance event
(checked by enumerating the event), the adjusted payoffs are zero-sum, they agree with all-in EV where both apply,
and over a fixed set of matches their mean agrees with the raw one with a far smaller spread."""

from __future__ import annotations

import asyncio
import itertools
import random
import statistics
from pathlib import Path

import pytest

from arena.engine import Action, ActionKind, TableConfig
from arena.ratings import aivat
from arena.ratings.aivat import aivat_payoffs, chance_events, luck_terms
from arena.ratings.allin import allin_payoffs, runout_point
from arena.records import queries
from arena.records.ledger import Ledger
from arena.referee import Decision, FunctionSeat, HandRecord, Match, MatchSpec
from arena.runner.bots import BotSpec


def play(hands: int, seed: str, choose: object, seats: int = 2, config: TableConfig | None = None,
         stack: int = 20_000) -> list[HandRecord]:
    records: list[HandRecord] = []

    class Keep:
        def hand_finished(self, record: HandRecord) -> None:
            records.append(record)

    spec = MatchSpec("cv", seed, hands, config=config or TableConfig(), starting_stack=stack)
    players = [(f"p{i}", FunctionSeat(f"p{i}", choose)) for i in range(seats)]  # type: ignore[arg-type]
    asyncio.run(Match(spec, players, [Keep()]).run())
    return records


def bettor(rng: random.Random, aggression: float = 0.3) -> object:
    """Raises a little, calls a lot, folds sometimes: pots of every size on every street."""

    def choose(decision: Decision) -> Action:
        legal = decision.view.legal
        assert legal is not None
        roll = rng.random()
        if roll < aggression and legal.min_raise_to:
            return Action(ActionKind.RAISE, rng.choice([legal.min_raise_to, legal.max_raise_to or legal.min_raise_to]))
        if roll > 0.93 and legal.call_amount:
            return Action(ActionKind.FOLD)
        return Action(ActionKind.CALL) if legal.call_amount else Action(ActionKind.CHECK)

    return choose


def unseen(record: HandRecord, board: tuple[int, ...]) -> list[int]:
    known = {*board, *(c for hole in record.hole for c in hole)}
    return [c for c in range(52) if c not in known]


def test_every_chance_event_of_a_hand_is_found_with_its_pots() -> None:
    records = play(60, "events", bettor(random.Random(1)))
    for record in records:
        events = chance_events(record)
        assert events[0].street == "hole" and events[0].before is None
        streets = [e.street for e in events[1:]]
        assert streets == ["flop", "turn", "river"][: len(streets)]
        assert len(record.board) == (0, 3, 4, 5)[len(streets)]
        for event in events[1:]:
            assert event.after == tuple(record.board[: len(event.after)])
        assert events[0].pots[0].amount >= record.config.big_blind  # the blinds


@pytest.mark.parametrize("street", ["turn", "river"])
def test_a_term_averages_to_zero_over_its_card_exactly(street: str) -> None:
    """E[value(after)] over every card the event could have dealt equals value(before), to rounding (both exact)."""
    records = [r for r in play(80, "exact", bettor(random.Random(2))) if len(r.board) == 5]
    assert len(records) >= 10
    for record in records[:10]:
        event = next(e for e in chance_events(record) if e.street == street)
        checkdown = aivat._Checkdown(record, record.config.big_blind)
        assert event.before is not None
        before = checkdown.value(event.pots, event.before)
        cards = unseen(record, event.before)
        mean = [0.0] * len(before)
        for card in cards:
            for seat, chips in enumerate(checkdown.value(event.pots, (*event.before, card))):
                mean[seat] += chips / len(cards)
        assert mean == pytest.approx(before, abs=1e-9)


def test_the_flop_term_averages_to_zero_over_every_flop() -> None:
    """Over all C(48, 3) flops, the exact check-down after the flop averages to the sampled pre-flop value within
    the draws' own error (4 standard deviations of 8,192 draws)."""
    record = next(r for r in play(40, "flop", bettor(random.Random(3), 0.5))
                  if len(r.board) == 5 and sum(p.amount for p in chance_events(r)[1].pots) > 20 * r.config.big_blind)
    event = chance_events(record)[1]
    checkdown = aivat._Checkdown(record, record.config.big_blind)
    before = checkdown.value(event.pots, ())
    cards = unseen(record, ())
    flops = list(itertools.combinations(cards, 3))
    mean = [0.0] * len(before)
    for flop in flops:
        for seat, chips in enumerate(checkdown.value(event.pots, flop)):
            mean[seat] += chips / len(flops)
    pot = sum(p.amount for p in event.pots)
    assert mean == pytest.approx(before, abs=4 * 0.5 * pot / aivat.PREFLOP_SAMPLES_BIG**0.5)
    assert sum(mean) == pytest.approx(pot)


def test_before_the_deal_each_seat_owns_its_share_of_the_blinds() -> None:
    """No cards known: a pot's value is split evenly among the seats that can win it (the deal is exchangeable);
    the button, with nothing in yet, can win none of the blinds (small blind 50, big blind 100)."""
    record = play(1, "deal", bettor(random.Random(4)), seats=3)[0]
    hole = chance_events(record)[0]
    checkdown = aivat._Checkdown(record, record.config.big_blind)
    assert record.button == 0 and [(p.amount, p.eligible) for p in hole.pots] == [(100, (1, 2)), (50, (2,))]
    assert checkdown.value(hole.pots, None) == pytest.approx([0, 50, 100])
    after = checkdown.value(hole.pots, ())  # the hole cards known: the main pot by the two blinds' equity
    assert after[0] == 0 and after[1] + after[2] == pytest.approx(150) and after[2] >= 50


@pytest.mark.parametrize("seats", [2, 3, 6])
def test_adjusted_payoffs_are_zero_sum(seats: int) -> None:
    for record in play(40, f"zero-{seats}", bettor(random.Random(seats)), seats):
        assert sum(aivat_payoffs(record)) == pytest.approx(0, abs=1e-6)
        for _, term in luck_terms(record):
            assert sum(term) == pytest.approx(0, abs=1e-6)


def test_after_an_allin_on_the_flop_the_last_terms_are_the_allin_correction() -> None:
    """All-in on the flop: the turn and river terms take out exactly what all-in EV replaces (to odd chips, which
    all-in EV gives by the button rule and the value function shares evenly)."""
    def shove_on_flop(decision: Decision) -> Action:
        legal = decision.view.legal
        assert legal is not None
        if decision.view.board and legal.max_raise_to:
            return Action(ActionKind.RAISE, legal.max_raise_to)
        return Action(ActionKind.CALL) if legal.call_amount else Action(ActionKind.CHECK)

    checked = 0
    for record in play(30, "flop-allin", shove_on_flop):
        if runout_point(record) != 3:
            continue
        allin = allin_payoffs(record)
        assert allin is not None
        late = [term for street, term in luck_terms(record) if street in ("turn", "river")]
        expected = [p - sum(t[s] for t in late) for s, p in enumerate(record.payoffs)]
        assert expected == pytest.approx(list(allin), abs=1.0)
        checked += 1
    assert checked >= 10


def test_a_hand_that_ends_before_the_flop_has_only_the_deal_term() -> None:
    def fold(decision: Decision) -> Action:
        legal = decision.view.legal
        assert legal is not None
        return Action(ActionKind.FOLD) if legal.call_amount else Action(ActionKind.CHECK)

    for record in play(10, "folds", fold):
        assert [street for street, _ in luck_terms(record)] == ["hole"]


def test_over_matches_the_adjusted_mean_agrees_with_the_raw_one_and_its_spread_is_smaller() -> None:
    """A fixed set of seeds: two betting bots of equal skill (a true edge of zero) over 1,200 hands: AIVAT's mean
    lies within the raw mean's interval and within three of its own standard errors of zero, and its standard
    deviation per hand is well below the raw one."""
    raw: list[float] = []
    adjusted: list[float] = []
    for k in range(4):
        for record in play(300, f"unbiased-{k}", bettor(random.Random(10 + k))):
            seat = record.seating.index(0)
            raw.append(record.payoffs[seat])
            adjusted.append(aivat_payoffs(record)[seat])
    n = len(raw)
    sd_raw, sd_adj = statistics.pstdev(raw), statistics.pstdev(adjusted)
    mean_raw, mean_adj = statistics.mean(raw), statistics.mean(adjusted)
    assert abs(mean_adj - mean_raw) < 1.96 * sd_raw / n**0.5
    assert abs(mean_adj) < 3 * sd_adj / n**0.5 + 100  # zero edge: within 3 standard errors (and the blinds' skew)
    assert sd_adj < 0.8 * sd_raw, (sd_raw, sd_adj)


def test_arena_verify_recomputes_the_aivat_figures(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from arena.cli import main
    from arena.records.db import Database

    db = Database(tmp_path / "v.db")
    spec = MatchSpec("v1", "verify-aivat", 40)
    seats = [(n, FunctionSeat(n, bettor(random.Random(5)))) for n in ("a", "b")]  # type: ignore[arg-type]
    entry = Ledger(db).open(spec, [BotSpec(n, "") for n, _ in seats])
    result = entry.finish(asyncio.run(Match(spec, seats, [entry]).run()))
    ev_a = sum(aivat_payoffs(r)[r.seating.index(0)] for r in queries.hand_records(db, "v1"))
    db.close()
    out = CliRunner().invoke(main, ["verify", "--db", str(tmp_path / "v.db")])
    assert out.exit_code == 0, out.output
    assert "AIVAT recomputed: 40 hands rescored" in out.output
    assert f"a {result.results[0].net:+,} as dealt, {ev_a:+,.0f} by AIVAT" in out.output


def test_where_both_halves_of_a_duplicate_pair_played_alike_the_luck_terms_cancel() -> None:
    """Heads-up duplicate deals the same cards to the same positions in both halves, so a chance event reached by
    the same actions in both is the same state, and each bot's two terms for it cancel (the terms are zero-sum):
    whatever the value function, AIVAT can only take out the luck of cards that fell after the bots' play had
    diverged. Checked over a match of a cards-driven raiser against a calling station, where it holds at every
    event reached alike (the deal always is) and the terms survive where the halves differed."""
    from arena.engine import EventKind
    from tests.compare.players import calling_station

    def raiser(decision: Decision) -> Action:
        legal = decision.view.legal
        assert legal is not None
        high = sorted(c // 4 for c in decision.view.hole_cards)  # ranks 0 (deuce) .. 12 (ace)
        if legal.min_raise_to and (high[0] == high[1] or high[0] >= 8):
            return Action(ActionKind.RAISE, legal.min_raise_to)
        return Action(ActionKind.CALL) if legal.call_amount else Action(ActionKind.CHECK)

    records: list[HandRecord] = []

    class Keep:
        def hand_finished(self, record: HandRecord) -> None:
            records.append(record)

    spec = MatchSpec("dup", "duplicate-cancels", 400)
    seats = [("r", FunctionSeat("r", raiser)), ("s", FunctionSeat("s", calling_station))]
    asyncio.run(Match(spec, seats, [Keep()]).run())

    def before(record: HandRecord, street: str) -> tuple[object, ...]:
        """The hand's events before the street's cards (the hole cards: before anything was dealt)."""
        deals = [i for i, e in enumerate(record.events) if e.kind is EventKind.DEAL_BOARD]
        cut = {"hole": 0, "flop": 0, "turn": 1, "river": 2}[street]
        if street == "hole":
            return tuple(e for e in record.events if e.kind is not EventKind.DEAL_HOLE)[:2]  # the blinds
        return tuple(record.events[: deals[cut]]) if len(deals) > cut else ()

    alike = differed = 0
    pairs = [records[i: i + 2] for i in range(0, len(records), 2)]
    for half0, half1 in pairs:
        assert half0.deal == half1.deal and half0.deck == half1.deck
        terms0, terms1 = dict(luck_terms(half0)), dict(luck_terms(half1))
        for street in terms0.keys() & terms1.keys():
            net = terms0[street][half0.seating.index(0)] + terms1[street][half1.seating.index(0)]
            if before(half0, street) == before(half1, street):
                assert abs(net) < 1e-6, (half0.hand_number, street, net)
                alike += 1
            elif abs(net) > 1:
                differed += 1
    assert alike > 2 * len(pairs)  # every deal, and more
    assert differed > 100
