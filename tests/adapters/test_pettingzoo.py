"""The PettingZoo environment on the arena's engine: PettingZoo's own API and seed tests, chips conserved over
thousands of random hands in every structure, and a policy served as an arena bot that plays a real match seeing,
request by request, exactly the observation the environment gives for the same hand."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from arena.adapters.pettingzoo import ACTIONS, MaskedActionError, env, random_policy, raw_env, serve_policy
from arena.adapters.pettingzoo.environment import SettingError
from arena.adapters.pettingzoo.table import action_mask, from_hand, legal_indexes, observation
from arena.engine import Hand, Structure, TableConfig
from arena.referee import ClockPolicy, HandRecord, MatchSpec
from arena.runner.remote_match import play, prepare_match
from arena_sdk import Bot, Request, call, check, run

pytestmark = [
    pytest.mark.timeout(120),
    # PettingZoo's API test suggests a Box observation; its own classic environments use this same Dict of the
    # observation and the action mask
    pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be"),
    pytest.mark.filterwarnings("ignore:Observation is not a NumPy array"),
]


@pytest.mark.parametrize("players", [2, 6])
def test_pettingzoo_api_and_seed_tests_pass(players: int) -> None:
    api_test(env(players=players), num_cycles=1000)
    api_test(raw_env(players=players, structure="fl", ante=10), num_cycles=300)
    seed_test(lambda: env(players=players), num_cycles=500)


def test_the_same_seed_deals_the_same_hands_and_another_seed_other_ones() -> None:
    def hands(seed: int) -> list[str]:
        e = raw_env(players=3)
        e.reset(seed=seed)
        dealt = []
        for _ in range(5):
            assert e.hand is not None
            dealt.append(f"{e.hand.button}:{e.hand.hole}")
            e.reset()
        return dealt

    assert hands(7) == hands(7) != hands(8)
    assert [h.split(":")[0] for h in hands(7)] == ["0", "1", "2", "0", "1"]  # the button moves every hand


def random_hands(e: raw_env, hands: int, rng: random.Random) -> tuple[int, list[float]]:
    """Play ``hands`` hands with uniformly random legal actions, checking at every step that no chip is made or
    lost; the number of steps and every hand's rewards."""
    steps = 0
    totals = []
    start = sum(e.stacks)
    for _ in range(hands):
        e.reset(seed=rng.randrange(1 << 30))
        while True:
            agent = e.agent_selection
            _, _, done, _, _ = e.last(observe=False)
            if done:
                break
            assert e.hand is not None
            e.step(rng.choice(legal_indexes(action_mask(from_hand(e.hand, e.hand.to_act or 0)))))
            steps += 1
            hand = e.hand
            assert (hand is not None and sum(hand.stacks) + hand.pot_total == start) or hand.payoffs is not None
        assert e.hand is not None and e.hand.payoffs is not None
        assert sum(e.hand.stacks) == start and sum(e.hand.payoffs) == 0
        totals.append(sum(e._cumulative_rewards.values()))
        assert agent is not None
    return steps, totals


def test_chips_are_conserved_over_thousands_of_random_hands() -> None:
    rng = random.Random(30)
    steps = hands = 0
    for players, structure, stacks, ante, bb_ante, count in (
            (2, "nl", 2_000, 0, False, 1_200),
            (6, "pl", [300, 5_000, 900, 12_000, 450, 2_500], 10, False, 600),
            (9, "fl", 1_500, 25, True, 300)):
        e = raw_env(players=players, structure=structure, stacks=stacks, ante=ante, big_blind_ante=bb_ante,
                    reward="chips")
        n, totals = random_hands(e, count, rng)
        steps, hands = steps + n, hands + count
        assert all(abs(t) < 1e-9 for t in totals)  # the rewards of a hand add up to zero
    assert hands == 2_100 and steps > 8_000


def test_rewards_are_in_big_blinds_or_chips_and_masked_actions_are_refused() -> None:
    chips, bbs = raw_env(reward="chips"), raw_env()
    for e in (chips, bbs):
        e.reset(seed=3)
        e.step(0)  # the small blind (on the button, heads-up) folds: it loses its 50
    assert chips.rewards == {"player_0": -50, "player_1": 50} and bbs.rewards == {"player_0": -0.5, "player_1": 0.5}
    e = raw_env()
    e.reset(seed=3)
    e.step(1)  # the small blind calls: the big blind may check, so folding is refused (R6.1a)
    assert e.observe("player_1")["action_mask"].tolist() == [0, 1, 1, 0, 1, 1, 1]
    with pytest.raises(MaskedActionError, match=r"R6\.1: fold"):
        e.step(0)
    with pytest.raises(MaskedActionError, match="not an action index"):
        e.step(len(ACTIONS))
    wrapped = env()
    wrapped.reset(seed=3)
    wrapped.step(1)
    wrapped.step(0)  # PettingZoo's wrapper ends the hand with -1 for the illegal move instead
    assert wrapped.rewards["player_1"] == -1
    fresh = raw_env()  # before reset, and after close: the environment's own error, not an AttributeError
    for use in (lambda: fresh.step(1), fresh.last, lambda: fresh.observe("player_0")):
        with pytest.raises(RuntimeError, match=r"call reset\(\) before using the environment"):
            use()
    fresh.reset(seed=3)
    fresh.close()
    with pytest.raises(RuntimeError, match=r"after close\(\)"):
        fresh.step(1)
    with pytest.raises(SettingError, match=r"R2\.1"):
        raw_env(players=1)
    with pytest.raises(SettingError, match="stacks: seat 1"):
        raw_env(players=2, stacks=[1_000, 100])


def test_the_raise_sizes_are_the_pot_fractions_the_mask_offers() -> None:
    e = raw_env(players=2, stacks=10_000)
    e.reset(seed=1)
    e.step(1)  # small blind calls 50: pot 200, the big blind may check or raise
    assert e.hand is not None
    state = from_hand(e.hand, 1)
    assert (state.pot, state.call_amount, state.min_raise_to, state.max_raise_to) == (200, 0, 200, 10_000)
    assert action_mask(state).tolist() == [0, 1, 1, 0, 1, 1, 1]  # 1/2 pot (to 200) is the minimum raise itself
    e.step(4)  # three quarters of the pot: 100 + 0.75 * 200 = 250
    assert e.hand.bets == [100, 250]


# ----------------------------------------------------------------- the policy served in a real match


class Station(Bot):
    def act(self, request: Request):  # type: ignore[no-untyped-def]
        return check() if request.legal.can_check else call()


def recording(policy: Callable[[dict[str, np.ndarray]], int], seen: list[tuple[np.ndarray, np.ndarray]]
              ) -> Callable[[dict[str, np.ndarray]], int]:
    def choose(obs: dict[str, np.ndarray]) -> int:
        seen.append((obs["observation"].copy(), obs["action_mask"].copy()))
        return policy(obs)
    return choose


def test_a_served_policy_plays_a_real_match_seeing_what_the_environment_shows() -> None:
    records: list[HandRecord] = []
    seen: list[tuple[np.ndarray, np.ndarray]] = []
    spec = MatchSpec("rl", "policy-seed", 40, config=TableConfig(structure=Structure.NO_LIMIT),
                     policy=ClockPolicy(per_action_ms=5000, max_violations=0))

    async def main():  # type: ignore[no-untyped-def]
        setup = await prepare_match(spec, ["policy", "station"], on_hand=records.append)
        address = setup.server.address
        policy_token, station_token = (seat.token for seat in setup.seats)
        try:
            return await asyncio.gather(
                play(setup),
                asyncio.to_thread(serve_policy, recording(random_policy(5), seen), argv=[], address=address,
                                  token=policy_token),
                asyncio.to_thread(run, Station(), argv=[], address=address, token=station_token))
        finally:
            await setup.server.stop()

    result, served, _ = asyncio.run(main())
    assert result.reason == "completed" and result.hands_played == 40
    assert all(r.violations == 0 for r in result.results) and served.ok
    # Replay every recorded hand in the engine: before each of the policy's decisions the environment's own
    # observation and mask are exactly what the served bot saw, and its comment names the action it played
    replayed: list[tuple[np.ndarray, np.ndarray]] = []
    comments = set()
    for record in sorted(records, key=lambda r: r.hand_number):
        hand = Hand(record.config, list(record.starting_stacks), list(record.deck), button=record.button)
        for decision in record.decisions:
            if decision.participant == 0:
                state = from_hand(hand, decision.seat)
                replayed.append((observation(state), action_mask(state)))
                comments.add(decision.comment)
            hand.act(decision.seat, decision.action)
    def key(pair: tuple[np.ndarray, np.ndarray]) -> bytes:
        return pair[0].tobytes() + pair[1].tobytes()

    assert len(replayed) == len(seen) > 40
    assert sorted(map(key, seen)) == sorted(map(key, replayed))  # the same observations and masks, one for one
    assert comments <= set(ACTIONS) and len(comments) > 3
