"""One memory and CPU cap per bot over all its processes (issue 24, attack 4), and limits that fit the referee's own.

The ``hog`` cheat starts four children that touch 700 MiB each: each stays under the per-process limit (1024 MB of
address space), together they hold 2.8 GB. Under its cgroup (``--bot-memory-mb 1024`` for all its processes) it is
stopped at its cap and recorded as crashed, with a message that names the cap; with the cgroup off
(``--no-bot-cgroup``) the per-process limit lets it hold all 2.8 GB. One rotation (``--no-duplicate``) keeps the
machine's share small. Likewise eight processes spinning for 1.5 s share the bot's CPU cap (``--bot-cpus 0.1``), and
take several times that with the cgroup off.

Where the referee itself runs under a hard address-space limit lower than ``--bot-memory-mb`` (a CI container) and
may not raise it, each bot gets the referee's limit and one warning says so; without that, ``prlimit`` fails and
every bot with it (the control runs ``prlimit`` alone under the same limit).
"""

from __future__ import annotations

import os
import re
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena.runner import sandbox_cgroup
from arena.runner.sandbox_cgroup import BotCgroup, find_layout
from tests.integrity.harness import CALLER, arena, by_name, cheat, match_json, reports

pytestmark = pytest.mark.timeout(120)

CAP_MB, CHILDREN, CHILD_MB = 1024, 4, 700
HOG = cheat("hog", f"--children {CHILDREN} --mb {CHILD_MB}")


def _has(controller: str) -> bool:
    found, _ = sandbox_cgroup.layout()
    return found is not None and controller in found.controllers


def held_mb(log: Path) -> list[int]:
    """The most each hog child said it held."""
    held = [0] * CHILDREN
    for index, mb in re.findall(r"^HOG-CHILD (\d+) (\d+)$", log.read_text(), re.M):
        held[int(index)] = max(held[int(index)], int(mb))
    return held


def hog_match(tmp_path: Path, *flags: str) -> tuple[dict[str, dict[str, object]], list[int]]:
    result = match_json(arena("match", "--no-duplicate", "--hands", "20", "--per-action-ms", "30000", "--json",
                              "--bot-memory-mb", str(CAP_MB), "--log-dir", str(tmp_path), *flags,
                              "--bot", f"caller={CALLER}", "--bot", f"hog={HOG}", cwd=tmp_path, check=False))
    assert result["status"] == "completed"
    logs = list(tmp_path.glob("*-hog.log"))
    assert len(logs) == 1
    return by_name(result), held_mb(logs[0])


@pytest.mark.skipif(not _has("memory"), reason="this host gives arena no cgroup for the bots")
def test_a_bot_over_its_memory_cap_in_several_processes_is_stopped_and_recorded_crashed(tmp_path: Path) -> None:
    bots, held = hog_match(tmp_path)
    hog = bots["hog"]
    assert hog["outcome"] == "crashed", hog
    assert f"exceeded its memory cap of {CAP_MB} MB (sandbox.memory_mb" in str(hog["failure"]), hog["failure"]
    assert sum(held) <= CAP_MB, held  # stopped at its cap, all its processes together
    assert bots["caller"]["outcome"] == "ok" and bots["caller"]["violations"] == 0
    found, _ = sandbox_cgroup.layout()
    assert found is not None
    assert [p for parent, _ in found.parents for p in parent.glob(f"arena-{os.getpid()}-*")] == []


def test_without_the_cgroup_the_per_process_limit_lets_it_hold_far_more(tmp_path: Path) -> None:
    """The control: the same bot, the cgroup off: every child holds its 700 MiB, 2.8 GB against a 1 GB cap."""
    bots, held = hog_match(tmp_path, "--no-bot-cgroup")
    assert bots["hog"]["outcome"] == "ok", bots["hog"]
    assert held == [CHILD_MB] * CHILDREN and sum(held) > 2 * CAP_MB


SPIN_S, CPUS, SPINNERS = 1.5, 0.1, 8  # eight: even on a loaded host they win several times the cap without one


def spin(tmp_path: Path, *flags: str) -> dict[str, float]:
    result = match_json(arena("match", "--no-duplicate", "--hands", "4", "--per-action-ms", "30000", "--json",
                              "--bot-cpus", str(CPUS), "--log-dir", str(tmp_path), *flags, "--bot", f"caller={CALLER}",
                              "--bot", f"spinner={cheat('spinner', f'--processes {SPINNERS} --seconds {SPIN_S}')}",
                              cwd=tmp_path))
    assert result["status"] == "completed"
    found = reports(tmp_path, "SPIN", "spinner")
    assert len(found) == 1
    print(flags, found[0])
    return found[0]


@pytest.mark.skipif(not _has("cpu"), reason="this host gives the bots' cgroups no cpu controller")
def test_spinning_processes_share_the_bots_cpu_cap(tmp_path: Path) -> None:
    used = spin(tmp_path)
    assert used["cpu_s"] <= CPUS * used["wall_s"] + 0.1, used  # a tenth of a core, all eight together


@pytest.mark.alone  # the control needs the host's cores free: another test's load would starve the spinners
def test_without_the_cgroup_spinning_processes_take_what_the_host_gives(tmp_path: Path) -> None:
    """The control: the same spinner with the cgroup off takes several times the cap, from the referee's cores."""
    used = spin(tmp_path, "--no-bot-cgroup")
    assert used["cpu_s"] > 3 * CPUS * used["wall_s"], used


LIMIT_MB = 3000  # the referee's own hard address-space limit in the next tests: below the 4096 MB default


def _lowered() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_MB << 20, LIMIT_MB << 20))


def _without_sys_resource() -> list[str]:
    """A root process that may not raise its hard limits (as in a container without CAP_SYS_RESOURCE)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("setpriv (util-linux) is needed to drop CAP_SYS_RESOURCE")
    return [setpriv, "--inh-caps=-sys_resource", "--bounding-set=-sys_resource", "--"]


def test_under_a_lower_hard_limit_the_bots_get_the_referees_with_one_warning(tmp_path: Path) -> None:
    proc = subprocess.run([*_without_sys_resource(), sys.executable, "-m", "arena", "match", "--hands", "4", "--json",
                           "--bot", f"a={CALLER}", "--bot", f"b={CALLER}"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, preexec_fn=_lowered, check=False)
    assert proc.returncode == 0, proc.stderr
    result = match_json(proc)
    assert result["status"] == "completed" and all(r["outcome"] == "ok" for r in result["results"])
    warnings = [line for line in proc.stderr.splitlines() if "sandbox.memory_mb" in line]
    assert len(warnings) == 1 and f"each bot process gets {LIMIT_MB}" in warnings[0], proc.stderr


def test_under_a_lower_hard_limit_prlimit_alone_fails(tmp_path: Path) -> None:
    """The control: what every bot's start would do without the fitting (prlimit to 4096 MB over a 3000 MB hard
    limit, unable to raise it)."""
    proc = subprocess.run([*_without_sys_resource(), "/usr/bin/prlimit", f"--as={4096 << 20}", "--", "/bin/true"],
                          capture_output=True, text=True, timeout=30, preexec_fn=_lowered, check=False)
    assert proc.returncode != 0 and "Operation not permitted" in proc.stderr, proc


MOUNTINFO_HYBRID = """\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / {root}/cpu rw,relatime - cgroup cgroup rw,cpu
35 31 0:32 / {root}/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / {root}/pids rw,relatime - cgroup cgroup rw,pids
41 31 0:38 / {root}/unified rw,relatime - cgroup2 cgroup2 rw
"""
CGROUP_HYBRID = "8:pids:/\n4:memory:/job/42\n1:cpu:/\n0::/\n"


def test_the_hybrid_layout_uses_the_v1_hierarchies_below_arenas_own_cgroups(tmp_path: Path) -> None:
    for folder in ("cpu", "memory/job/42", "pids", "unified"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "unified" / "cgroup.controllers").write_text("hugetlb\n")
    found, why = find_layout(MOUNTINFO_HYBRID.format(root=tmp_path), CGROUP_HYBRID)
    assert found is not None and found.version == 1, why
    assert dict(found.parents) == {tmp_path / "memory" / "job" / "42": {"memory"}, tmp_path / "pids": {"pids"},
                                   tmp_path / "cpu": {"cpu"}}
    group = BotCgroup(found, 1024, 64, 0.5)
    memory = tmp_path / "memory" / "job" / "42" / group.name
    assert (memory / "memory.limit_in_bytes").read_text() == str(1024 << 20)
    assert (tmp_path / "pids" / group.name / "pids.max").read_text() == "64"
    assert (tmp_path / "cpu" / group.name / "cpu.cfs_quota_us").read_text() == "5000"
    assert (tmp_path / "cpu" / group.name / "cpu.cfs_period_us").read_text() == "10000"
    (memory / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 2\n")
    assert group.oom_kills() == 2
    assert len(group.procs_files) == 3


def test_a_delegated_cgroup_v2_gets_memory_max_pids_max_and_cpu_max(tmp_path: Path) -> None:
    own = tmp_path / "user.slice" / "arena.scope"
    own.mkdir(parents=True)
    (own / "cgroup.controllers").write_text("cpu memory pids\n")
    (own / "cgroup.subtree_control").write_text("cpu memory pids\n")  # delegated, controllers given to children
    mountinfo = f"41 23 0:38 / {tmp_path} rw,relatime - cgroup2 cgroup2 rw\n"
    found, why = find_layout(mountinfo, "0::/user.slice/arena.scope\n")
    assert found is not None and found.version == 2 and found.controllers == {"cpu", "memory", "pids"}, why
    group = BotCgroup(found, 4096, 256, 1.0)
    folder = own / group.name
    assert (folder / "memory.max").read_text() == str(4096 << 20)
    assert (folder / "pids.max").read_text() == "256"
    assert (folder / "cpu.max").read_text() == "10000 10000"
    (folder / "memory.events").write_text("low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\n")
    assert group.oom_kills() == 1
    assert group.procs_files == [folder / "cgroup.procs"]


def test_cgroup_v2_without_the_controllers_says_why(tmp_path: Path) -> None:
    (tmp_path / "cgroup.controllers").write_text("hugetlb\n")
    found, why = find_layout(f"41 23 0:38 / {tmp_path} rw,relatime - cgroup2 cgroup2 rw\n", "0::/\n")
    assert found is None and "not memory and pids" in why, why
