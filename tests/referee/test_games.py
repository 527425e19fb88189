"""Cash games and freezeouts (RULES.md R11.3-R11.5, R2.3, R2.4): the game around the hands, in-process.

The game's state machine (arena.referee.game) is driven directly with chosen final stacks where a rule needs an
exact situation, and whole games are played by random bots where a property must hold whatever they do.
"""

from __future__ import annotations

import asyncio
import random
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from arena.engine import ConfigError, EventKind, TableConfig
from arena.records import queries
from arena.records.db import Database
from arena.records.ledger import Ledger
from arena.records.verify import verify_match
from arena.referee import (
    EndReason,
    FunctionSeat,
    Game,
    GameKind,
    GameRules,
    HandRecord,
    Level,
    Match,
    MatchResult,
    MatchSpec,
)
from arena.referee.game import first_button
from arena.runner.bots import BotSpec
from tests.records.test_phh_pokerkit import random_bot

FREEZEOUT = GameRules(GameKind.FREEZEOUT, level_hands=4)
TABLE = TableConfig(5, 10)


def game(n: int, rules: GameRules = FREEZEOUT, stack: int = 100, rotation: int = 0, rotations: int = 1,
         seed: str = "s", hands: int = 10) -> Game:
    order = tuple((seat + rotation) % n for seat in range(n))
    return Game(rules, TABLE, order, rotation, rotations, 0, seed, stack, hands)


def play_out(g: Game, finals: Sequence[Sequence[int]]) -> None:
    for final in finals:
        assert g.next_hand() is not None
        g.record(final)


class Keep:
    def __init__(self) -> None:
        self.records: list[HandRecord] = []

    def hand_finished(self, record: HandRecord) -> None:
        self.records.append(record)


def play(n: int, rules: GameRules, stack: int = 200, seed: str = "games", duplicate: bool = False,
         db: Database | None = None, match_id: str = "g") -> tuple[MatchResult, list[HandRecord]]:
    spec = MatchSpec(match_id, seed, 50, TABLE, starting_stack=stack, duplicate=duplicate, game=rules)
    keep = Keep()
    names = [f"bot{i}" for i in range(n)]
    entry = Ledger(db).open(spec, [BotSpec(name, "") for name in names]) if db is not None else None
    rng = random.Random(seed)
    seats = [(name, FunctionSeat(name, random_bot(rng.randrange(2**32)))) for name in names]
    match = Match(spec, seats, [keep] if entry is None else [keep, entry])
    result = asyncio.run(match.run())
    if entry is not None:
        entry.finish(result)
    return result, keep.records


# ----------------------------------------------------------------- the reset game


def test_R11_2_the_reset_game_starts_every_hand_with_the_same_stacks_whatever_the_last_one_left() -> None:
    result, records = play(3, GameRules(), stack=200, seed="reset")
    assert result.games == () and len(records) == 50
    assert all(r.starting_stacks == (200, 200, 200) for r in records)
    assert any(r.final_stacks != r.starting_stacks for r in records)


# ----------------------------------------------------------------- freezeout rules, exactly


def test_R11_4_players_out_in_the_same_hand_are_placed_by_their_starting_stacks_and_equal_stacks_share() -> None:
    g = game(5)
    play_out(g, [[150, 50, 100, 100, 100], [350, 0, 50, 50, 50], [500, 0, 0, 0]])
    # hand 1: bot1 (50 at its start) out; hand 2: bot2, bot3, bot4 out, each from 50: they share 2nd
    assert g.next_hand() is None and g.end is EndReason.ONE_LEFT
    assert g.result().places == (1, 5, 2, 2, 2)
    g = game(4)
    play_out(g, [[40, 60, 100, 200], [0, 0, 100, 300], [0, 400]])
    # bot0 (40) and bot1 (60) out in the same hand: the larger starting stack places first
    assert g.result().places == (4, 3, 2, 1) and g.result().eliminated == (1, 1, 2, None)


def test_R11_4_the_game_ends_when_one_player_holds_every_chip_and_the_winner_holds_them_all() -> None:
    g = game(3)
    play_out(g, [[300, 0, 0]])
    assert g.next_hand() is None and g.end is EndReason.ONE_LEFT
    assert g.result().final_stacks == (300, 0, 0) and g.result().hands_played == 1


def test_R11_4_the_hand_limit_ends_a_game_and_places_the_players_left_by_their_stacks() -> None:
    g = game(4, GameRules(GameKind.FREEZEOUT, hand_limit=2))
    play_out(g, [[0, 150, 150, 100], [180, 180, 40]])
    assert g.next_hand() is None and g.end is EndReason.HAND_LIMIT
    assert g.result().places == (4, 1, 1, 3)


def test_R11_4_the_button_moves_to_the_next_surviving_seat_and_the_blinds_follow_it() -> None:
    seed = next(s for s in (f"b{k}" for k in range(100)) if first_button(s, 0, 4) == 0)
    g = game(4, seed=seed)
    first = g.next_hand()
    assert first is not None and first.seats == (0, 1, 2, 3) and first.plan.button == 0
    g.record([100, 0, 150, 150])  # seat 1, next to the button, is eliminated
    second = g.next_hand()
    assert second is not None and second.seats == (0, 2, 3)
    assert second.seats[second.plan.button] == 2  # seat 1 is gone: the button skips to seat 2 (no dead button)
    g.record([100, 300, 0])
    third = g.next_hand()
    assert third is not None and third.seats == (0, 2) and third.seats[third.plan.button] == 0


def test_R11_4_blinds_rise_by_hands_played_after_the_schedule_they_keep_doubling_never_past_the_chips() -> None:
    rules = GameRules(GameKind.FREEZEOUT, levels=(Level(5, 10), Level(10, 20, 2)), level_hands=2)
    assert [rules.level(i, TABLE, 1000) for i in range(5)] == [
        Level(5, 10), Level(10, 20, 2), Level(20, 40, 4), Level(40, 80, 8), Level(80, 160, 16)]
    assert rules.level(40, TABLE, 1000) == Level(640, 1280, 128)  # stops once the big blind covers every chip
    g = game(2, rules)
    blinds = []
    for _ in range(6):
        hand = g.next_hand()
        assert hand is not None
        blinds.append((hand.config.small_blind, hand.config.big_blind, hand.config.ante))
        g.record(hand.stacks)
    assert blinds == [(5, 10, 0), (5, 10, 0), (10, 20, 2), (10, 20, 2), (20, 40, 4), (20, 40, 4)]
    default = GameRules(GameKind.FREEZEOUT, level_hands=3)  # no schedule: the table's stakes, doubling
    assert [default.level(i, TABLE, 10**6) for i in range(3)] == [Level(5, 10), Level(10, 20), Level(20, 40)]


def test_R11_4_rules_that_cannot_be_played_are_refused_naming_the_rule() -> None:
    with pytest.raises(ConfigError, match=r"R11\.4"):
        Level(20, 10)
    with pytest.raises(ConfigError, match=r"R11\.4"):
        GameRules(GameKind.FREEZEOUT, level_hands=0)
    with pytest.raises(ConfigError, match=r"R11\.5"):
        MatchSpec("m", "s", 10, game=FREEZEOUT, seats=2)


# ----------------------------------------------------------------- whole games with random bots


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(2, 10), stack=st.integers(20, 120), seed=st.integers(0, 10**6))
def test_R10_5_R11_4_chips_are_conserved_across_a_whole_freezeout_and_it_ends_with_one_player(
        n: int, stack: int, seed: int) -> None:
    result, records = play(n, GameRules(GameKind.FREEZEOUT, level_hands=3), stack=stack, seed=f"p{seed}")
    (g,) = result.games
    assert g.end is EndReason.ONE_LEFT and sorted(g.final_stacks) == [0] * (n - 1) + [n * stack]
    stacks = dict.fromkeys(range(n), stack)
    for record in records:  # every hand starts from the stacks the last one left, and conserves them (R10.5)
        assert tuple(stacks[p] for p in record.seating) == record.starting_stacks
        assert all(s > 0 for s in record.starting_stacks) and sum(record.payoffs) == 0
        for p, final in zip(record.seating, record.final_stacks, strict=True):
            stacks[p] = final
        assert sum(stacks.values()) == n * stack
    assert sorted(p for p in g.places if p is not None)[0] == 1 and None not in g.places
    assert sum(g.hands) == sum(len(r.seating) for r in records)


def test_R2_3_when_two_players_are_left_the_button_posts_the_small_blind_and_acts_first_pre_flop() -> None:
    result, records = play(4, GameRules(GameKind.FREEZEOUT, level_hands=2), stack=100, seed="heads-up")
    sizes = [len(r.seating) for r in records]
    assert sizes == sorted(sizes, reverse=True) and sizes[0] == 4 and sizes[-1] == 2
    for record in records:
        posts = {e.kind: e.seat for e in record.events if e.kind in (EventKind.POST_SMALL_BLIND,
                                                                     EventKind.POST_BIG_BLIND)}
        n = len(record.seating)
        if n == 2:  # R2.3 heads-up: the button is the small blind and acts first pre-flop
            assert posts.get(EventKind.POST_SMALL_BLIND, record.button) == record.button
            first = record.decisions[0] if record.decisions else None
            if first is not None and record.events[first.event_index].street == 0:
                assert first.seat == record.button
        else:
            assert posts.get(EventKind.POST_SMALL_BLIND, (record.button + 1) % n) == (record.button + 1) % n
    assert result.games[0].end is EndReason.ONE_LEFT


def test_R11_5_a_duplicate_freezeout_deals_the_same_decks_with_the_seats_rotated_compared_seat_by_seat() -> None:
    n = 3
    result, records = play(n, GameRules(GameKind.FREEZEOUT, level_hands=3), stack=150, seed="dup",
                           duplicate=True)
    assert [(g.game, g.rotation) for g in result.games] == [(0, 0), (0, 1), (0, 2)]
    by = {(r.rotation, r.deal): r for r in records}
    firsts = [by[(rotation, 0)] for rotation in range(n)]
    for rotation, record in enumerate(firsts):  # the same first deck and button; every bot moved one seat on
        assert record.deck == firsts[0].deck and record.button == firsts[0].button
        assert record.seating == tuple((seat + rotation) % n for seat in range(n))
        assert record.hole == firsts[0].hole  # seat by seat the same cards, now held by another bot
    # each bot held every seat's cards of the first deal once
    for bot in range(n):
        assert {firsts[r].seating.index(bot) for r in range(n)} == set(range(n))
    # while every seat is still in, each rotation's k-th hand is dealt the same deck to the same seats
    for (_rotation, deal), record in by.items():
        same = by.get((0, deal))
        if same is not None and len(record.seating) == len(same.seating) == n:
            assert record.deck == same.deck and record.hole == same.hole
    assert all(min(p for p in g.places if p is not None) == 1 for g in result.games)


def test_R11_4_verify_replays_whole_games_and_finds_a_changed_stack_or_a_deleted_hand(tmp_path: Path) -> None:
    folder = tmp_path
    db = Database(folder / "g.db")
    result, records = play(3, GameRules(GameKind.FREEZEOUT, level_hands=3), stack=150, seed="verify",
                           duplicate=True, db=db, match_id="fz")
    check = verify_match(db, "fz")
    assert check.ok and check.hands == len(records) == result.hands_played, check.problems
    assert queries.game_results(db, "fz") == list(result.games)
    middle = sorted(r.hand_number for r in records if r.rotation == 1)[1]
    tampering = {
        "a starting stack": "UPDATE hand_seats SET starting_stack = starting_stack + 10, final_stack = final_stack"
                            f" + 10 WHERE match_id = 'fz' AND hand_number = {middle} AND seat = 0",
        "a deleted hand": f"DELETE FROM actions WHERE match_id = 'fz' AND hand_number = {middle};"
                          f"DELETE FROM hand_seats WHERE match_id = 'fz' AND hand_number = {middle};"
                          f"DELETE FROM hands WHERE match_id = 'fz' AND hand_number = {middle}",
        "a place": "UPDATE game_results SET place = 9 WHERE match_id = 'fz' AND rotation = 2 AND participant = 0",
    }
    for what, sql in tampering.items():
        copy = folder / f"{what.replace(' ', '-')}.db"
        source = sqlite3.connect(db.path)
        source.execute(f"VACUUM INTO '{copy}'")
        source.close()
        conn = sqlite3.connect(copy)
        conn.executescript(sql)
        conn.commit()
        conn.close()
        assert not verify_match(Database(copy), "fz").ok, what


# ----------------------------------------------------------------- ratings from finishing orders


def test_R11_4_trueskill_rates_each_freezeout_by_its_finishing_order_beside_wins_itm_and_mean_place(
        tmp_path: Path) -> None:
    from arena.engine import Action, ActionKind
    from arena.ratings.blocks import rating_games
    from arena.ratings.leaderboard import build_leaderboard, leaderboard_json
    from arena.ratings.sessions import load_sessions
    from arena.ratings.trueskill_ratings import TrueSkill
    from arena.referee import Decision

    def folder(decision: Decision) -> Action:
        legal = decision.view.legal
        assert legal is not None
        return Action(ActionKind.CHECK if legal.can_check else ActionKind.FOLD)

    db = Database(tmp_path / "r.db")
    rules = GameRules(GameKind.FREEZEOUT, games=3, level_hands=3)
    spec = MatchSpec("fz", "ratings", 10, TABLE, starting_stack=100, game=rules)
    names = ["folder", "random", "allin"]
    seats = [("folder", FunctionSeat("folder", folder)), ("random", FunctionSeat("random", random_bot(3))),
             ("allin", FunctionSeat("allin", lambda d: Action(ActionKind.ALL_IN)))]
    entry = Ledger(db).open(spec, [BotSpec(n, "") for n in names])
    result = asyncio.run(Match(spec, seats, [entry]).run())
    entry.finish(result)
    assert len(result.games) == 9 and all(g.finished for g in result.games)
    sessions = load_sessions(db)  # a session a game's duplicate set (its three rotations), its chips summed
    assert len(sessions) == 3 and all(len(s.parts) == 3 for s in sessions)
    for s in sessions:
        assert s.chips == {bot: sum(part.chips[bot] for part in s.parts) for bot in s.chips}
    games = rating_games(sessions)  # each freezeout a rating game of its own, placed by its finishing order
    assert [g.places() for g in games] == [
        {names[p]: place - 1 for p, place in enumerate(g.places) if place is not None} for g in result.games]
    assert TrueSkill().rate(games) == TrueSkill().rate(games[::-1])  # order-independent (batch fit)
    board = build_leaderboard(db)
    rows = {r.bot: r for r in board.rows}
    for bot, row in rows.items():
        assert row.games is not None
        places = [g.places[names.index(bot)] for g in result.games]
        assert row.games.games == 9 and row.games.wins == places.count(1) == row.games.itm  # 3 players: ITM = 1st
        assert row.games.mean_place == pytest.approx(sum(p for p in places if p is not None) / 9)
    by_place = sorted(rows, key=lambda b: rows[b].games.mean_place or 9)  # type: ignore[union-attr]
    assert [rows[b].rank for b in by_place] == [1, 2, 3]  # here TrueSkill and the mean place agree
    assert leaderboard_json(board)["rows"][0]["games"]["games"] == 9


# ----------------------------------------------------------------- cash games


def cash(**changes: object) -> GameRules:
    return GameRules(GameKind.CASH, **changes)  # type: ignore[arg-type]


def test_R11_1_a_buy_in_outside_the_table_s_range_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"R11\.1"):
        game(3, cash(buy_in=(200, 400)), stack=100)
    with pytest.raises(ConfigError, match=r"R11\.3"):
        game(3, cash(join_at=(0, 1)))  # one hand per player
    with pytest.raises(ConfigError, match=r"R11\.3"):
        game(3, cash(join_at=(0, 5, 0), leave_at=(0, 3, 0)))  # leaves before it joins
    assert game(3, cash(buy_in=(50, 100)), stack=100).result().bought_in == (100, 100, 100)


def test_R11_3_stacks_carry_over_and_a_busted_player_re_buys_the_starting_stack_between_hands() -> None:
    g = game(3, cash(), stack=100)
    play_out(g, [[50, 130, 120]])
    hand = g.next_hand()
    assert hand is not None and hand.stacks == (50, 130, 120)
    g.record([0, 180, 120])
    hand = g.next_hand()
    assert hand is not None and hand.stacks == (100, 180, 120) and hand.entry_blinds == ()  # a re-buy is no join
    assert g.result().bought_in == (200, 100, 100)
    g = game(3, cash(rebuy=False), stack=100)
    play_out(g, [[0, 200, 100]])
    hand = g.next_hand()
    assert hand is not None and hand.plan.seating == (1, 2)  # without re-buys the busted player leaves
    g.record([300, 0])
    assert g.next_hand() is None and g.end is EndReason.TOO_FEW
    assert g.result().final_stacks == (0, 300, 0)


def test_R2_4_a_player_who_joins_while_play_is_under_way_posts_the_entry_blind_unless_it_is_in_the_blinds() -> None:
    for seed in ("e1", "e2", "e3", "e4", "e5"):
        g = game(4, cash(join_at=(0, 0, 0, 2)), stack=100, seed=seed)
        play_out(g, [[100, 100, 100], [100, 100, 100]])
        hand = g.next_hand()
        assert hand is not None and 3 in hand.plan.seating
        joiner = hand.plan.seating.index(3)
        assert hand.entry_blinds == (joiner,)
        g.record(hand.stacks)
        later = g.next_hand()
        assert later is not None and later.entry_blinds == ()  # only its first hand
    # played: the engine posts it, or only the blind the joiner is in (R11.3)
    result, records = play(4, cash(join_at=(0, 0, 0, 3)), stack=200, seed="join")
    first = next(r for r in records if 3 in r.seating)
    joiner = first.seating.index(3)
    n = len(first.seating)
    blinds = {(first.button + 1) % n, (first.button + 2) % n}
    entries = [e for e in first.events if e.kind is EventKind.POST_ENTRY_BLIND]
    if joiner in blinds:
        assert entries == []
    else:
        assert [(e.seat, e.amount) for e in entries] == [(joiner, TABLE.big_blind)]
    assert [len(r.seating) for r in records[:3]] == [3, 3, 3] and result.games[0].bought_in[3] >= 200


def test_R11_3_a_player_leaves_between_hands_with_its_stack_and_the_button_moves_to_the_next_seat_dealt_in() -> None:
    seed = next(s for s in (f"l{k}" for k in range(100)) if first_button(s, 0, 3) == 0)
    g = game(3, cash(leave_at=(0, 1, 0)), stack=100, seed=seed)
    first = g.next_hand()
    assert first is not None and first.seats[first.plan.button] == 0
    g.record([80, 140, 80])
    second = g.next_hand()
    assert second is not None and second.seats == (0, 2) and second.seats[second.plan.button] == 2
    g.record([60, 100])
    assert g.result().final_stacks == (60, 140, 100) and g.result().hands == (2, 1, 2)


def test_R11_3_a_table_with_fewer_than_two_players_waits_for_the_next_to_join() -> None:
    g = game(3, cash(join_at=(0, 4, 6)), stack=100)
    hand = g.next_hand()
    assert hand is not None and hand.plan.seating == (0, 1) and hand.entry_blinds == ()  # play was not under way
    g.record(hand.stacks)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(2, 10), seed=st.integers(0, 10**6), rebuy=st.booleans())
@example(n=5, seed=5, rebuy=False)  # the last player joins a table everyone has left: it never sits down
@example(n=3, seed=73554, rebuy=False)  # the last player is due as the others leave or bust: it never sits down
def test_R10_5_R11_3_chips_are_conserved_across_a_whole_cash_game_with_joins_leaves_and_re_buys(
        n: int, seed: int, rebuy: bool) -> None:
    rng = random.Random(seed)
    joins = tuple(rng.choice((0, 0, rng.randrange(1, 12))) for _ in range(n))
    leaves = tuple(rng.choice((0, 0, j + rng.randrange(1, 12))) for j in joins)
    rules = cash(rebuy=rebuy, join_at=joins, leave_at=leaves)
    result, records = play(n, rules, stack=100, seed=f"c{seed}")
    (g,) = result.games
    assert sum(g.final_stacks) == sum(g.bought_in) and sum(g.net(p) for p in range(n)) == 0
    stacks: dict[int, int] = {}
    bought = dict.fromkeys(range(n), 0)
    for record in records:
        for p, start in zip(record.seating, record.starting_stacks, strict=True):
            if stacks.get(p, 0) == 0:  # a buy-in or a re-buy, of the starting stack (R11.1)
                assert start == 100
                bought[p] += 100
            else:
                assert start == stacks[p]  # stacks carry over (R11.3)
        for p, final in zip(record.seating, record.final_stacks, strict=True):
            stacks[p] = final
    assert tuple(bought[p] for p in range(n)) == g.bought_in
    for p in range(n):
        assert sum(r.payoffs[r.seating.index(p)] for r in records if p in r.seating) == g.net(p)
        assert result.results[p].net == g.net(p)  # results in chips, and mbb/hand over the hands it played
        if result.results[p].hands:
            assert result.results[p].mbb_per_hand == pytest.approx(1000 * g.net(p) / 10 / g.hands[p])


def test_R11_5_duplicate_cash_games_deal_the_same_decks_with_the_seats_rotated_and_verify(tmp_path: Path) -> None:
    db = Database(tmp_path / "c.db")
    rules = cash(games=2)
    result, records = play(3, rules, stack=150, seed="cash-dup", duplicate=True, db=db, match_id="cash")
    assert [(g.game, g.rotation) for g in result.games] == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    by = {(r.rotation, r.deal): r for r in records}
    for deal in (0, 10):  # each game's first hand: the same deck, each physical seat the same cards
        firsts = [by[(rotation, deal)] for rotation in range(3)]
        assert len({r.deck for r in firsts}) == 1 and len({r.hole for r in firsts}) == 1
    check = verify_match(db, "cash")
    assert check.ok and check.hands == len(records), check.problems
    from arena.ratings.sessions import load_sessions
    sessions = load_sessions(db)
    assert len(sessions) == 2  # one per game's duplicate set
    for session, game_index in zip(sessions, (0, 1), strict=True):
        games = [g for g in result.games if g.game == game_index]
        assert session.chips == {f"bot{p}": sum(g.net(p) for g in games) for p in range(3)}


def test_R11_3_a_cash_game_cut_short_resumes_from_its_recorded_stacks_to_the_uninterrupted_result(
        tmp_path: Path) -> None:
    """Joins, leaves and re-buys included: the resumed games start each from its last recorded hand's stacks."""
    from arena.engine import Action, ActionKind
    from arena.referee import Decision

    def seeded(name: str) -> FunctionSeat:  # decides from the request alone, as a restarted process would
        def choose(decision: Decision) -> Action:
            legal = decision.view.legal
            assert legal is not None
            rng = random.Random(f"{name}:{decision.hand_id}:{decision.request_id}")
            kinds = [k for k, ok in ((ActionKind.FOLD, legal.can_fold), (ActionKind.CHECK, legal.can_check),
                                     (ActionKind.CALL, legal.can_call), (ActionKind.RAISE, legal.can_raise)) if ok]
            kind = rng.choice(kinds)
            return Action(kind, rng.randint(legal.min_raise_to, legal.max_raise_to) if kind is ActionKind.RAISE else 0)
        return FunctionSeat(name, choose)

    rules = cash(games=2, join_at=(0, 0, 4), leave_at=(0, 15, 0))
    spec = MatchSpec("c", "resume", 20, TABLE, starting_stack=100, game=rules)
    names = ["a", "b", "c"]

    def run(db: Database, resume: bool) -> MatchResult:
        entry = Ledger(db).open(spec, [BotSpec(n, "") for n in names], resume=resume)  # verified before it plays
        match = Match(spec, [(n, seeded(n)) for n in names], [entry], recorded=entry.played, history=entry.history)
        return entry.finish(asyncio.run(match.run()))

    whole = Database(tmp_path / "whole.db")
    uninterrupted = run(whole, False)
    cut_at = queries.hands_recorded(whole, "c") // 3  # the hands written after the first third never were
    copy = tmp_path / "cut.db"
    source = sqlite3.connect(whole.path)
    source.execute(f"VACUUM INTO '{copy}'")
    source.close()
    conn = sqlite3.connect(copy)  # as if the referee had died: later hands never reached the database
    later = f"SELECT hand_number FROM hands WHERE chain_index > {cut_at}"  # in the order they were written
    for table in ("actions", "hand_seats", "violations", "hands"):
        conn.execute(f"DELETE FROM {table} WHERE hand_number IN ({later})")
    conn.execute("DELETE FROM game_results")
    conn.execute("UPDATE matches SET status = 'running', seed = '', final_hash = ''")  # its seed still secret
    conn.commit()
    conn.close()
    cut = Database(copy)
    resumed = run(cut, True)
    assert resumed.games == uninterrupted.games
    assert [r.payoffs for r in queries.hand_records(cut, "c")] == [r.payoffs for r in queries.hand_records(whole, "c")]
    assert verify_match(cut, "c").ok
