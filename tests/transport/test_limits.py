"""The referee's throttles on their own: refusals in turn, per peer and for all peers together, and the spectators'
log, which costs a finished hand one append however many watch."""

from __future__ import annotations

import asyncio
import itertools
import time

import pytest

from arena.transport.limits import PeerGuard, ServerLimits
from arena.transport.spectators import HISTORY_KEPT, MatchEntry


def test_one_peer_gets_its_burst_of_refusals_at_once_then_two_a_second() -> None:
    limits = ServerLimits()
    guard = PeerGuard(limits)
    delays = [guard.refusals.delay("ipv4:10.0.0.1") for _ in range(limits.failed_joins_burst + 4)]
    assert delays[:limits.failed_joins_burst] == [0.0] * limits.failed_joins_burst
    waits = delays[limits.failed_joins_burst:]
    step = 1.0 / limits.failed_joins_per_second
    assert all(abs(b - a - step) < 0.05 for a, b in itertools.pairwise(waits)), waits
    assert guard.refusals.delay("ipv4:10.0.0.2") == 0.0  # another peer is not held up by the first


@pytest.mark.parametrize("bounded", [True, False])
def test_many_peers_together_are_refused_no_faster_than_the_loop_can_spare(bounded: bool) -> None:
    """A flood from 500 addresses, one refusal each: within every peer's own burst, so only the bound for all peers
    together makes them wait. Control: with that bound lifted, all 500 are answered at once."""
    limits = ServerLimits() if bounded else ServerLimits(refusals_per_second=1e9, refusals_burst=10**9)
    guard = PeerGuard(limits)
    hosts = [f"ipv4:10.0.{i // 250}.{i % 250}" for i in range(500)]
    assert all(guard.refusals.delay(host) == 0.0 for host in hosts)  # each peer's own turn comes at once
    delays = [guard.all_refusals.delay() for _ in hosts]  # then each takes a slot among all peers'
    if bounded:
        assert delays[:limits.refusals_burst] == [0.0] * limits.refusals_burst
        expected = (500 - limits.refusals_burst) / limits.refusals_per_second
        assert delays[-1] == pytest.approx(expected, abs=0.1)
    else:
        assert max(delays) == 0.0


def test_a_peer_with_many_refusals_waiting_does_not_hold_up_another_peers() -> None:
    """A peer's refusals take a slot among all peers' only once their own turn comes: 200 of one peer waiting (its
    last due in 95 s) leave another peer's refusal to be answered at once."""
    async def scenario() -> float:
        guard = PeerGuard(ServerLimits())
        waiting = [asyncio.create_task(guard.refusal_turn("ipv4:10.0.0.1")) for _ in range(200)]
        await asyncio.sleep(0.05)
        started = time.monotonic()
        await asyncio.wait_for(guard.refusal_turn("ipv4:10.0.0.2"), 5)
        for task in waiting:
            task.cancel()
        return time.monotonic() - started

    assert asyncio.run(scenario()) < 1.0


def test_the_spectators_log_serializes_a_hand_once_when_first_read_and_keeps_the_last_events() -> None:
    entry = MatchEntry(match=None, spec=None, seats=[])  # type: ignore[arg-type]
    made: list[int] = []

    def event(n: int) -> bytes:
        made.append(n)
        return str(n).encode()

    for n in range(HISTORY_KEPT + 10):
        entry.publish(lambda n=n: event(n))  # type: ignore[misc]
    assert made == []  # publishing never serializes
    assert entry.published == HISTORY_KEPT + 10 and entry.first == 10
    assert [entry.read(entry.first), entry.read(entry.first + 1)] == [b"10", b"11"]
    assert [entry.read(entry.first), entry.read(entry.first + 1)] == [b"10", b"11"] and made == [10, 11]  # once
    assert entry.read(entry.first - 1) is None  # no longer kept
    assert entry.events()[-1] == str(HISTORY_KEPT + 9).encode()


def test_a_spectator_waiting_for_the_next_event_is_woken_by_it_or_by_the_end() -> None:
    async def scenario() -> list[str]:
        entry = MatchEntry(match=None, spec=None, seats=[])  # type: ignore[arg-type]
        seen: list[str] = []

        async def watcher() -> None:
            await entry.wait()
            seen.append(f"event {entry.published}")
            await entry.wait()
            seen.append(f"over {entry.over}")

        task = asyncio.create_task(watcher())
        await asyncio.sleep(0)
        entry.publish(b"one")
        await asyncio.sleep(0)
        entry.close()
        await asyncio.wait_for(task, 1)
        return seen

    assert asyncio.run(scenario()) == ["event 1", "over True"]
