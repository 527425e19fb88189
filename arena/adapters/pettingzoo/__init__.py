"""Train with PettingZoo on the arena's own rules, then play the trained policy in the arena.

``env(players=2, ...)`` and ``raw_env`` are a PettingZoo AEC environment on the arena's engine
(``arena.adapters.pettingzoo.environment``); ``serve_policy(policy)`` plays a policy as an arena bot that sees the
same observations and plays the same actions (``arena.adapters.pettingzoo.serve``). The environment needs the
optional extra ``pip install 'arena[pettingzoo]'`` (PettingZoo and Gymnasium); serving a policy needs only numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from arena.adapters.pettingzoo.serve import Policy, PolicyBot, random_policy, serve_policy
from arena.adapters.pettingzoo.table import ACTIONS, MaskedActionError, observation_size

if TYPE_CHECKING:
    from arena.adapters.pettingzoo.environment import SettingError, env, raw_env

_ENVIRONMENT = ("env", "raw_env", "SettingError")


def __getattr__(name: str) -> Any:
    """``env``, ``raw_env`` and ``SettingError`` load PettingZoo, so only when asked for (a served policy does not
    need it); without it installed, the error says what to install."""
    if name in _ENVIRONMENT:
        try:
            from arena.adapters.pettingzoo import environment
        except ImportError as exc:
            raise ImportError(f"{exc}: the PettingZoo environment needs the optional extra: "
                              "pip install 'arena[pettingzoo]'") from exc
        return getattr(environment, name)
    raise AttributeError(f"module 'arena.adapters.pettingzoo' has no attribute {name!r}")


__all__ = ["ACTIONS", "MaskedActionError", "Policy", "PolicyBot", "SettingError", "env", "observation_size",
           "random_policy", "raw_env", "serve_policy"]
