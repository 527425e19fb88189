"""ACPC clients as local bots (``--bot NAME=acpc:COMMAND``, ``acpc = true``): each runs behind the ACPC bridge
(arena.adapters.acpc) in its sandbox, so a match with one must be a game the ACPC protocol can tell it about."""

from __future__ import annotations

from collections.abc import Sequence

from arena.adapters.acpc.gamedef import AcpcGameError, game_of
from arena.engine import TableConfig
from arena.referee import GameRules
from arena.runner.bots import BotSpec


class AcpcSeatError(ValueError):
    """A match with an ACPC client that no ACPC game can express; the message says why."""


def check_acpc_seats(bots: Sequence[BotSpec], config: TableConfig, stack: int, game: GameRules, players: int) -> None:
    """Refuse a match of ``players`` at a table with ACPC clients among ``bots`` that is no ACPC game: stacks
    carried over (a cash game, a freezeout), antes, pot-limit, mucked hands, more than 10 players (``AcpcSeatError``
    with the reason)."""
    names = [b.name for b in bots if b.acpc]
    if not names:
        return
    who = f"{', '.join(names)} (ACPC {'client' if len(names) == 1 else 'clients'})"
    if game.is_game:
        raise AcpcSeatError(f"{who}: a {game.kind.value} game carries the stacks over from hand to hand, and "
                            "unequal stacks are no ACPC game (its stacks are equal and reset every hand): play the "
                            "reset game (R11.2)")
    try:
        game_of(config, players, stack)
    except AcpcGameError as exc:
        raise AcpcSeatError(f"{who}: no ACPC game can express this match: {exc}") from None


__all__ = ["AcpcSeatError", "check_acpc_seats"]
