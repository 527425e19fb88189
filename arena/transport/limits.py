"""What one client may do to the referee (``ServerLimits``), and the means to hold it to that: token buckets, the
spectators' shared pace, schedules of turns, and the per-peer guard that refuses floods in turn."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ServerLimits:
    """What one client may do to the referee.

    Messages: size, and a rate (token bucket) for every message that is not the answer to the request the referee
    is waiting for (answers are never limited: a fast bot is welcome).

    Connections: keepalive pings every ``keepalive_s``, closed when one is not answered within
    ``keepalive_timeout_s``. On TCP a connection must carry a joined bot stream, a spectator or a call within
    ``join_timeout_s`` of opening (or of its last), else it is closed; those that have not joined are held to
    ``max_connections``, the oldest closed first once they have had ``crowded_join_s`` to join, and a connection
    that has joined is never counted against them: however many idle or hostile connections there are, a bot with a
    token gets in (``guard_connections``: off, gRPC's own cap of ``max_connections`` applies to every connection,
    first come first served, and connections without a call are closed after ``idle_connection_s``). A stream must
    Join within ``join_timeout_s``; at most ``streams_per_connection`` calls at once on one connection (HTTP/2's
    limit: more wait on the client's side). Beyond ``streams_per_peer`` open bot streams from one peer address, or
    ``unjoined_streams`` not yet joined in all (the local socket's single peer, every local bot, has one more of
    each per seat), a stream must join within ``crowded_join_s``: one with a valid token always gets in, so a flood
    never locks out a bot that shares its address.

    Refusals (a failed Join, a crowded stream that did not join, a spectator refused) are answered at once
    ``failed_joins_burst`` times per peer, then at ``failed_joins_per_second``, in turn, and all peers together at
    most ``refusals_per_second`` (``refusals_burst`` at once): each waits for its slot, asleep, so a peer that keeps
    trying gets no more answers however many streams it opens, and many peers no more than the referee's loop can
    spare (every stream costs the loop far more than its refusal saves).

    Spectators: their calls (list, get, watch) are taken ``spectator_calls_burst`` at once per peer, then at
    ``spectator_calls_per_second``, in turn; at most ``max_watchers`` watch at once, ``watchers_per_peer`` from one
    peer address; with ``watch_token`` set they must send it as metadata ``authorization: Bearer TOKEN``; all of
    them together are sent at most ``watch_messages_per_second`` messages (``watch_burst`` at once). A finished hand
    costs the tables one append to the match's log however many watch (each spectator reads the log at its own
    pace, in its own task); one that falls more than ``HISTORY_KEPT`` events behind is dropped, the tables never
    wait for it.
    """

    max_message_bytes: int = 64 * 1024
    messages_per_second: float = 50.0
    burst: int = 200
    keepalive_s: float = 10.0
    keepalive_timeout_s: float = 5.0
    idle_connection_s: float = 30.0
    join_timeout_s: float = 5.0
    streams_per_peer: int = 32
    crowded_join_s: float = 1.0
    streams_per_connection: int = 16
    unjoined_streams: int = 64
    failed_joins_per_second: float = 2.0
    failed_joins_burst: int = 10
    refusals_per_second: float = 20.0
    refusals_burst: int = 50
    spectator_calls_per_second: float = 5.0
    spectator_calls_burst: int = 20
    max_watchers: int = 64
    watchers_per_peer: int = 8
    watch_token: str | None = None
    watch_messages_per_second: float = 200.0
    watch_burst: int = 100
    max_connections: int = 512
    guard_connections: bool = True


class TokenBucket:
    """Token bucket: ``rate`` tokens per second on average, ``burst`` at once."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.capacity = float(burst)
        self.tokens = float(burst)
        self.last = time.monotonic()

    def _refill(self) -> None:
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self.last) * self.rate)
        self.last = now

    def take(self, n: int = 1) -> bool:
        """Take ``n`` tokens if there are that many (``n`` at most the burst)."""
        self._refill()
        if self.tokens < n:
            return False
        self.tokens -= n
        return True

    def wait_s(self, n: int = 1) -> float:
        """Seconds until there are ``n`` tokens (0 if there are now)."""
        self._refill()
        return max(0.0, (n - self.tokens) / self.rate)


class Pacer:
    """Messages to spectators, paced for all of them together: first come, first served, never faster than the
    bucket allows. A spectator waiting for its turn costs nothing, and one that is behind takes its turn for
    several messages at once (each turn costs the loop a few wake-ups)."""

    def __init__(self, rate: float, burst: int) -> None:
        self.bucket = TokenBucket(rate, max(1, burst))
        self.batch = max(1, burst // 4)  # the most messages one turn sends
        self.lock = asyncio.Lock()

    async def turn(self, n: int = 1) -> None:
        """Wait until ``n`` more messages may be sent (at most ``batch``)."""
        n = min(n, self.batch)
        if not self.lock.locked() and self.bucket.take(n):
            return
        async with self.lock:  # one waiter sleeps at a time; the others queue behind it, asleep
            while not self.bucket.take(n):
                await asyncio.sleep(self.bucket.wait_s(n))


def peer_host(peer: str) -> str:
    """The address part of a gRPC peer (``ipv4:1.2.3.4:5678`` -> ``ipv4:1.2.3.4``; every Unix peer is ``unix``)."""
    if peer.startswith("unix"):
        return "unix"
    host, _, _port = peer.rpartition(":")
    return host or peer


class Schedule:
    """Slots at ``rate`` a second after a burst of ``burst``, in the order they are asked for, kept per key (the
    generic cell rate algorithm: one virtual time per key, no timer). Keys whose schedule is past are forgotten once
    there are many."""

    def __init__(self, rate: float, burst: int) -> None:
        self.interval = 1.0 / rate
        self.allowance = burst * self.interval
        self.due: dict[str, float] = {}

    def delay(self, key: str = "") -> float:
        """Take the next slot of ``key``: how long to wait for it (0 within the burst)."""
        now = time.monotonic()
        due = max(self.due.get(key, now), now) + self.interval
        self.due[key] = due
        if len(self.due) > 10_000:  # forget the keys that are quiet again rather than grow without bound
            self.due = {k: t for k, t in self.due.items() if t > now}
        return max(0.0, due - now - self.allowance)


class PeerGuard:
    """Counts what each peer holds open and keeps the schedules that refuse floods, and pace spectators' calls, per
    peer before they cost."""

    def __init__(self, limits: ServerLimits, seats: Callable[[], int] = lambda: 0) -> None:
        self.limits = limits
        self.seats = seats
        self.streams: dict[str, int] = {}
        self.unjoined = 0
        self.refusals = Schedule(limits.failed_joins_per_second, limits.failed_joins_burst)  # per peer
        self.all_refusals = Schedule(limits.refusals_per_second, limits.refusals_burst)  # all peers together
        self.calls = Schedule(limits.spectator_calls_per_second, limits.spectator_calls_burst)  # per peer

    def open(self, host: str) -> str | None:
        """Count a new stream; if it is over a limit, why (it must then join at once). On the local socket every
        bot process is the one peer ``unix`` (one process per seat: a 6-handed duplicate match has 36), so there
        each seat adds one."""
        extra = self.seats() if host == "unix" else 0
        crowded = None
        if self.streams.get(host, 0) >= self.limits.streams_per_peer + extra:
            crowded = f"more than {self.limits.streams_per_peer + extra} open streams from {host}"
        elif self.unjoined >= self.limits.unjoined_streams + extra:
            crowded = f"more than {self.limits.unjoined_streams + extra} streams are waiting to join"
        self.streams[host] = self.streams.get(host, 0) + 1
        self.unjoined += 1
        return crowded

    def joined(self) -> None:
        self.unjoined -= 1

    def close(self, host: str, joined: bool) -> None:
        if not joined:
            self.unjoined -= 1
        left = self.streams.get(host, 1) - 1
        if left:
            self.streams[host] = left
        else:
            self.streams.pop(host, None)

    async def refusal_turn(self, host: str) -> None:
        """Wait for the turn to send a refusal to ``host`` (a failed Join, a stream or spectator over a limit):
        the peer's first ``failed_joins_burst`` at once, then one every 1/``failed_joins_per_second`` seconds; then
        a slot among all peers' refusals (``refusals_per_second``), taken only once the peer's turn has come, so a
        peer that keeps many refusals waiting holds up its own, not other peers'. Waiting is a timer: the loop does
        no work for a refusal until its turn."""
        delay = self.refusals.delay(host)
        if delay:
            await asyncio.sleep(delay)
        delay = self.all_refusals.delay()
        if delay:
            await asyncio.sleep(delay)

    async def call_turn(self, host: str) -> None:
        """Wait for the turn of a spectator's call from ``host`` (``spectator_calls_per_second`` per peer)."""
        delay = self.calls.delay(host)
        if delay:
            await asyncio.sleep(delay)
