"""A PettingZoo AEC environment on the arena's own engine (``arena.engine.Hand``): the exact rules of RULES.md, the
rules every arena match is refereed by, not a simplification of them.

One episode is one hand. Agents ``player_0`` .. ``player_{n-1}`` sit in seats 0 .. n-1; the button moves one seat
clockwise every hand (``reset(seed=...)`` starts it again at seat 0), and every hand starts from the configured
stacks (the reset game, R11.2). The deck is shuffled by the environment's generator, so ``reset(seed=s)`` followed by
the same actions plays the same hands. Observations, the action mask and the ``Discrete(7)`` actions are described
in ``arena.adapters.pettingzoo.table``; the reward comes at the end of the hand, each agent's net result in big
blinds (``reward="bb"``, the default) or in chips (``reward="chips"``), and the rewards of a hand add up to zero.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from arena.adapters.pettingzoo.table import (
    ACTIONS,
    action_mask,
    engine_action,
    from_hand,
    observation,
    observation_size,
)
from arena.cards import format_cards
from arena.engine import MAX_SEATS, MIN_SEATS, AnteMode, Hand, Structure, TableConfig

REWARDS = ("bb", "chips")


class SettingError(ValueError):
    """An environment setting that cannot be used; the message names the setting, and the rule where there is one."""


def _structure(value: str | Structure) -> Structure:
    if isinstance(value, Structure):
        return value
    try:
        return Structure(value)
    except ValueError:
        raise SettingError(f"structure {value!r} is not one of nl, pl, fl (R7)") from None


class raw_env(AECEnv):  # type: ignore[misc]  # PettingZoo's own name for it; PettingZoo has no types
    """Texas Hold'em under the arena's rules for ``players`` agents (2 to 22), one hand per episode.

    ``structure`` is ``"nl"``, ``"pl"`` or ``"fl"``; ``small_blind``/``big_blind`` the blinds; ``ante`` an ante
    posted by every seat (or by the big blind for the table with ``big_blind_ante``); ``stacks`` every seat's stack
    at the start of each hand, one number or one per seat, each more than the big blind and the ante it may post
    (so every hand has a decision); ``reward`` ``"bb"`` or ``"chips"``; ``render_mode`` ``"ansi"`` or ``"human"``.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["human", "ansi"], "name": "arena_holdem_v0",
                                          "is_parallelizable": False, "render_fps": 1}

    def __init__(self, players: int = 2, structure: str | Structure = "nl", small_blind: int = 50,
                 big_blind: int = 100, ante: int = 0, big_blind_ante: bool = False,
                 stacks: int | Sequence[int] = 10_000, reward: str = "bb", render_mode: str | None = None) -> None:
        super().__init__()
        if not isinstance(players, int) or not MIN_SEATS <= players <= MAX_SEATS:
            raise SettingError(f"players {players!r}: a table has {MIN_SEATS} to {MAX_SEATS} seats (R2.1)")
        if reward not in REWARDS:
            raise SettingError(f"reward {reward!r} is not one of {', '.join(REWARDS)}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise SettingError(f"render_mode {render_mode!r} is not one of human, ansi")
        mode = AnteMode.NONE if not ante else AnteMode.BIG_BLIND if big_blind_ante else AnteMode.EACH
        self.config = TableConfig(small_blind=small_blind, big_blind=big_blind, structure=_structure(structure),
                                  ante=ante, ante_mode=mode)
        self.stacks = [stacks] * players if isinstance(stacks, int) else list(stacks)
        if len(self.stacks) != players:
            raise SettingError(f"stacks: {len(self.stacks)} stacks for {players} players")
        forced = big_blind + (ante * players if big_blind_ante else ante)
        for seat, stack in enumerate(self.stacks):
            if not isinstance(stack, int) or stack <= forced:
                raise SettingError(f"stacks: seat {seat} has {stack!r} chips; every stack must be more than the "
                                   f"{forced} chips the big blind and antes may take (R3.3), so that every hand "
                                   "has a decision")
        self.reward_unit = reward
        self.render_mode = render_mode
        self.possible_agents = [f"player_{seat}" for seat in range(players)]
        self.agents = self.possible_agents[:]
        high = max(sum(self.stacks) / big_blind, 1.0)
        size = observation_size(players)
        self.observation_spaces = {agent: spaces.Dict({
            "observation": spaces.Box(low=0.0, high=high, shape=(size,), dtype=np.float32),
            "action_mask": spaces.Box(low=0, high=1, shape=(len(ACTIONS),), dtype=np.int8),
        }) for agent in self.possible_agents}
        self.action_spaces = {agent: spaces.Discrete(len(ACTIONS)) for agent in self.possible_agents}
        self._rng: np.random.Generator | None = None
        self._button = -1
        self.hand: Hand | None = None

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        """The observation space of every agent: the vector and the action mask."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        """``Discrete(7)``: fold, check/call, the minimum raise, raises of 1/2, 3/4 and 1 pot, all-in."""
        return self.action_spaces[agent]

    def _seat(self, agent: str) -> int:
        return self.possible_agents.index(agent)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new hand: with ``seed``, from a generator seeded with it and the button on seat 0; without, from the
        generator as it stands and the button one seat on."""
        if seed is not None or self._rng is None:
            self._rng, _ = seeding.np_random(seed)
            self._button = -1
        n = len(self.possible_agents)
        self._button = (self._button + 1) % n
        deck = [int(card) for card in self._rng.permutation(52)]
        self.hand = Hand(self.config, list(self.stacks), deck, button=self._button)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        assert self.hand.to_act is not None  # the stacks cover the forced bets: somebody acts
        self.agent_selection = self.possible_agents[self.hand.to_act]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``agent``'s observation: its vector and its action mask (all 0 unless it is to act)."""
        hand = self._require()
        state = from_hand(hand, self._seat(agent))
        return {"observation": observation(state), "action_mask": action_mask(state)}

    def step(self, action: int | None) -> None:
        """Play ``action`` (an index of ``ACTIONS``) for the agent to act; a masked one is ``MaskedActionError``
        (``env()`` ends the hand with a reward of -1 for it instead). At the end of the hand every agent is
        terminated with its reward."""
        hand = self._require()
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        seat = self._seat(agent)
        hand.act(seat, engine_action(from_hand(hand, seat), action))  # type: ignore[arg-type]
        self._cumulative_rewards[agent] = 0.0
        if hand.payoffs is not None:
            scale = 1.0 / self.config.big_blind if self.reward_unit == "bb" else 1.0
            self.rewards = {a: hand.payoffs[self._seat(a)] * scale for a in self.agents}
            self.terminations = dict.fromkeys(self.agents, True)
        else:
            assert hand.to_act is not None
            self.agent_selection = self.possible_agents[hand.to_act]
        self._accumulate_rewards()
        if hand.payoffs is not None:
            self._deads_step_first()
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | None:
        """The hand in one line of text (``ansi``: returned; ``human``: printed)."""
        hand = self._require()
        text = (f"button seat {hand.button}, board [{format_cards(hand.board)}], pot {hand.pot_total}, "
                f"stacks {hand.stacks}, " + (f"payoffs {hand.payoffs}" if hand.payoffs is not None
                                             else f"{self.possible_agents[hand.to_act or 0]} to act"))
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def last(self, observe: bool = True) -> tuple[Any, ...]:
        """PettingZoo's ``last``, after ``reset`` (before it, the same error as every other call)."""
        self._require()
        return tuple(super().last(observe))

    def close(self) -> None:
        """The hand let go: the environment is used again only after ``reset``."""
        self.hand = None

    def _require(self) -> Hand:
        if self.hand is None:
            raise RuntimeError("call reset() before using the environment (first, and after close())")
        return self.hand


def env(**kwargs: Any) -> Any:
    """``raw_env(**kwargs)`` in PettingZoo's usual wrappers (as its classic environments): a masked action ends the
    hand with a reward of -1 for the agent that took it, an action outside the space is an assertion, and the
    methods must be called in order."""
    wrapped = wrappers.TerminateIllegalWrapper(raw_env(**kwargs), illegal_reward=-1)
    wrapped = wrappers.AssertOutOfBoundsWrapper(wrapped)
    return wrappers.OrderEnforcingWrapper(wrapped)
