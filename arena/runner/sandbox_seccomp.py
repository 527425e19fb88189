"""The seccomp filter of every sandboxed bot: the system calls a poker bot never needs fail with EPERM.

Built with libseccomp (through ``pyseccomp``, a ctypes binding) for the machine's own architecture, and handed to
bubblewrap as a compiled BPF program (``--seccomp FD``), which loads it just before the bot's command starts, so the
bot and every process it starts run under it. A system call made through another architecture's table (a 32-bit
``int 0x80`` on x86_64) kills the process: no bot needs one, and a filter for one table says nothing of the other.

What is denied, and why a bot could want it:

* other processes' memory and the kernel's tracing: ptrace, process_vm_readv/writev, pidfd_getfd, kcmp,
  perf_event_open, bpf, userfaultfd (a classic aid to kernel exploits), io_uring (a large kernel surface);
* shared memory with no file system: memfd_create and memfd_secret (none of the Python, Node.js or C++ sample bots
  uses them: see ``tests/integrity/test_seccomp.py``);
* host-wide figures: sysinfo (the host's free and shared memory, load averages and process count: the same channel
  as /proc/meminfo, which sandbox_views replaces; glibc's ``sysconf(_SC_PHYS_PAGES)`` then falls back on what it
  finds, and the sample bots play on), syslog (the kernel's log);
* the page cache's state, which outlives a process and so could carry a message from a bot's first duplicate half to
  its second, though the two never run at once: posix_fadvise (fadvise64: a page loaded or dropped on request),
  readahead, cachestat and mincore (whether a page is cached), and preadv2 and pwritev2 with ``RWF_NOWAIT`` (a read
  that fails unless its page is cached: a stranger's bot read every hole card of the other half that way). A bot may
  still read a page and time the read; README, "What a bot can reach", says what that leaves;
* the keyring: add_key, request_key, keyctl;
* file systems and namespaces: mount, umount2, pivot_root, chroot, the new mount API (move_mount, open_tree, fsopen,
  fsconfig, fsmount, fspick, mount_setattr), unshare, setns, and clone with a namespace flag; clone3 fails with
  ENOSYS instead (its flags are out of a filter's reach), so the C library falls back on clone, as under Docker;
* the machine itself: kexec_load, kexec_file_load, init_module, finit_module, delete_module, swapon, swapoff, reboot,
  acct, quotactl, the clocks (settimeofday, clock_settime, adjtimex, clock_adjtime), iopl, ioperm, open_by_handle_at,
  name_to_handle_at, lookup_dcookie, vhangup.

Most of these already fail for an unprivileged uid without capabilities; the filter keeps them failing if the kernel
has a hole, and closes the ones an unprivileged process may use (memfd_create, sysinfo, userfaultfd, io_uring...).
"""

from __future__ import annotations

import errno
import functools
import os
import tempfile
from typing import Any

DENIED: tuple[str, ...] = (
    # other processes and the kernel's tracing
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp", "perf_event_open", "bpf",
    "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
    # shared memory without a file system
    "memfd_create", "memfd_secret",
    # host-wide figures
    "sysinfo", "syslog",
    # the page cache's state (RWF_NOWAIT reads: ``NOWAIT_CALLS``)
    "fadvise64", "fadvise64_64", "readahead", "cachestat", "mincore",
    # the keyring
    "add_key", "request_key", "keyctl",
    # file systems and namespaces
    "mount", "umount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsconfig",
    "fsmount", "fspick", "mount_setattr", "unshare", "setns",
    # the machine
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "swapon", "swapoff", "reboot",
    "acct", "quotactl", "quotactl_fd", "settimeofday", "clock_settime", "adjtimex", "clock_adjtime", "iopl",
    "ioperm", "open_by_handle_at", "name_to_handle_at", "lookup_dcookie", "vhangup", "uselib", "nfsservctl",
)
NOWAIT_CALLS = {"preadv2": 5, "pwritev2": 5}  # the argument of their flags: denied with RWF_NOWAIT among them
RWF_NOWAIT = 0x00000008
NO_SUCH_CALL: tuple[str, ...] = ("clone3",)  # ENOSYS: the C library then uses clone, whose flags the filter sees
CLONE_NAMESPACES = {  # clone(2) flags that make a namespace: denied on clone
    "CLONE_NEWNS": 0x00020000, "CLONE_NEWCGROUP": 0x02000000, "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000, "CLONE_NEWUSER": 0x10000000, "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000, "CLONE_NEWTIME": 0x00000080,
}


class SeccompError(RuntimeError):
    """The filter cannot be built here (libseccomp is missing)."""


def _library() -> Any:
    try:
        import pyseccomp
    except (ImportError, OSError, RuntimeError) as exc:  # pyseccomp raises RuntimeError when libseccomp is missing
        raise SeccompError(f"the bots' seccomp filter needs libseccomp (Debian/Ubuntu: apt-get install libseccomp2) "
                           f"and the pyseccomp package: {exc}") from None
    return pyseccomp


@functools.cache
def filter_program(deny: tuple[str, ...] = DENIED) -> bytes:
    """The compiled BPF program (for this machine's architecture) that fails ``deny`` with EPERM, clone3 with
    ENOSYS, clone with a namespace flag and preadv2 or pwritev2 with RWF_NOWAIT with EPERM, and allows everything
    else."""
    lib = _library()  # pyseccomp has no type information
    native = lib.system_arch()
    program = lib.SyscallFilter(lib.ALLOW)
    program.set_attr(lib.Attr.ACT_BADARCH, lib.KILL_PROCESS)
    program.set_attr(lib.Attr.CTL_NNP, 0)  # bubblewrap sets no_new_privs itself

    def known(name: str) -> bool:
        return int(lib.resolve_syscall(native, name)) >= 0  # <0: not on this arch

    for name in deny:
        if known(name):
            program.add_rule(lib.ERRNO(errno.EPERM), name)
    for name in NO_SUCH_CALL:
        if known(name):
            program.add_rule(lib.ERRNO(errno.ENOSYS), name)
    for name, flags in NOWAIT_CALLS.items():
        if known(name):
            program.add_rule(lib.ERRNO(errno.EPERM), name, lib.Arg(flags, lib.MASKED_EQ, RWF_NOWAIT, RWF_NOWAIT))
    if known("clone"):
        for flag in CLONE_NAMESPACES.values():
            program.add_rule(lib.ERRNO(errno.EPERM), "clone",
                             lib.Arg(0, lib.MASKED_EQ, flag, flag))
    with tempfile.TemporaryFile() as out:
        program.export_bpf(out)
        out.seek(0)
        return out.read()


def program_fd(program: bytes) -> int:
    """A file descriptor to read ``program`` from (bubblewrap's ``--seccomp FD``); the caller passes it to the
    bubblewrap process and closes it once that has started."""
    read, write = os.pipe()
    try:
        if len(program) > 65536:  # a pipe's buffer: far above any filter of this size
            raise SeccompError(f"the seccomp program is {len(program)} bytes, more than a pipe holds")
        os.write(write, program)
    finally:
        os.close(write)
    return read
