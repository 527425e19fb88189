"""A covert channel through the host's memory figures (issue 24, attack 1), closed by the static views of /proc and
the seccomp filter's sysinfo.

Two bots of one match run at the same time, each in its own sandbox, on one kernel. The ``covert`` sender holds
128 MiB of shared memory (a file in its tmpfs /tmp) in the wall-clock slots of the 1s of a message; the receiver
reads Shmem in /proc/meminfo (and sysinfo's sharedram) slot by slot. With the host's /proc and no filter it reads
the message bit for bit; in the sandbox it reads nothing at all: the figures it sees never move.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.integrity.harness import SLOW_JOIN, arena, cheat, match_json, reports

pytestmark = pytest.mark.timeout(120)

MESSAGE = "101101"


def channel(tmp_path: Path, *flags: str) -> list[dict[str, Any]]:
    # one rotation (--no-duplicate): both bots alive at once is all the channel needs, and the second rotation of a
    # duplicate match only played the same channel again (the alone control held the machine 14 s for the two)
    result = match_json(arena("match", *SLOW_JOIN, "--hands", "4", "--no-duplicate", "--json", "--log-dir",
                              str(tmp_path), *flags,
                              "--bot", f"sender={cheat('covert', f'--send {MESSAGE}')}",
                              "--bot", f"receiver={cheat('covert', f'--receive {len(MESSAGE)}')}", cwd=tmp_path))
    assert result["status"] == "completed"
    found = reports(tmp_path, "COVERT", "receiver")
    assert len(found) == 1
    return found


def test_the_receiver_reads_nothing_through_the_sandboxs_proc(tmp_path: Path) -> None:
    for report in channel(tmp_path):
        assert report["read"] == "0" * len(MESSAGE), report
        assert report["shmem_spread_kb"] == 0  # /proc/meminfo never moves
        assert report["sharedram_spread_kb"] is None  # sysinfo(2) is refused


@pytest.mark.foreground  # wall-clock slots: a loaded host delays the sender (others move Shmem far less)
def test_with_the_hosts_proc_and_no_filter_the_message_gets_through(tmp_path: Path) -> None:
    """The control: the same bots, the host's /proc and no seccomp filter."""
    for report in channel(tmp_path, "--host-proc", "--no-bot-seccomp"):
        # bit for bit on a quiet host; a loaded one (other processes' shared memory, a sender scheduled late) may
        # cost one bit of the six, never the signal itself
        wrong = sum(a != b for a, b in zip(report["read"], MESSAGE, strict=True))
        assert wrong <= 1, report
        assert report["shmem_spread_kb"] >= 100 * 1024 and report["sharedram_spread_kb"] >= 100 * 1024, report
