"""The Python SDK for arena bots: subclass ``Bot``, write ``act``, call ``run``. A bot in ten lines:

    from arena_sdk import Action, Bot, Request, call, check, raise_to, run

    class PairRaiser(Bot):
        def act(self, request: Request) -> Action:
            if request.legal.can_raise and request.is_pocket_pair:
                return raise_to(request.legal.min_raise_to)
            return check() if request.legal.can_check else call()

    run(PairRaiser(), name="pair-raiser")

``run`` takes the referee's address and the bot's token from ``--address``/``--token`` or ``ARENA_ADDRESS``/
``ARENA_TOKEN``, speaks the arena.v1 protocol (proto/README.md) and shields the match from the bot's own bugs.

The package (``arena-sdk``, installed with ``pip install ./proto/python``) needs only grpcio and protobuf and imports
nothing from the referee (``arena``). Beside this module: ``arena_sdk.cards`` (card ints and their text),
``arena_sdk.evaluator`` (hand values) and ``arena_sdk.pb`` (the protocol's generated messages).
"""

from typing import TYPE_CHECKING, Any

from arena_sdk.actions import COMMENT_MAX, Action, Mixed, all_in, call, check, fold, mixed, raise_to, safe_action
from arena_sdk.bot import Bot
from arena_sdk.request import Request
from arena_sdk.results import BotResult, MatchEndReason, MatchResult
from arena_sdk.types import (
    ActionKind,
    Clock,
    Event,
    EventKind,
    LegalActions,
    Pot,
    SeatStatus,
    Street,
    Structure,
    TableConfig,
)

if TYPE_CHECKING:
    from arena_sdk.client import PROTOCOL_VERSION, run


def __getattr__(name: str) -> Any:
    """``run`` and ``PROTOCOL_VERSION`` come from the client, which loads gRPC: only when a bot asks for them, so
    that what imports the SDK's cards, evaluator or messages alone (the referee does) does not load gRPC."""
    if name in ("run", "PROTOCOL_VERSION"):
        from arena_sdk.grpc_tuning import import_grpc

        import_grpc(bot=True)  # gRPC loaded as a bot's (arena_sdk.grpc_tuning)
        from arena_sdk import client

        return getattr(client, name)
    raise AttributeError(f"module 'arena_sdk' has no attribute {name!r}")


__all__ = [
    "COMMENT_MAX",
    "PROTOCOL_VERSION",
    "Action",
    "ActionKind",
    "Bot",
    "BotResult",
    "Clock",
    "Event",
    "EventKind",
    "LegalActions",
    "MatchEndReason",
    "MatchResult",
    "Mixed",
    "Pot",
    "Request",
    "SeatStatus",
    "Street",
    "Structure",
    "TableConfig",
    "all_in",
    "call",
    "check",
    "fold",
    "mixed",
    "raise_to",
    "run",
    "safe_action",
]
