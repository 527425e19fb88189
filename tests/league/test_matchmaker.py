"""The matchmaker: who has waited longest is seeded first, opponents come from a widening rating window, owners
are kept apart, and nobody plays more matches at once than it has room for."""

from __future__ import annotations

from arena.league.matchmaker import Candidate, Rules, pick, window


def bot(name: str, mu: float = 25.0, owner: str = "", free: int = 1, waiting: float = 0.0,
        last: float | None = None, matches: int = 0, sigma: float = 0.0) -> Candidate:
    return Candidate(name, owner, mu, sigma, free, waiting, last, matches)


def test_the_bot_that_waited_longest_is_seeded_first_and_meets_the_least_recent_player() -> None:
    bots = [bot("a", last=90.0, matches=5), bot("b", last=10.0, matches=5), bot("c", last=50.0, matches=5),
            bot("d", last=None)]
    assert pick(bots, Rules(), now=100.0, budget=1) == [("d", "b")]
    assert pick(bots, Rules(), now=100.0, budget=2) == [("d", "b"), ("c", "a")]


def test_ties_go_to_the_bot_with_fewer_matches() -> None:
    bots = [bot("seed", last=0.0), bot("busy", last=50.0, matches=9), bot("idle", last=50.0, matches=2)]
    assert pick(bots, Rules(), now=100.0, budget=1) == [("seed", "idle")]


def test_the_rating_window_widens_while_a_bot_waits() -> None:
    rules = Rules(window=2.0, widen_per_minute=4.0)
    bots = [bot("low", mu=15.0, waiting=0.0, last=0.0), bot("high", mu=30.0, waiting=0.0, last=1.0)]
    assert pick(bots, rules, now=60.0, budget=1) == []  # 15 apart, a window of 2 + 4 = 6
    assert window(rules, 180.0) == 14.0
    assert pick(bots, rules, now=210.0, budget=1) == [("low", "high")]  # 3.5 minutes: a window of 16
    unsure = [bot("low", mu=15.0, sigma=10.0, last=0.0), bot("high", mu=30.0, sigma=10.0, last=1.0)]
    assert pick(unsure, rules, now=2.0, budget=1) == [("low", "high")]  # 15 apart, within sqrt(10² + 10²) + 2


def test_one_bot_per_owner_at_a_table_unless_allowed() -> None:
    bots = [bot("a1", owner="ann", last=0.0), bot("a2", owner="ann", last=1.0), bot("b1", owner="bob", last=2.0)]
    assert pick(bots, Rules(), now=10.0, budget=2) == [("a1", "b1")]
    assert pick(bots, Rules(same_owner=True), now=10.0, budget=2) == [("a1", "a2")]
    anonymous = [bot("x", last=0.0), bot("y", last=1.0)]  # no owner given: nobody to keep apart
    assert pick(anonymous, Rules(), now=10.0, budget=1) == [("x", "y")]


def test_free_slots_budget_rest_and_table_size() -> None:
    bots = [bot("a", free=2, last=0.0), bot("b", free=1, last=1.0), bot("c", free=0), bot("d", free=1, last=2.0)]
    tables = pick(bots, Rules(), now=100.0, budget=5)
    assert tables == [("a", "b"), ("a", "d")]
    assert all("c" not in t for t in tables)
    assert pick(bots, Rules(), now=100.0, budget=1) == [("a", "b")]
    assert pick(bots, Rules(rest_s=98.5), now=100.0, budget=5) == [("a", "b")]  # d ended 98 s ago: resting
    three = [bot(n, last=float(i)) for i, n in enumerate("pqrst")]
    assert pick(three, Rules(seats=3), now=10.0, budget=3) == [("p", "q", "r")]


def test_nobody_is_starved_over_many_rounds() -> None:
    """Replaying the host's loop: every bot plays about as often, whatever its rating."""
    mus = {"a": 10.0, "b": 20.0, "c": 25.0, "d": 30.0, "e": 40.0}
    last: dict[str, float | None] = dict.fromkeys(mus)
    played = dict.fromkeys(mus, 0)
    for now in range(1, 201):
        cands = [bot(n, mu=mus[n], last=last[n], matches=played[n], waiting=last[n] or 0.0) for n in mus]
        for table in pick(cands, Rules(window=100.0), now=float(now), budget=2):
            for n in table:
                last[n] = float(now)
                played[n] += 1
    assert max(played.values()) - min(played.values()) <= 1, played
