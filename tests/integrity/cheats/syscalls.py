#!/usr/bin/env python3
"""Cheat bot ``syscalls``: tries the system calls a poker bot never needs before it plays (check, else call).

Each call is made on itself only (its own memory, its own keyring, a shared-memory file of its own...), so that
without the sandbox's seccomp filter most succeed even for an unprivileged uid; with it they fail with EPERM
(clone3 with ENOSYS). It prints one line ``SYSCALLS {json}``: each call's outcome, ``ok`` or the error's name.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
from collections.abc import Callable
from typing import Any

from arena_sdk import Action, Bot, Request, call, check, run

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NR = {  # x86_64 and aarch64 numbers of the calls glibc has no wrapper for
    "x86_64": {"memfd_create": 319, "bpf": 321, "userfaultfd": 323, "perf_event_open": 298, "io_uring_setup": 425,
               "clone3": 435, "add_key": 248, "keyctl": 250, "open_tree": 428, "fsopen": 430, "pidfd_getfd": 438},
    "aarch64": {"memfd_create": 279, "bpf": 280, "userfaultfd": 282, "perf_event_open": 241, "io_uring_setup": 425,
                "clone3": 435, "add_key": 217, "keyctl": 219, "open_tree": 428, "fsopen": 430, "pidfd_getfd": 438},
}[os.uname().machine]
CLONE_NEWUSER = 0x10000000
PTRACE_TRACEME = 0
KEYCTL_GET_KEYRING_ID = 0
KEY_SPEC_PROCESS_KEYRING = -2
UFFD_USER_MODE_ONLY = 1


class IoVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


def outcome(result: int) -> str:
    if result >= 0:
        return "ok"
    code = ctypes.get_errno()
    return errno.errorcode.get(code, str(code))


def raw(name: str, *args: Any) -> Callable[[], int]:
    return lambda: int(libc.syscall(NR[name], *args))


def process_vm_readv() -> int:
    source = ctypes.create_string_buffer(b"secret")
    target = ctypes.create_string_buffer(6)
    local, remote = IoVec(ctypes.addressof(target), 6), IoVec(ctypes.addressof(source), 6)
    return int(libc.process_vm_readv(os.getpid(), ctypes.byref(local), 1, ctypes.byref(remote), 1, 0))


def perf_event_open() -> int:
    attr = (ctypes.c_uint8 * 128)()
    ctypes.c_uint32.from_buffer(attr, 4).value = 128  # size; type 1 (software), config 0 (cpu clock)
    ctypes.c_uint32.from_buffer(attr, 0).value = 1
    ctypes.c_uint64.from_buffer(attr, 40).value = 1 << 5 | 1 << 6  # exclude_kernel, exclude_hv
    return int(libc.syscall(NR["perf_event_open"], attr, 0, -1, -1, 0))


def in_child(attempt: Callable[[], int]) -> Callable[[], int]:
    """The call made by a child process, which then exits (a traced or re-namespaced process plays no match)."""

    def forked() -> int:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            result = attempt()
            os.write(write, f"{result} {ctypes.get_errno()}".encode())
            os._exit(0)
        os.close(write)
        text = os.read(read, 64).decode()
        os.close(read)
        os.waitpid(pid, 0)
        result, code = (int(word) for word in text.split())
        ctypes.set_errno(code)
        return result

    return forked


def on_own_file(attempt: Callable[[int], object]) -> Callable[[], int]:
    """``attempt`` on this file, opened for reading: 0, or -1 with its error in errno (os raises where libc returns)."""

    def call() -> int:
        fd = os.open(__file__, os.O_RDONLY)
        try:
            attempt(fd)
            return 0
        except OSError as exc:
            ctypes.set_errno(exc.errno or 0)
            return -1
        finally:
            os.close(fd)

    return call


def mincore() -> int:
    """Whether a page of a mapped file is cached: the same question as an RWF_NOWAIT read."""
    fd = os.open(__file__, os.O_RDONLY)
    try:
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                              ctypes.c_long)
        address = libc.mmap(None, 4096, 1, 2, fd, 0)  # PROT_READ, MAP_PRIVATE
        if address in (None, ctypes.c_void_p(-1).value):
            return -1
        vector = ctypes.create_string_buffer(1)
        result = int(libc.mincore(ctypes.c_void_p(address), 4096, vector))
        code = ctypes.get_errno()
        libc.munmap(ctypes.c_void_p(address), 4096)
        ctypes.set_errno(code)
        return result
    finally:
        os.close(fd)


def probe() -> dict[str, str]:
    sysinfo = ctypes.create_string_buffer(256)
    io_params = ctypes.create_string_buffer(120)
    calls: dict[str, Callable[[], int]] = {
        "memfd_create": raw("memfd_create", b"arena", 0),
        "sysinfo": lambda: int(libc.sysinfo(sysinfo)),
        "ptrace": in_child(lambda: int(libc.ptrace(PTRACE_TRACEME, 0, None, None))),
        "process_vm_readv": process_vm_readv,
        "keyctl": raw("keyctl", KEYCTL_GET_KEYRING_ID, KEY_SPEC_PROCESS_KEYRING, 1),
        "add_key": raw("add_key", b"user", b"arena", b"x", 1, KEY_SPEC_PROCESS_KEYRING),
        "userfaultfd": raw("userfaultfd", UFFD_USER_MODE_ONLY),
        "perf_event_open": perf_event_open,
        "io_uring_setup": raw("io_uring_setup", 4, io_params),
        "bpf": raw("bpf", 0, None, 0),
        "unshare_user": in_child(lambda: int(libc.unshare(CLONE_NEWUSER))),
        "mount": lambda: int(libc.mount(b"none", b"/tmp", b"tmpfs", 0, None)),
        "open_tree": raw("open_tree", -100, b"/tmp", 0),
        "fsopen": raw("fsopen", b"tmpfs", 0),
        "clone3": raw("clone3", None, 0),
        # the page cache's state: a read that fails unless its page is cached, and a page loaded on request (how a
        # bot's second half could read what its first left there)
        "preadv2_nowait": on_own_file(lambda fd: os.preadv(fd, [bytearray(16)], 0, os.RWF_NOWAIT)),
        "fadvise64": on_own_file(lambda fd: os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_WILLNEED)),
        "mincore": mincore,
    }
    return {name: outcome(attempt()) for name, attempt in calls.items()}


class Caller(Bot):
    def act(self, request: Request) -> Action:
        return check() if request.legal.can_check else call()


if __name__ == "__main__":
    print("SYSCALLS " + json.dumps(probe()), flush=True)
    raise SystemExit(run(Caller(), name="syscalls", version="1").exit_code)
