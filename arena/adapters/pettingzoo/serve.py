"""A policy trained in the PettingZoo environment, served as an arena bot: each ActionRequest becomes the very
observation the environment would have given (``arena.adapters.pettingzoo.table``), the policy picks an action
index, and the index becomes the same action the environment would have played. Training and competition share one
rule set and one encoding. Only the SDK (and numpy) is needed here, not PettingZoo.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from arena.adapters.pettingzoo.table import (
    ACTIONS,
    CHECK_CALL,
    MaskedActionError,
    action_mask,
    engine_action,
    from_request,
    legal_indexes,
    observation,
)
from arena_sdk import Action, ActionKind, Bot, MatchResult, Request

log = logging.getLogger("arena.adapters.pettingzoo")

Policy = Callable[[dict[str, np.ndarray]], int]
"""A policy: the environment's observation (``{"observation": ..., "action_mask": ...}``) -> an action index."""


def random_policy(seed: int | None = None) -> Policy:
    """A policy that picks uniformly among the actions the mask allows (a baseline, and for trying things out)."""
    rng = np.random.default_rng(seed)

    def choose(obs: dict[str, np.ndarray]) -> int:
        return int(rng.choice(np.flatnonzero(obs["action_mask"])))

    return choose


class PolicyBot(Bot):
    """An SDK bot that asks ``policy`` for every action, with the environment's observation; an index the mask does
    not allow (or a policy that raises) is logged and played as check or call, which is always allowed.
    ``comment`` adds the action's name as the decision comment (``"raise 1/2 pot"``), for the records."""

    def __init__(self, policy: Policy, comment: bool = True) -> None:
        self.policy = policy
        self.comment = comment
        self.fallbacks = 0

    def act(self, request: Request) -> Action:
        state = from_request(request)
        obs: dict[str, np.ndarray] = {"observation": observation(state), "action_mask": action_mask(state)}
        try:
            index = int(self.policy(obs))
            chosen = engine_action(state, index)
        except (MaskedActionError, ValueError, TypeError) as exc:
            self.fallbacks += 1
            log.warning("the policy's answer cannot be played (%s); playing check/call", exc)
            index = CHECK_CALL
            chosen = engine_action(state, index)
        action = Action(ActionKind(int(chosen.kind)), chosen.amount)
        return action.with_comment(ACTIONS[index]) if self.comment else action


def serve_policy(policy: Policy, *, name: str = "policy", argv: Sequence[str] | None = None,
                 comment: bool = True, **kwargs: Any) -> MatchResult:
    """Play a match (or a league, with a key) as an arena bot whose actions ``policy`` picks: ``arena_sdk.run``
    with a ``PolicyBot``, so the referee's address and the token come from ``--address``/``--token`` or
    ``ARENA_ADDRESS``/``ARENA_TOKEN`` (``argv`` and ``kwargs`` as ``run`` takes them). Serve a policy at tables of
    the size it was trained for: the observation has one block per seat."""
    from arena_sdk import run  # gRPC loaded as a bot's only now: importing the adapter (a training script that may
    # also run a referee) loads none

    return run(PolicyBot(policy, comment), name=name, argv=argv, **kwargs)


__all__ = ["Policy", "PolicyBot", "legal_indexes", "random_policy", "serve_policy"]
