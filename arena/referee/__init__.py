"""Layer 4: the referee. It drives the engine hand after hand and talks to seats, owning clocks, retries,
time-outs, disconnects and what each seat may see. It knows nothing of gRPC: remote bots are one kind of seat.
"""

from arena.referee.clock import BotClock, ClockPolicy, TurnTimer
from arena.referee.game import EndReason, Game, GameHand, GameKind, GameResult, GameRules, Level
from arena.referee.match import Match, MatchResult, MatchSpec, ParticipantResult
from arena.referee.records import (
    Answer,
    Commented,
    Decision,
    DecisionRecord,
    HandRecord,
    HandSink,
    MixedAction,
    Request,
    Waiter,
    WireRequest,
)
from arena.referee.seat import FunctionSeat, HandStart, Introduction, InvalidAction, Seat, SeatUnavailable
from arena.referee.status import BotOutcome, DecisionHow, MatchKind, MatchStatus
from arena.referee.table import Participant, Player, TableRunner

__all__ = [
    "Answer",
    "BotClock",
    "BotOutcome",
    "ClockPolicy",
    "Commented",
    "Decision",
    "DecisionHow",
    "DecisionRecord",
    "EndReason",
    "FunctionSeat",
    "Game",
    "GameHand",
    "GameKind",
    "GameResult",
    "GameRules",
    "HandRecord",
    "HandSink",
    "HandStart",
    "Introduction",
    "InvalidAction",
    "Level",
    "Match",
    "MatchKind",
    "MatchResult",
    "MatchSpec",
    "MatchStatus",
    "MixedAction",
    "Participant",
    "ParticipantResult",
    "Player",
    "Request",
    "Seat",
    "SeatUnavailable",
    "TableRunner",
    "TurnTimer",
    "Waiter",
    "WireRequest",
]
