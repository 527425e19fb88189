"""The seccomp filter (arena.runner.sandbox_seccomp): what a poker bot never needs fails, what bots need still works.

The ``syscalls`` cheat tries each call on itself (its own memory, keyring, a shared-memory file of its own): under
the filter every one fails with EPERM (clone3 with ENOSYS, so that the C library falls back on clone); with the
filter off (``--no-bot-seccomp``) most succeed for the same unprivileged uid, so the failures are the filter's. Bots
of the three languages play whole matches under it: the probe (a Python SDK bot) against the C++ calling station, and
the Node.js and C++ sample bots against each other (Node.js (V8) needs neither memfd_create nor sysinfo).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.bots import CPP_BOT
from tests.integrity.harness import CALLER, REPO, SLOW_JOIN, arena, by_name, cheat, match_json, reports

pytestmark = pytest.mark.timeout(120)

DENIED = ("memfd_create", "sysinfo", "ptrace", "process_vm_readv", "keyctl", "add_key", "userfaultfd",
          "perf_event_open", "io_uring_setup", "bpf", "unshare_user", "mount", "open_tree", "fsopen",
          "preadv2_nowait", "fadvise64", "mincore")
# what an unprivileged process may do on its own, with no filter, on any Linux that has the call enabled (the page
# cache's probes on the bot's own file: a cached page's RWF_NOWAIT read succeeds, so a second half could read what
# the first left there)
OPEN_WITHOUT_FILTER = ("memfd_create", "sysinfo", "ptrace", "process_vm_readv", "keyctl", "add_key",
                       "preadv2_nowait", "fadvise64", "mincore")


def syscalls(tmp_path: Path, *flags: str) -> list[dict[str, str]]:
    result = match_json(arena("match", *SLOW_JOIN, "--hands", "4", "--json", "--log-dir", str(tmp_path), *flags,
                              "--bot", f"caller={CALLER}", "--bot", f"probe={cheat('syscalls')}", cwd=tmp_path))
    assert result["status"] == "completed"
    assert all(r["violations"] == 0 and not r["crashed"] for r in result["results"]), result["results"]
    found = reports(tmp_path, "SYSCALLS", "probe")
    assert len(found) == 2
    return found


def test_the_filter_denies_what_a_bot_never_needs(tmp_path: Path) -> None:
    for report in syscalls(tmp_path):
        assert {name: report[name] for name in DENIED} == dict.fromkeys(DENIED, "EPERM"), report
        assert report["clone3"] == "ENOSYS"


def test_without_the_filter_the_same_uid_may_make_those_calls(tmp_path: Path) -> None:
    """The control: the same probe, same uid, no filter: the calls a process may make on itself succeed."""
    for report in syscalls(tmp_path, "--no-bot-seccomp"):
        assert {name: report[name] for name in OPEN_WITHOUT_FILTER} == dict.fromkeys(OPEN_WITHOUT_FILTER, "ok"), \
            report


JS_BOT = REPO / "sample_bots" / "javascript"


@pytest.mark.skipif(not CPP_BOT.is_file() or shutil.which("node") is None or not (JS_BOT / "node_modules").is_dir(),
                    reason="the C++ and JavaScript sample bots are built by `make install`")
def test_the_nodejs_and_cpp_sample_bots_play_a_match_under_the_filter(tmp_path: Path) -> None:
    result = match_json(arena("match", "--hands", "40", "--json", "--log-dir", str(tmp_path),
                              "--bot", f"js=node {JS_BOT / 'bot.js'}", "--bot", f"cpp={CPP_BOT}", cwd=REPO))
    assert result["status"] == "completed" and result["hands"]["played"] == 40
    for row in by_name(result).values():
        assert row["violations"] == 0 and not row["crashed"] and row["absent"] == 0, row
