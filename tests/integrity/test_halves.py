"""The halves of a duplicate match never overlap for one bot (README, "Duplicate without memory").

A bot's processes for the two rotations of a heads-up duplicate match see the same deals: alive at once on one
kernel, they can tell each other the cards through whatever the kernel shares, and no sandbox short of pinning each
to cores of its own closes CPU contention. The cheat bot ``contention`` (cheats/contention.py, cheats/cpu_channel.py)
does exactly that: its rotation-0 process sends each deal's hole cards by spinning in time slots, its rotation-1
process hears them in its own loop rate, and they are its opponent's cards there.

Positive control: with the halves overlapping (``unsafe_overlapping_halves``, how arena played them until now) the
rotation-1 process hears its opponent's cards in most deals and plays them. As arena plays them, one after the
other, it hears nothing (its partner and the partner's helpers are gone from the process table before it starts,
their private folders deleted) and plays every hand as its honest copy would. The assertions count cards heard
against the cards the referee recorded, not chips.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from arena.referee import ClockPolicy, HandRecord, MatchResult, MatchSpec, MatchStatus
from arena.runner.bots import BotSpec
from arena.runner.local_bots import LocalBots
from arena.runner.remote_match import MatchSetup, play_watched, prepare_match
from arena.runner.sandbox import SandboxLimits, SandboxPolicy, check_sandbox
from tests.integrity.harness import CALLER, REPO, cheat, reports

pytestmark = pytest.mark.timeout(150)

SEED = "integrity-halves-1"
HANDS = 32  # 16 deals: the rotation-1 process waits for a frame (0.92 s) before each
CONTROL_HANDS = 16  # the control (alone: the machine waits for it) needs one deal heard, not sixteen
CLOCK = ClockPolicy(per_action_ms=4000, connect_timeout_ms=30000)
CHEAT = 1  # the cheat's participant index


def process_tree(root: int) -> dict[int, bytes]:
    """``root`` and every process descended from it (host pids), each with its start time (to tell a reused pid)."""
    parents: dict[int, int] = {}
    started: dict[int, bytes] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            stat = _stat(int(entry.name))
            if stat is not None:
                parents[int(entry.name)] = int(stat[1])
                started[int(entry.name)] = stat[19]
    tree, todo = {}, [root]
    while todo:
        pid = todo.pop()
        if pid in started:
            tree[pid] = started[pid]
            todo.extend(child for child, parent in parents.items() if parent == pid)
    return tree


def _stat(pid: int) -> list[bytes] | None:
    """The fields of /proc/PID/stat after the command (state, ppid, pgrp, ...), or None if there is no such pid."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            text = f.read()
    except OSError:
        return None
    return text[text.rfind(b")") + 2:].split()


class Watched(LocalBots):
    """The local bots, noting every process of each rotation while it plays (its bot process and all that descends
    from it: the cheat's helpers too), and checking before a rotation starts that every process of the rotations
    before it is gone from the process table and its private folder deleted."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.seen: dict[int, dict[int, bytes]] = {}  # lane -> pid -> start time
        self.folders: dict[int, list[Path]] = {}
        self.checked: list[tuple[int, int, list[int]]] = []  # (lane started, processes seen before it, still there)

    def note(self, lane: int) -> None:
        for process in self.running.get(lane, []):
            if process.process is not None:
                self.seen.setdefault(lane, {}).update(process_tree(process.process.pid))
            if process.private_folder is not None:
                self.folders.setdefault(lane, []).append(process.private_folder)

    async def start(self, lane: int) -> None:
        earlier = {pid: at for seen_lane, seen in self.seen.items() if seen_lane < lane for pid, at in seen.items()}
        alive = [pid for pid, at in earlier.items() if (stat := _stat(pid)) is not None and stat[19] == at
                 and stat[0] != b"Z"]  # an exited process left for the host's init to collect runs nothing
        folders = [f for seen_lane, fs in self.folders.items() if seen_lane < lane for f in fs if f.exists()]
        self.checked.append((lane, len(earlier), alive + [-1] * len(folders)))
        await super().start(lane)


@dataclass
class Played:
    result: MatchResult
    records: list[HandRecord] = field(default_factory=list)
    reports: list[dict[str, Any]] = field(default_factory=list)
    watched: Watched | None = None

    def learned(self) -> int:
        """Rotation-1 hands in which the cheat heard exactly its opponent's hole cards (as the referee dealt them)."""
        heard = {int(n): sorted(cards) for r in self.reports for n, cards in r.get("heard", {}).items()}
        count = 0
        for record in self.records:
            if record.rotation == 1:
                opponent = 1 - record.seating.index(CHEAT)
                count += heard.get(record.hand_number + 1) == sorted(record.hole[opponent])  # wire numbers from 1
        return count

    def listener(self) -> dict[str, Any]:
        [report] = [r for r in self.reports if r["role"] == "listener"]
        return report


def play(folder: Path, overlapping: bool, hands: int = HANDS) -> Played:
    """The cheat against a calling station, sandboxed, its halves overlapping or (as arena plays) one after the
    other."""
    check_sandbox()
    folder.mkdir(parents=True)
    spec = MatchSpec("halves", SEED, hands, policy=CLOCK)
    bots = [BotSpec("caller", CALLER), BotSpec("contention", cheat("contention"))]
    played: list[HandRecord] = []

    async def run() -> tuple[MatchResult, Watched]:
        setup: MatchSetup = await prepare_match(
            spec, [b.name for b in bots], local=True, tcp=False, lanes=2, unsafe_overlapping_halves=overlapping)
        # the control takes off the CPU cap per bot (its cgroup), which alone narrows the channel a great deal: what
        # it shows is that overlapping halves are the channel; the sequential run keeps every defence
        policy = SandboxPolicy(limits=SandboxLimits(cpus=0)) if overlapping else SandboxPolicy()
        watched = Watched(setup, bots, folder, REPO, policy)

        def on_hand(record: HandRecord) -> None:
            played.append(record)
            watched.note(record.rotation)  # the processes of the rotation being played, while they play

        setup.match.on_hand = on_hand
        setup.bots = watched
        try:
            return await play_watched(setup), watched
        finally:
            await asyncio.gather(*(p.stop() for p in setup.processes))
            await setup.server.stop()

    # Both tests play without the hand chain (a lane that deals the next hand as the last ends), as arena plays a
    # match recorded in a database: it shortens the gaps between hands the cheat's frames fall in, which narrows the
    # channel without closing it (heard in 0 and 3 of 8 deals in two runs here; the control at 3fcbbfc missed all five
    # matches in a clean-clone CI): the control and the defence are compared on the same timing, the channel's widest.
    chain = os.environ.get("ARENA_HAND_CHAIN")
    os.environ["ARENA_HAND_CHAIN"] = "off"
    try:
        result, watched = asyncio.run(run())
    finally:
        if chain is None:
            del os.environ["ARENA_HAND_CHAIN"]
        else:
            os.environ["ARENA_HAND_CHAIN"] = chain
    outcome = Played(result, played, reports(folder, "CONTENTION", "contention"), watched)
    cheat_result = result.results[CHEAT]
    print(f"{folder.name}: heard the opponent's cards in {outcome.learned()} of {hands // 2} deals; the cheat "
          f"{cheat_result.mbb_per_hand:+.0f} mbb/hand; listener {outcome.listener()}")
    assert result.reason is MatchStatus.COMPLETED and result.hands_played == hands, result
    assert all(r.violations == 0 for r in result.results), result.results
    return outcome


@pytest.mark.alone  # the channel is CPU contention, which another test's load would jam
@pytest.mark.timeout(300)
def test_with_overlapping_halves_the_cheat_hears_its_opponents_cards_through_cpu_contention(tmp_path: Path) -> None:
    """The control: the channel works when both processes are alive at once."""
    # any deal heard is the channel at work (a frame counts only when its checksum holds); how many depends on the
    # host's load: one to four of the 8 deals on a quiet host (3 runs), fewer on a loaded one, now and then none: up
    # to eight matches, for a channel that is there (the sequential test must hear nothing in its one match; a clean
    # clone's CI, 2026-12-05, heard nothing in three, with the suite's other worker busy, and on 2026-12-06 nothing in
    # five; here, that day, three runs heard a deal in their third, first and fifth match)
    for attempt in range(8):
        run = play(tmp_path / f"overlapping-{attempt}", overlapping=True, hands=CONTROL_HANDS)
        if run.learned() >= 1:
            break
    assert run.learned() >= 1, run.listener()
    assert run.listener()["exploited_decisions"] > 0


def test_with_halves_one_after_the_other_the_cheat_hears_nothing_and_its_partner_is_gone(tmp_path: Path) -> None:
    run = play(tmp_path / "sequential", overlapping=False)
    assert run.learned() == 0
    listener = run.listener()
    # it never found its partner: noise passes the frame's 8-bit check once in 256 frames (about one run in 25 heard
    # one such frame among its ten or so and played its made-up cards, which learned() counts as not the opponent's)
    assert listener["frames_heard"] <= 1
    assert listener["frames_heard"] == 1 or (listener["exploited_decisions"] == 0 and not listener["heard"])
    assert run.watched is not None
    [(lane, seen, alive)] = run.watched.checked[1:]
    assert lane == 1 and seen >= 16 and alive == []  # the cheat's 13 helpers among them: all gone, folders too
