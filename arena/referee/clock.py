"""The referee's clocks: a limit per action and a time bank per bot per match, measured by the referee."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ClockPolicy:
    """How bots are timed and how many mistakes they may make.

    A bot has ``per_action_ms`` for each action; past that, the time comes out of its ``time_bank_ms`` for the
    match. When both are gone the referee checks if that is free, else folds (a violation). An illegal action is
    refused up to ``max_retries`` times per request, then treated the same way. ``max_violations`` violations
    forfeit the match (0: never); a forfeited bot is played by the same policy for the rest of the match.
    ``connect_timeout_ms`` is how long the bots are waited for before the first hand; a bot that drops its
    connection is waited for ``reconnect_grace_ms`` once, before the next hand, to let it rejoin.
    """

    per_action_ms: int = 2000
    time_bank_ms: int = 30000
    max_retries: int = 2
    max_violations: int = 20
    connect_timeout_ms: int = 10000
    reconnect_grace_ms: int = 2000

    def __post_init__(self) -> None:
        for name in ("per_action_ms", "time_bank_ms", "max_retries", "max_violations", "connect_timeout_ms",
                     "reconnect_grace_ms"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative")


class BotClock:
    """One bot's clock for a match: the per-action allowance plus what is left in its bank."""

    def __init__(self, policy: ClockPolicy) -> None:
        self.policy = policy
        self.bank_ms = float(policy.time_bank_ms)
        self.in_lane = False  # a lane holds the bank (arena.referee.lane): no other lane may charge it meanwhile

    def allowance_s(self) -> float:
        """Seconds the bot may take for its next action."""
        return (self.policy.per_action_ms + self.bank_ms) / 1000.0

    def charge(self, elapsed_s: float) -> None:
        """Take the part of ``elapsed_s`` beyond the per-action limit out of the bank."""
        over = elapsed_s * 1000.0 - self.policy.per_action_ms
        if over > 0:
            self.bank_ms = max(0.0, self.bank_ms - over)


class TurnTimer:
    """The clock of one request. It starts when the request leaves the referee: a remote seat calls ``sent`` as
    its stream hands the request to the network, so time the referee itself spends (building, queueing, a busy
    loop) is never charged to the bot; a seat that never calls it is timed from the moment it was asked.

    The referee can also be late at the other end: its loop busy, or its process not scheduled, when the deadline
    passes, while the answer waits to be read. ``give_back`` then gives the bot, once, as much time again as the
    referee was late (from the moment it noticed; a few milliseconds at least), and that lateness is not charged
    (``charged``)."""

    __slots__ = ("_deadline", "_extended", "_limit", "allowance_s", "given_back", "is_sent", "started")

    def __init__(self, allowance_s: float) -> None:
        self.allowance_s = allowance_s
        self._limit = allowance_s  # the allowance before anything was given back
        self.started = time.monotonic()
        self.is_sent = False
        self.given_back = 0.0
        self._extended = False
        self._deadline: asyncio.Timeout | None = None

    def watch(self, timeout: asyncio.Timeout) -> None:
        """Let ``sent`` move the deadline of ``timeout`` (an ``asyncio.timeout`` block around the wait)."""
        self._deadline = timeout
        self._reschedule()

    def sent(self) -> None:
        """The request has just been handed to the network: the bot's time starts now (once per request)."""
        if self.is_sent:
            return
        self.is_sent = True
        self.started = time.monotonic()
        self._reschedule()

    def _reschedule(self) -> None:
        """Move a ``watch``ed timeout block's deadline to the time left (a remote seat's session, which watches its
        requests' clocks itself, reads ``remaining`` when its alarm fires: arena.transport.session)."""
        if self._deadline is not None and not self._deadline.expired():
            loop = asyncio.get_running_loop()
            self._deadline.reschedule(loop.time() + self.remaining())

    def elapsed(self) -> float:
        """Seconds the bot has had so far."""
        return time.monotonic() - self.started

    def give_back(self, window_s: float = 0.005) -> bool:
        """The deadline has passed: the first time, let the bot's answer in for as long again as the referee was
        late noticing it, from now, and at least ``window_s`` (an answer that arrived in time may still be on its
        way through the referee's loop, which takes it a few turns), and say so; after that, False: the bot is out
        of time."""
        if self._extended:
            return False
        self._extended = True
        elapsed = self.elapsed()
        late = max(0.0, elapsed - self.allowance_s)
        self.given_back = late
        self.allowance_s = elapsed + max(late, window_s)
        return True

    def charged(self) -> float:
        """Seconds to charge the bot: what it had, less what the referee gave back, at most its allowance."""
        return max(0.0, min(self.elapsed() - self.given_back, self._limit))

    def remaining(self) -> float:
        """Seconds the bot has left (negative once it is over time)."""
        return self.allowance_s - self.elapsed()
