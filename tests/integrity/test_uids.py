"""Sandbox uids are unique on the host, whatever number of arena processes run (issue 24, attack 3).

A first ``arena match`` process starts a bot that forks until its process limit refuses and keeps every child: its
uid has nothing left to start (the referee waits for it to join meanwhile). While it holds on, a second ``arena
match`` process (a real one) starts its bots. With uids locked host-wide (the default) they run as other uids and
play normally; with each process numbering its bots from 61000 alone (``--per-process-uids``, as arena once did)
the second process's first bot gets the holder's uid, cannot start a thread, and its match is recorded as a
no-show. The first process is then killed (SIGKILL): its uid locks go with it, and the cgroups it leaves are removed
by the next arena process.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.runner import sandbox_cgroup, sandbox_uids
from tests.integrity.harness import arena, cheat, match_json, reports

pytestmark = [pytest.mark.timeout(180),
              pytest.mark.skipif(os.geteuid() != 0, reason="bots run as uids of their own only when arena is root")]

PROCESSES = 64  # the holder's limit: small, so that it is reached in a moment


def _wait_for(predicate: Any, what: str, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


Reports = list[dict[str, Any]]


def two_processes(tmp_path: Path, *flags: str, connect_ms: int = 30000) -> tuple[dict[str, Any], Reports, Reports,
                                                                                   int]:
    """The holder's arena process, and a second one while it holds: the second's result, what the holder and the
    second's bots reported, and the first process's pid (killed by then)."""
    first_logs, second_logs = tmp_path / "first", tmp_path / "second"
    holder = subprocess.Popen(
        [sys.executable, "-m", "arena", "match", "--hands", "10", "--connect-timeout-ms", "150000",
         "--bot-processes", str(PROCESSES), "--log-dir", str(first_logs), "--match-id", "holder", *flags,
         "--bot", f"holder={cheat('uid_holder', '--hold')}", "--bot", f"other={cheat('uid_holder')}"],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for(lambda: len(reports(first_logs, "UID", "holder")) == 1, "the holder to hold its processes")
        result = match_json(arena("match", "--hands", "10", "--json", "--log-dir", str(second_logs),
                                  "--connect-timeout-ms", str(connect_ms),
                                  "--bot-processes", str(PROCESSES), "--match-id", "second", *flags,
                                  "--bot", f"first={cheat('uid_holder')}", "--bot", f"second={cheat('uid_holder')}",
                                  cwd=tmp_path, check=False))
        if "--per-process-uids" not in flags:  # (in the control the second's other bot shares the holder's match's
            # other bot's uid too, and with it its process limit: either may be the one that cannot start a thread)
            assert holder.poll() is None  # still holding all along
        assert len(reports(first_logs, "UID", "holder")) == 1  # one rotation at a time: the second never begins
        held = reports(first_logs, "UID", "holder")
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    return result, held, reports(second_logs, "UID"), holder.pid


def test_a_second_arena_process_gives_its_bots_other_uids_and_they_play(tmp_path: Path) -> None:
    result, held, second, first_pid = two_processes(tmp_path)
    for report in held:
        assert report["held"] >= PROCESSES // 2 and "BlockingIOError" in report["refused"], report
    assert result["status"] == "completed", result
    for row in result["results"]:
        assert row["outcome"] == "ok" and row["violations"] == 0, row
    assert len(second) == 4 and {r["uid"] for r in second}.isdisjoint({r["uid"] for r in held}), (second, held)
    # the killed process's cgroups are gone once an arena process looks (every arena process does when it starts)
    found, _ = sandbox_cgroup.layout()
    if found is not None:
        sandbox_cgroup.clean_leftovers(found)
        left = [p for parent, _ in found.parents for p in parent.glob(f"arena-{first_pid}-*")]
        assert left == []


@contextlib.contextmanager
def reserved(uids: range) -> Iterator[None]:
    """Hold the host-wide locks of ``uids`` (as a running sandbox would) and wait until no process runs as them: the
    other tests' arena processes pass over them meanwhile, so only the control's own bots run as those uids."""
    sandbox_uids.LOCK_DIR.mkdir(parents=True, exist_ok=True, mode=0o700)
    with contextlib.ExitStack() as stack:
        for uid in uids:
            fd = os.open(sandbox_uids.LOCK_DIR / f"{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            stack.callback(os.close, fd)
            fcntl.flock(fd, fcntl.LOCK_EX)  # waits for a sandbox of another test that holds it to end
        _wait_for(lambda: not set(uids) & sandbox_uids.uids_in_use(), "the reserved uids' last processes to end")
        yield


def test_with_per_process_numbering_the_second_process_reuses_the_holders_uid(tmp_path: Path) -> None:
    """The control: both processes number their bots from 61000; the second's first bot is the holder's uid. (The
    uids they number are held under the host-wide locks while it runs, so that another test's bots, numbered under
    those locks, never share a uid with the holder's full process limit.)"""
    # its gRPC retries a thread for as long as it is waited for: 3 s is enough to see it fail
    with reserved(range(sandbox_uids.UID_BASE, sandbox_uids.UID_BASE + 8)):  # two processes, two bots each, two
        # rotations at most
        result, held, second, _ = two_processes(tmp_path, "--per-process-uids", connect_ms=3000)
    holder_uids = {r["uid"] for r in held}
    assert 61000 in holder_uids
    assert result["status"] == "no_show", result  # its first bot could not start: nothing was dealt
    first = {r["name"]: r for r in result["results"]}["first"]
    assert first["outcome"] != "ok", first
    assert holder_uids & {r["uid"] for r in second}, (second, held)  # a bot of the second ran as the holder's uid
