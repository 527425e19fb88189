"""How a match ended for a bot: ``MatchResult`` (the referee's MatchEnd, or why it never came) and each bot's
``BotResult`` in it; ``run`` returns one."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from arena_sdk.pb import bot_pb2

__all__ = ["BotResult", "MatchEndReason", "MatchResult"]


class MatchEndReason(IntEnum):
    """Why a match ended (arena.v1.MatchEndReason); UNSPECIFIED when it never properly ended (see ``error``)."""

    UNSPECIFIED = 0
    COMPLETED = 1
    FORFEIT = 2
    ABORTED = 3

    @classmethod
    def _missing_(cls, value: object) -> MatchEndReason:
        return cls.UNSPECIFIED


@dataclass(frozen=True, slots=True)
class BotResult:
    """One bot's result over the match (arena.v1.BotResult); ``is_you`` marks your own."""

    seat: int
    name: str
    net_chips: int
    hands_played: int
    violations: int = 0
    forfeited: bool = False
    is_you: bool = False


@dataclass(frozen=True, slots=True)
class MatchResult:
    """How the match ended for this bot: the referee's MatchEnd, or ``error`` if it never came; ``reconnects``:
    how many times the SDK took the seat back on a new stream after one broke."""

    reason: MatchEndReason
    message: str
    results: tuple[BotResult, ...] = ()
    match_id: str = ""
    error: str | None = None
    reconnects: int = 0

    @property
    def ok(self) -> bool:
        """Whether the match ended with a MatchEnd (whatever its reason)."""
        return self.error is None

    @property
    def exit_code(self) -> int:
        """Process exit status for a bot script: 0 after MatchEnd (reconnects or not), 1 otherwise
        (``raise SystemExit(r.exit_code)``)."""
        return 0 if self.ok else 1

    @property
    def me(self) -> BotResult | None:
        """Your own result, if the referee sent one."""
        return next((r for r in self.results if r.is_you), None)

    @classmethod
    def from_pb(cls, pb: bot_pb2.MatchEnd) -> MatchResult:
        """Read the protocol message."""
        results = tuple(
            BotResult(
                seat=r.seat,
                name=r.name,
                net_chips=int(r.net_chips),
                hands_played=int(r.hands_played),
                violations=r.violations,
                forfeited=r.forfeited,
                is_you=r.is_you,
            )
            for r in pb.results
        )
        return cls(MatchEndReason(pb.reason), pb.message, results, pb.match_id)

    @classmethod
    def failed(cls, error: str, match_id: str = "") -> MatchResult:
        """A match that ended without a MatchEnd."""
        return cls(MatchEndReason.UNSPECIFIED, error, (), match_id, error)
