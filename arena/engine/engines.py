"""Which engine plays a hand: the compiled core (``arena.engine._core``, the default) or the Python reference
(``arena.engine.hand``), chosen by the environment variable ``ARENA_ENGINE`` (``compiled`` or ``python``).

Both have the same API and play every hand the same, event for event and chip for chip (tests/engine/
test_core_differential.py); the Python one is the readable reference, for debugging a hand step by step.
"""

from __future__ import annotations

from typing import cast

from arena import switches
from arena.engine.hand import Hand

ENGINE_VARIABLE = switches.ENGINE.variable
ENGINES = switches.ENGINE.values
DEFAULT_ENGINE = ENGINES[0]


def engine_name() -> str:
    """The engine ``ARENA_ENGINE`` selects (``compiled`` when it is unset or empty; ``SwitchError``, a ValueError,
    for anything else)."""
    return switches.ENGINE.value()


def hand_class(name: str | None = None) -> type[Hand]:
    """The ``Hand`` class of engine ``name`` (default: the one ``ARENA_ENGINE`` selects)."""
    name = engine_name() if name is None else name
    if name == "python":
        return Hand
    if name != "compiled":
        raise ValueError(f"unknown engine {name!r}: one of {', '.join(ENGINES)}")
    try:
        from arena.engine import _core
    except ImportError as exc:  # installed without a C++ compiler, or the build is stale
        raise ImportError(
            f"arena's compiled engine (arena.engine._core) is missing: {exc}; reinstall with a C++ compiler present "
            f"(`make install`), or set {ENGINE_VARIABLE}=python to play with the Python engine"
        ) from exc
    return cast(type[Hand], _core.Hand)  # the same API (arena/engine/_core.pyi), checked by the differential tests
