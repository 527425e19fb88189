"""AIVAT's luck terms by the compiled engine (``aivat.compiled_luck_terms``: the replay, the pots and the sums in C)
and the scoring worker's path for packed hands (``scoring_worker.packed_deltas``) are the Python reference's to the
last bit, over no-limit, pot-limit and fixed-limit tables of 2 to 9 seats with antes, short stacks, side pots and odd
chips; where they do not apply (a drawn mixed action, an all-in, a record the engine refuses, a pot past 2**53
chips) they step aside and the reference answers, as before."""

from __future__ import annotations

import dataclasses
import pickle
import random

import pytest

from arena.engine import Action, ActionKind, AnteMode, Structure, TableConfig, _core
from arena.ratings.aivat import compiled_luck_terms, luck_terms, reference_luck_terms
from arena.ratings.allin import runout_point
from arena.ratings.runouts import board_orders, board_shares, shares_of
from arena.ratings.scoring_worker import Batch, pack, packed_deltas, score_batch
from arena.ratings.session_scoring import hand_deltas
from arena.records.errors import RecordsDamaged
from arena.records.phh_sink import rebuild_hand
from arena.referee import HandRecord
from tests.ratings.test_aivat import bettor, play

TABLES = {
    "no-limit": (TableConfig(), 20_000),
    "no-limit, short stacks": (TableConfig(), 700),
    "pot-limit, antes": (TableConfig(structure=Structure.POT_LIMIT, ante=10, ante_mode=AnteMode.EACH), 3_000),
    "fixed-limit": (TableConfig(structure=Structure.FIXED_LIMIT, small_bet=100, big_bet=200), 2_000),
    "big blind's ante, odd chips": (TableConfig(small_blind=25, big_blind=50, ante=50,
                                                ante_mode=AnteMode.BIG_BLIND, chip=5), 1_455),
}


def played(table: str, seats: int, hands: int = 24) -> list[HandRecord]:
    config, stack = TABLES[table]
    return play(hands, f"compiled-{table}-{seats}", bettor(random.Random(seats), 0.35), seats, config, stack)


@pytest.mark.parametrize("seats", [2, 3, 6, 9])
@pytest.mark.parametrize("table", sorted(TABLES))
def test_the_compiled_terms_are_the_references_to_the_last_bit(table: str, seats: int) -> None:
    records = played(table, seats)
    streets = set()
    for record in records:
        compiled = compiled_luck_terms(record)
        assert compiled is not None, record.hand_id
        assert compiled == reference_luck_terms(record), record.hand_id  # floats compared exactly
        streets.update(street for street, _ in compiled)
    assert streets == {"hole", "flop", "turn", "river"}


def test_the_check_downs_shares_summed_in_c_are_the_definitions() -> None:
    """``board_shares`` (runout_shares in C, or the heads-up table) against ``shares_of`` the orders, exactly: two
    to six players, every board size, counted and drawn."""
    rng = random.Random(7)
    kinds = set()
    for _ in range(400):
        players = rng.choice([2, 2, 3, 4, 6])
        cards = rng.sample(range(52), 2 * players + 5)
        holes = tuple(tuple(cards[2 * p:2 * p + 2]) for p in range(players))
        board = tuple(cards[2 * players:2 * players + rng.choice([0, 3, 4, 5])])
        samples = rng.choice([64, 1_024])
        orders = board_orders(holes, board, samples, "test")
        assert board_shares(holes, board, samples, "test") == shares_of(orders, players)
        kinds.add((players > 2, len(board)))
    assert len(kinds) == 8


def test_a_hand_with_a_drawn_mixed_action_is_left_to_the_reference() -> None:
    record = played("no-limit", 2, 4)[0]
    decision = record.decisions[0]
    mixed = dataclasses.replace(decision, policy=((decision.action, 1.0),))
    drawn = dataclasses.replace(record, decisions=[mixed, *record.decisions[1:]])
    assert compiled_luck_terms(drawn) is None
    terms = luck_terms(drawn)
    assert terms == reference_luck_terms(drawn)
    assert ("action", (0.0, 0.0)) in terms  # the reference's action term (one action, at probability 1)
    assert [t for t in terms if t[0] != "action"] == compiled_luck_terms(record)
    assert packed_deltas(pack(drawn, 0), [drawn.config]) is None


def test_a_record_the_engine_refuses_is_damaged_as_before() -> None:
    record = next(r for r in played("no-limit", 2, 8) if len(r.decisions) >= 2)
    edited = dataclasses.replace(record, decisions=[*record.decisions[:-1], dataclasses.replace(
        record.decisions[-1], action=Action(ActionKind.RAISE, 10**9))])
    assert compiled_luck_terms(edited) is None
    with pytest.raises(RecordsDamaged, match="cannot be replayed"):
        luck_terms(edited)
    assert packed_deltas(pack(edited, 0), [edited.config]) is None


def test_pots_past_2_to_the_53_are_left_to_pythons_ints() -> None:
    def shove(decision: object) -> Action:
        return Action(ActionKind.ALL_IN)

    big = TableConfig(small_blind=2**48, big_blind=2**49)
    records = play(2, "big", shove, 3, big, 2**53)
    assert sum(records[0].starting_stacks) > 2**53
    for record in records:
        assert compiled_luck_terms(record) is None
        assert luck_terms(record) == reference_luck_terms(record)


def test_the_python_engine_scores_by_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    record = played("no-limit", 2, 2)[0]
    from arena.engine.hand import Hand
    from arena.records import phh_sink

    monkeypatch.setattr(phh_sink, "Hand", Hand)
    assert compiled_luck_terms(record) is None
    assert luck_terms(record) == reference_luck_terms(record)


@pytest.mark.parametrize("seats", [2, 6])
def test_the_workers_packed_path_gives_hand_deltas_to_the_last_bit(seats: int) -> None:
    records = played("no-limit, short stacks", seats, 40) + played("fixed-limit", seats, 20)
    configs = sorted({r.config for r in records}, key=repr)
    quick = 0
    for record in records:  # packed as the referee packs them (the table's records drop the bytes once told)
        record = dataclasses.replace(record, packed_events=rebuild_hand(record).packed_events())
        packed = packed_deltas(pack(record, configs.index(record.config)), configs)
        allin = runout_point(record) is not None
        if packed is None:
            assert allin, record.hand_id  # only an all-in (all-in EV's) leaves the packed path
            continue
        quick += 1
        expected = (record.seating, hand_deltas(record))
        assert packed == expected
        assert [type(d) for ds in packed[1] for d in ds] == [type(d) for ds in expected[1] for d in ds]
    assert 10 <= quick < len(records)  # both paths taken


@pytest.mark.parametrize("seats", [2, 6])
def test_a_hand_packed_without_its_decisions_is_scored_as_the_record(seats: int) -> None:
    """Packed with its events and no drawn mixed action, a hand goes to the worker without its decisions, which it
    reads off the events (``_core.packed_actions``): every hand's deltas, all-ins (unpacked) and the rest (the
    packed path), are ``hand_deltas`` of the record, to the last bit; a hand with a mixed action keeps them."""
    records = played("no-limit, short stacks", seats, 40) + played("fixed-limit", seats, 20)
    configs = tuple(sorted({r.config for r in records}, key=repr))
    for record in records:
        record = dataclasses.replace(record, packed_events=rebuild_hand(record).packed_events())
        packed = pack(record, configs.index(record.config))
        assert packed[13] is None
        assert [(s, k, a) for s, k, a, _ in _core.packed_actions(record.packed_events)] == [
            (d.seat, d.action.kind.value, d.action.amount if d.action.kind is ActionKind.RAISE else 0)
            for d in record.decisions]  # (these bots never answer ALL_IN, which the events show resolved)
        batch = Batch(hands=(pickle.dumps(packed),), configs=configs)
        assert score_batch(batch) == {record.hand_number: (record.seating, hand_deltas(record))}
    mixed = dataclasses.replace(records[0].decisions[0], policy=((records[0].decisions[0].action, 1.0),))
    drawn = dataclasses.replace(records[0], decisions=[mixed, *records[0].decisions[1:]],
                                packed_events=rebuild_hand(records[0]).packed_events())
    assert pack(drawn, 0)[13] is not None


def test_packed_facts_reads_the_entry_blinds_and_the_showdown() -> None:
    hand = _core.Hand(TableConfig(), [5_000] * 4, list(range(52)), 0, [3])
    while not hand.is_over:
        seat = hand.to_act
        hand.act(seat, Action(ActionKind.CALL) if hand.legal_actions().call_amount else Action(ActionKind.CHECK))
    entries, known = _core.packed_facts(hand.packed_events())
    assert entries == (3,)
    assert known == 5  # checked down: the last action on the river
    folded = _core.Hand(TableConfig(), [5_000] * 2, list(range(52)))
    folded.act(folded.to_act, Action(ActionKind.FOLD))
    assert _core.packed_facts(folded.packed_events()) == ((), -1)
    with pytest.raises(TypeError, match=r"packed_facts\(\) takes bytes"):
        _core.packed_facts("not bytes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not the packed events"):
        _core.packed_facts(folded.packed_events()[:-1])
