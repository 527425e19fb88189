"""Static views of the host-wide files of /proc, bound over the real ones in every sandbox.

A bot's PID namespace hides the other processes, but many files of /proc describe the whole host: free and shared
memory (/proc/meminfo), CPU time and load (/proc/stat, /proc/loadavg, /proc/uptime's idle time, /proc/pressure),
the kernel's counters (/proc/vmstat, /proc/interrupts, /proc/softirqs, /proc/diskstats...) and /proc/sys (open
files, inodes, ptys: fs/file-nr, fs/inode-nr...). Two processes on one host can talk through any of them: one
holds shared memory or CPU in amounts that encode a message, the other reads the host's figures. In the sandbox each
of these files is replaced by a plausible, unchanging one: memory is the bot's memory cap, all free; the load is 0;
the counters are 0; /proc/sys holds only the settings runtimes read (vm/overcommit_memory for glibc and Node.js,
kernel/pid_max...), copied from the host when arena starts. Node.js (``os.totalmem()``, V8's heap sizing), glibc
(``sysconf``) and Python read them as usual.
"""

from __future__ import annotations

import atexit
import functools
import os
import threading
import time
from pathlib import Path

from arena import scratch

PROC = Path("/proc")
PRESSURE_KINDS = ("cpu", "io", "memory", "irq")
SOFTIRQS = ("HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU")
# /proc/sys entries that hold settings, not counters: copied from the host (those it has) when arena starts
SYS_SETTINGS = (
    "kernel/ostype", "kernel/osrelease", "kernel/version", "kernel/pid_max", "kernel/threads-max",
    "kernel/ngroups_max", "kernel/cap_last_cap", "kernel/randomize_va_space", "kernel/perf_event_paranoid",
    "kernel/shmmax", "kernel/shmall", "kernel/shmmni", "kernel/overflowuid", "kernel/overflowgid",
    "kernel/random/poolsize", "kernel/yama/ptrace_scope", "vm/overcommit_memory", "vm/overcommit_ratio",
    "vm/max_map_count", "vm/mmap_min_addr", "fs/nr_open", "fs/file-max", "fs/pipe-max-size",
    "fs/inotify/max_user_watches", "fs/inotify/max_user_instances", "fs/inotify/max_queued_events",
    "net/core/somaxconn",
)
SYS_FIXED = {  # the same in every sandbox, whatever the host says
    "kernel/hostname": "arena-bot", "kernel/domainname": "(none)", "kernel/random/entropy_avail": "256",
    "kernel/random/boot_id": "00000000-0000-4000-8000-000000000000",
}


def _cpus() -> int:
    return max(1, os.cpu_count() or 1)


@functools.cache
def _host_memory_kb() -> int:
    for line in (PROC / "meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1])
    return 1 << 20


@functools.cache
def _host_static() -> dict[str, str]:
    """What is copied from the host once, when arena starts: the CPUs' description, its boot time, and the
    settings of /proc/sys."""
    copied: dict[str, str] = {}
    try:
        cpuinfo = (PROC / "cpuinfo").read_text()
        # "cpu MHz" follows the load: frozen at a value that says nothing (the model name keeps the nominal speed)
        copied["cpuinfo"] = "\n".join("cpu MHz\t\t: 2000.000" if line.startswith("cpu MHz") else line
                                      for line in cpuinfo.splitlines()) + "\n"
    except OSError:
        pass
    for name in SYS_SETTINGS:
        try:
            copied["sys/" + name] = (PROC / "sys" / name).read_text()
        except OSError:
            continue
    copied["btime"] = str(int(time.time() - _host_uptime()))
    return copied


def _host_uptime() -> float:
    try:
        return float((PROC / "uptime").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0.0


def view_contents(memory_mb: int) -> dict[str, str]:
    """Every static file, by its path under /proc: memory is ``memory_mb`` (the host's if 0), all of it free."""
    cpus = _cpus()
    total = memory_mb * 1024 if memory_mb else _host_memory_kb()
    static = _host_static()
    meminfo = {"MemTotal": total, "MemFree": total, "MemAvailable": total}
    for name in ("Buffers", "Cached", "SwapCached", "Active", "Inactive", "Active(anon)", "Inactive(anon)",
                 "Active(file)", "Inactive(file)", "Unevictable", "Mlocked", "SwapTotal", "SwapFree", "Dirty",
                 "Writeback", "AnonPages", "Mapped", "Shmem", "KReclaimable", "Slab", "SReclaimable", "SUnreclaim",
                 "KernelStack", "PageTables", "CommitLimit", "Committed_AS", "VmallocTotal", "VmallocUsed",
                 "HugePages_Total", "HugePages_Free", "Hugepagesize"):
        meminfo[name] = 0
    meminfo["CommitLimit"] = total
    meminfo["Hugepagesize"] = 2048
    units = {"HugePages_Total", "HugePages_Free"}
    files = {
        "meminfo": "".join(f"{k + ':':<16}{v:>8}{'' if k in units else ' kB'}\n" for k, v in meminfo.items()),
        "stat": "".join([f"cpu  0 0 0 {100 * cpus} 0 0 0 0 0 0\n",
                         *(f"cpu{i} 0 0 0 100 0 0 0 0 0 0\n" for i in range(cpus)),
                         "intr 0\nctxt 0\n", f"btime {static['btime']}\n",
                         "processes 1\nprocs_running 1\nprocs_blocked 0\n",
                         "softirq 0" + " 0" * len(SOFTIRQS) + "\n"]),
        "loadavg": "0.00 0.00 0.00 1/1 1\n",
        "uptime": f"1.00 {cpus:.2f}\n",
        "vmstat": "".join(f"{k} {v}\n" for k, v in (("nr_free_pages", total // 4), ("nr_inactive_anon", 0),
                                                     ("nr_active_anon", 0), ("nr_inactive_file", 0),
                                                     ("nr_active_file", 0), ("nr_shmem", 0), ("pgfault", 0),
                                                     ("pgmajfault", 0), ("pswpin", 0), ("pswpout", 0))),
        "diskstats": "",
        "interrupts": " " * 4 + "".join(f"{'CPU' + str(i):>11}" for i in range(cpus)) + "\n",
        "softirqs": " " * 4 + "".join(f"{'CPU' + str(i):>11}" for i in range(cpus)) + "\n"
                    + "".join(f"{name + ':':>12}" + f"{0:>11}" * cpus + "\n" for name in SOFTIRQS),
        "schedstat": "version 15\ntimestamp 0\n",
        "zoneinfo": "",
        "buddyinfo": "",
        "pagetypeinfo": "",
        "slabinfo": "slabinfo - version: 2.1\n",
        "swaps": "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n",
        "locks": "",
        "key-users": "",
        "cgroups": "#subsys_name\thierarchy\tnum_cgroups\tenabled\n",
    }
    if "cpuinfo" in static:
        files["cpuinfo"] = static["cpuinfo"]
    for kind in PRESSURE_KINDS:
        files[f"pressure/{kind}"] = "".join(f"{level} avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
                                            for level in ("some", "full"))
    for name, value in static.items():
        if name.startswith("sys/"):
            files[name] = value
    for name, value in SYS_FIXED.items():
        files["sys/" + name] = value + "\n"
    return files


COVERED_FOLDERS = ("sys", "pressure", "fs")  # replaced whole: /proc/fs holds the file systems' free blocks


_SHARED: dict[int, tuple[Path, list[str]]] = {}  # memory_mb -> this process's views for it, and their binds
_SHARED_LOCK = threading.Lock()
_SHARED_PID = os.getpid()  # the process that wrote them (a forked child must not remove them as it exits)


def shared_views(memory_mb: int) -> list[str]:
    """The bubblewrap arguments of ``write_views``, the files written once per process for each memory cap (every
    bot's views are the same, bound read-only; 40 files a bot start were a tenth of what starting a bot cost the
    referee) into a folder of the referee's own, removed when it exits."""
    with _SHARED_LOCK:
        known = _SHARED.get(memory_mb)
        if known is not None and known[0].is_dir():
            return known[1]
        global _SHARED_PID
        if os.getpid() != _SHARED_PID:  # a forked child writes its own
            _SHARED.clear()
            _SHARED_PID = os.getpid()
        folder = scratch.scratch_folder("arena-proc-views-")
        if not _SHARED:
            atexit.register(_remove_shared)
        _SHARED[memory_mb] = (folder, write_views(folder, memory_mb))
        return _SHARED[memory_mb][1]


def _remove_shared() -> None:
    if os.getpid() != _SHARED_PID:
        return
    for folder, _ in _SHARED.values():
        scratch.remove(folder)
    _SHARED.clear()


def write_views(folder: Path, memory_mb: int) -> list[str]:
    """Write the static files under ``folder`` and return the bubblewrap arguments that bind them, read-only, over
    the host's (after ``--proc /proc``): files the host's /proc lacks are left out; /proc/sys, /proc/pressure and
    /proc/fs are replaced whole (an empty folder where the view has nothing)."""
    files = view_contents(memory_mb)
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        path.chmod(0o444)
    args: list[str] = []
    for top in COVERED_FOLDERS:
        if (PROC / top).is_dir():
            (folder / top).mkdir(exist_ok=True)
            args += ["--ro-bind", str(folder / top), str(PROC / top)]
    for name in sorted(files):
        if name.split("/", 1)[0] not in COVERED_FOLDERS and (PROC / name).exists():
            args += ["--ro-bind", str(folder / name), str(PROC / name)]
    return args
