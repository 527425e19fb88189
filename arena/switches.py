"""The environment's switches that arena reads deep inside (which engine plays a hand, how a table plays its
decisions): their names and values in one place, so that the ``arena`` command refuses a bad one before anything
reads it (``arena.__main__``), in words and with exit status 2, never a traceback."""

from __future__ import annotations

import os
from dataclasses import dataclass


class SwitchError(ValueError):
    """A switch set to a value that selects nothing."""


@dataclass(frozen=True)
class Switch:
    """An environment variable and the values it takes; the first is the default (unset or empty)."""

    variable: str
    values: tuple[str, ...]

    def value(self) -> str:
        """The value the environment selects; ``SwitchError`` naming the variable and its values if none."""
        name = os.environ.get(self.variable, "").strip().lower() or self.values[0]
        if name not in self.values:
            raise SwitchError(f"{self.variable} must be one of {', '.join(self.values)}; got {name!r}")
        return name


ENGINE = Switch("ARENA_ENGINE", ("compiled", "python"))  # arena.engine.engines
TABLE_LOOP = Switch("ARENA_TABLE_LOOP", ("fast", "reference"))  # arena.referee.fast
BOT_SERVER = Switch("ARENA_BOT_SERVER", ("native", "grpcio"))  # arena.transport.native_server
LANES = Switch("ARENA_LANES", ("on", "off"))  # arena.transport.lanes (with the native bot server)
HAND_CHAIN = Switch("ARENA_HAND_CHAIN", ("on", "off"))  # lanes that go on to the next hand (arena.referee.lane)


def check() -> None:
    """``SwitchError`` for the first switch set to a value that selects nothing."""
    for switch in (ENGINE, TABLE_LOOP, BOT_SERVER, LANES, HAND_CHAIN):
        switch.value()
