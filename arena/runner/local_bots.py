"""A local match's bot processes, one rotation at a time: started when the match begins a rotation, watched for
crashes while it is played, stopped before the next rotation begins, and checked to be gone.

This is what keeps the halves of a duplicate deal apart (README, "Duplicate without memory"): a bot's processes for
two rotations see the same deals, so they must never be alive at once, or they could tell each other the cards
through anything the kernel shares (CPU load, memory counters, timing). ``stop`` returns only once every process of
the rotation is gone: the bot's own process reaped, no live process left in its process group, and, sandboxed, the
first process of its PID namespace exited (bubblewrap's own process may exit before it; the kernel ends every other
process of the namespace before that one's exit completes, so nothing of the sandbox runs any more) and its private
folder deleted. A process still alive ``GONE_WAIT_S`` after it was stopped raises ``ProcessesLinger``, and the next
rotation does not start.
"""

from __future__ import annotations

import asyncio
import logging
import os
import select
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from arena.runner.bots import BotProcess, BotSpec
from arena.runner.sandbox import SandboxPolicy, drop_page_cache
from arena.text import file_name
from arena.transport import convert

if TYPE_CHECKING:
    from arena.runner.remote_match import MatchSetup

log = logging.getLogger("arena.runner")

GONE_WAIT_S = 5.0  # how long a stopped rotation's last processes may take to vanish from the process table
STOP_GRACE_S = 5.0  # how long a bot told that the match is over for it may take to exit on its own
INIT_WAIT_S = 10.0  # how long bubblewrap may take to make a sandbox's first process (it takes milliseconds)


class ProcessesLinger(RuntimeError):
    """A stopped bot process is still alive: the next rotation is not started (its halves must never overlap)."""


def group_members(pgid: int) -> list[int]:
    """The live (not zombie) processes of process group ``pgid``, from the process table (/proc)."""
    members = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue  # gone meanwhile
        fields = stat[stat.rfind(b")") + 2:].split()  # after "pid (comm) ": state, ppid, pgrp, ...
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] != b"Z":
            members.append(int(entry.name))
    return members


def namespace_init(pid: int) -> int | None:
    """A pidfd of the first process of the PID namespace that the bubblewrap process ``pid`` made (its one child),
    once it has made it; None before (or if ``pid`` is gone)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            children = f.read().split()
        return os.pidfd_open(int(children[0])) if children else None
    except (OSError, ValueError):
        return None


def exited(pidfd: int) -> bool:
    """Whether the process of ``pidfd`` has exited (a pidfd is readable from then on). Asked with poll: select
    takes no descriptor numbered 1024 or more, which a referee with many connections hands out."""
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    return bool(poller.poll(0))


async def wait_gone(processes: Sequence[BotProcess], inits: dict[int, int] | None = None,
                    timeout_s: float = GONE_WAIT_S) -> None:
    """Return once every process is reaped, its process group has no live member and the first process of its
    sandbox (``inits``: its pidfd, by the bot process's pid) has exited; raise ``ProcessesLinger`` naming what is
    left if that takes longer than ``timeout_s``."""
    inits = inits or {}
    deadline = time.monotonic() + timeout_s
    while True:
        left = {p.spec.name: pids for p in processes if (pids := _left_of(p, inits))}
        if not left:
            return
        if time.monotonic() >= deadline:
            names = "; ".join(f"{name}: {pids}" for name, pids in left.items())
            raise ProcessesLinger(f"bot processes still alive {timeout_s:.0f} s after they were stopped ({names}): "
                                  "the next rotation is not started, so that no two processes of a bot that see "
                                  "the same deals are ever alive at once")
        await asyncio.sleep(0.01)


def _left_of(process: BotProcess, inits: dict[int, int]) -> list[int]:
    """What is left of a stopped bot process: its own pid until it is reaped, then its group's live members and the
    first process of its sandbox until it exits (-1: that process, whose host pid is not at hand)."""
    if process.process is None:
        return []
    if process.process.returncode is None:
        return [process.process.pid]
    left = group_members(process.process.pid)  # started in a session of its own: its pid is its group's id
    init = inits.get(process.process.pid)
    return [*left, -1] if init is not None and not exited(init) else left


class LocalBots:
    """The bot processes of a match set up by ``prepare_match`` (arena.runner.remote_match), one per bot and lane,
    started and stopped lane by lane as the match asks (``arena.referee.match.SeatProcesses``). A process that exits
    while its seat still plays is a crash: noted on its participant with its exit status and last lines, in
    ``setup.failures``, and told to ``on_crash``."""

    def __init__(self, setup: MatchSetup, bots: Sequence[BotSpec | None], log_dir: Path | None, cwd: Path | None,
                 sandbox: SandboxPolicy, on_crash: Callable[[str], None] | None = None) -> None:
        if setup.server.socket_path is None:
            raise RuntimeError("local bots need a referee that serves a local socket")
        self.setup = setup
        self.bots = list(bots)
        self.log_dir = log_dir
        self.cwd = cwd
        self.sandbox = sandbox
        self.on_crash = on_crash
        self.running: dict[int, list[BotProcess]] = {}  # lane -> its processes, until stopped
        self._inits: dict[int, int] = {}  # bot process pid -> pidfd of the first process of its sandbox
        self._watches: dict[BotProcess, asyncio.Future[None]] = {}

    async def start(self, lane: int) -> None:
        """Start one process per bot for ``lane``, each with its seat's token."""
        socket = self.setup.server.socket_path
        assert socket is not None
        match_id = self.setup.match.spec.match_id
        started = self.running.setdefault(lane, [])
        for participant, (bot, seat) in enumerate(zip(self.bots, self.setup.lanes[lane], strict=True)):
            if bot is None:  # a remote bot's seat: it connects by itself
                continue
            parts = (match_id, bot.name) if len(self.setup.lanes) == 1 else (match_id, f"r{lane}", bot.name)
            log_path = self.log_dir / file_name(*parts, suffix=".log") if self.log_dir is not None else None
            policy = self.sandbox.binding(bot.folder) if bot.folder is not None else self.sandbox
            process = BotProcess(bot, log_path, policy)
            self.setup.processes.append(process)
            started.append(process)
            await process.start(socket, seat.token, bot.folder or self.cwd)
            self._watches[process] = asyncio.ensure_future(self._watch(process, participant, lane))
        # sandboxed: know the first process of each sandbox, to see it gone
        await asyncio.gather(*(self._find_init(p) for p in started if p.private_folder is not None))

    async def _find_init(self, process: BotProcess) -> None:
        """Take a pidfd of the first process of the bot's PID namespace, as soon as bubblewrap has made it."""
        assert process.process is not None
        if process.process.pid in self._inits:
            return
        deadline = time.monotonic() + INIT_WAIT_S
        while process.process.returncode is None and time.monotonic() < deadline:
            init = namespace_init(process.process.pid)
            if init is not None:
                self._inits[process.process.pid] = init
                return
            await asyncio.sleep(0.002)

    async def start_all(self) -> None:
        """Start every lane's processes now (set-ups that play no stages: remote tests, benchmarks)."""
        for lane in range(len(self.setup.lanes)):
            await self.start(lane)

    async def stop(self, lane: int) -> None:
        """Stop the processes of ``lane`` (each is given a moment to exit after its MatchEnd) and return once they
        are gone (``wait_gone``)."""
        processes = self.running.pop(lane, [])
        await asyncio.gather(*(p.stop(self._grace(lane, p)) for p in processes))
        try:
            await wait_gone(processes, self._inits)
        finally:
            self._close_inits(processes)
        # every one is reaped: its watch says now whether it crashed (a bot that left without its MatchEnd and
        # whose exit was seen only after its table's last hand is a crash all the same, not a mere disconnect)
        await asyncio.gather(*(self._watches[p] for p in processes if p in self._watches), return_exceptions=True)
        for process in processes:  # stopping deleted it; what a process still writing left is deleted now
            folder = process.private_folder
            if folder is not None and folder.exists():
                shutil.rmtree(folder, ignore_errors=True)
                if folder.exists():
                    log.warning("could not delete %s, the private folder of %s's stopped process (no process can "
                                "reach it: every sandbox has a new one)", folder, process.spec.name)
        if processes and self.sandbox.enabled and self.sandbox.drop_caches:
            await asyncio.to_thread(drop_page_cache)  # before the next rotation's processes start (README, D1)

    async def close(self) -> None:
        """Stop watching, and stop whatever processes are left (the match ended, failed or was interrupted)."""
        for watch in self._watches.values():
            watch.cancel()
        left = [(lane, p) for lane, processes in self.running.items() for p in processes]
        self.running.clear()
        await asyncio.gather(*(p.stop(self._grace(lane, p)) for lane, p in left))
        self._close_inits([p for _, p in left])

    def _grace(self, lane: int, process: BotProcess) -> float:
        """How long a process is given to exit on its own: none when its seat never joined (nobody told it that the
        match is over: it would only be waited for)."""
        participant = next((i for i, bot in enumerate(self.bots) if bot is process.spec), None)
        seat = self.setup.lanes[lane][participant] if participant is not None else None
        return STOP_GRACE_S if seat is None or seat.has_joined else 0.0

    def _close_inits(self, processes: Sequence[BotProcess]) -> None:
        for process in processes:
            if process.process is not None and (init := self._inits.pop(process.process.pid, None)) is not None:
                os.close(init)

    async def _watch(self, process: BotProcess, participant: int, lane: int) -> None:
        assert process.process is not None
        await process.process.wait()
        seat = self.setup.lanes[lane][participant]
        if seat.endpoint.told_over or process.ended_by_arena:  # sent its MatchEnd and left, as it should; or
            return  # stopped by arena after its grace: neither is a crash
        tail = [convert.printable(line, 200) for line in process.tail(5)]  # the bot's own words: no escapes
        text = f"exited with status {process.returncode}"
        if tail:
            text += f"; last output: {' | '.join(tail)}"
        self.setup.match.crashed(participant, text, seat)
        failure = f"{process.spec.name} {text} (match {self.setup.match.spec.match_id})"
        self.setup.failures.append(failure)
        if self.on_crash is not None:
            self.on_crash(failure)


__all__ = ["GONE_WAIT_S", "LocalBots", "ProcessesLinger", "exited", "group_members", "namespace_init", "wait_gone"]
