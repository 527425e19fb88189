"""Local bots run in a sandbox: bubblewrap (Debian's ``bubblewrap``) builds each bot process a world of its own.

What a sandboxed bot can reach, and nothing else:

* its own PID, network, IPC and UTS namespaces: it sees no other process (not the referee, not the other bots, not
  their command lines or environments) and has no network at all, only the referee's Unix-domain socket, bound into
  the sandbox at ``/run/arena/referee.sock``;
* a read-only view of the system (``/usr``, ``/etc``, the interpreters its command needs), of arena's own public
  files (the ``arena`` package, the Python SDK's ``arena_sdk`` and ``proto/``), of its own folder (the folder of
  the first file named in its command) and of any extra folder the host binds for it;
* one private, empty, writable folder: ``/tmp`` (also ``HOME``), a tmpfs made fresh for every process (its memory
  counts against the bot's memory cap) and gone with it, so nothing passes from one run of a bot to the next and
  nothing it writes reaches the host's disks;
* an environment with nothing but ``PATH``, ``HOME``, ``LANG``, its referee address, token and name;
* static views of the host-wide files of /proc (meminfo, stat, loadavg, /proc/sys...: arena.runner.sandbox_views),
  so that it cannot read the host's load, nor another process's use of memory or CPU;
* a seccomp filter that fails the system calls a poker bot never needs (ptrace, bpf, keyctl, perf_event_open,
  userfaultfd, mount, memfd_create, sysinfo...: arena.runner.sandbox_seccomp).

The database, its journal files, the tournament file, seed files and the bots' logs are never bound; if one lies
inside a folder that is, it is covered (an empty file or folder in its place). When arena runs as root, every bot
process also runs as an unprivileged uid of its own on the host (61000 and up, held under a lock in /run/arena/uids
for the sandbox's life: arena.runner.sandbox_uids; gid ``nogroup``), so files the referee keeps with mode 0600 are
unreadable to it even where a folder is shared, and the process limit counts that bot's processes alone, whatever
number of arena processes run. Otherwise bubblewrap maps the bot to uid 65534 in a user namespace of its own.

Limits: a cgroup per bot process caps the memory, processes and CPU of everything it starts, together, where the host
lets arena make one (arena.runner.sandbox_cgroup); and per process (``setrlimit``): CPU seconds, address space,
processes and threads, open files, no core dumps. Where the referee's own hard limits are lower than the settings,
the bots get the referee's (one warning says so). ``--die-with-parent`` and the PID namespace end every process of a
sandbox when the referee dies, however it dies.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
import resource
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import arena
import arena_sdk
from arena import scratch
from arena.runner import sandbox_cgroup
from arena.runner.sandbox_cgroup import BotCgroup, CgroupError, enter_argv
from arena.runner.sandbox_seccomp import SeccompError, filter_program, program_fd
from arena.runner.sandbox_uids import UidLease, per_process_uid, take_uid
from arena.runner.sandbox_views import shared_views, write_views

log = logging.getLogger("arena.runner.sandbox")

SOCKET_IN_SANDBOX = "/run/arena/referee.sock"
NOGROUP = 65534
MB = 1024 * 1024
INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; `make install` does it as root)"


class SandboxError(RuntimeError):
    """The sandbox cannot be built here (no bubblewrap, no namespaces) or a bot's files cannot be bound."""


@dataclass(frozen=True, slots=True)
class SandboxLimits:
    """Resource limits of a sandboxed bot; 0 means no limit.

    ``memory_mb`` caps the memory of all the bot's processes together (its cgroup) and the address space of each
    (RLIMIT_AS: what a process maps, not what it touches, so leave room for runtimes that reserve much, like V8 or
    the JVM); ``processes`` counts threads too (its cgroup, and RLIMIT_NPROC, per bot when arena runs as root);
    ``cpus`` is the cores' worth of CPU its processes may use together (its cgroup); ``cpu_seconds`` is CPU time
    per process over its whole life (RLIMIT_CPU).
    """

    cpu_seconds: int = 0
    memory_mb: int = 4096
    processes: int = 256
    open_files: int = 1024
    cpus: float = 1.0

    def __post_init__(self) -> None:
        for name in ("cpu_seconds", "memory_mb", "processes", "open_files", "cpus"):
            if getattr(self, name) < 0:
                raise ValueError(f"sandbox limit {name} must not be negative")

    def fitted(self) -> tuple[SandboxLimits, list[str]]:
        """These limits lowered to the referee's own hard limits where those are lower (a bot cannot be given more
        than its referee has: ``prlimit`` would fail and every bot with it), and what was lowered, in words."""
        changes: dict[str, int] = {}
        notes: list[str] = []
        for name, kind, unit, flag in (("memory_mb", resource.RLIMIT_AS, MB, "sandbox.memory_mb"),
                                       ("processes", resource.RLIMIT_NPROC, 1, "sandbox.processes"),
                                       ("open_files", resource.RLIMIT_NOFILE, 1, "sandbox.open_files"),
                                       ("cpu_seconds", resource.RLIMIT_CPU, 1, "sandbox.cpu_seconds")):
            hard = resource.getrlimit(kind)[1]
            wanted = getattr(self, name)
            if hard == resource.RLIM_INFINITY or (wanted and wanted * unit <= hard):
                continue
            changes[name] = hard // unit
            what = f"{wanted}" if wanted else "no limit"
            notes.append(f"arena itself runs under a hard limit of {hard // unit} for {flag} ({what} asked): each "
                         f"bot process gets {hard // unit}")
        return (dataclasses.replace(self, **changes) if changes else self), notes

    def prlimit_args(self) -> list[str]:
        """The ``prlimit`` options that apply these limits (and forbid core dumps)."""
        args = ["--core=0"]
        if self.cpu_seconds:
            args.append(f"--cpu={self.cpu_seconds}")
        if self.memory_mb:
            args.append(f"--as={self.memory_mb * 1024 * 1024}")
        if self.processes:
            args.append(f"--nproc={self.processes}")
        if self.open_files:
            args.append(f"--nofile={self.open_files}")
        return args


@dataclass(frozen=True, slots=True)
class SandboxPolicy:
    """How the runner starts local bots: sandboxed (the default) or not, with which limits and extra folders.

    ``binds`` are extra folders every bot may read; ``writable`` extra folders every bot may write (for tests and
    trusted set-ups only: a writable folder shared by two runs is a memory between them). ``hidden`` are the
    referee's own files (database, configuration, seed files, logs), covered wherever a bound folder holds them.
    The defences in depth, each on by default and switched off only to show what it stops (or to run a bot that
    needs what one denies): ``seccomp`` (the system-call filter), ``proc_views`` (static host-wide /proc files),
    ``cgroup`` (one cap per bot over all its processes, where the host allows it), ``unique_uids`` (uids locked
    host-wide; off: each arena process numbers its bots' uids from 61000, as arena once did). ``drop_caches`` (off
    unless asked: it costs every process a cold start) empties the host's page cache between a match's rotations
    (``drop_page_cache``), the one state a bot's first half can leave for its second that the sandbox does not reset.
    """

    enabled: bool = True
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    binds: tuple[Path, ...] = ()
    writable: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()
    seccomp: bool = True
    proc_views: bool = True
    cgroup: bool = True
    unique_uids: bool = True
    drop_caches: bool = False

    def binding(self, *folders: Path) -> SandboxPolicy:
        """The same policy, also letting the bots read ``folders`` (a hosted bot's own folder: its submission)."""
        more = tuple(f.resolve() for f in folders if f.resolve() not in self.binds)
        return dataclasses.replace(self, binds=(*self.binds, *more)) if more else self

    def hiding(self, *paths: Path | str | None) -> SandboxPolicy:
        """The same policy, also hiding ``paths`` (and a database's ``-wal``, ``-shm`` and ``-journal`` files)."""
        more: list[Path] = []
        for path in paths:
            if path is None:
                continue
            path = Path(path).absolute()
            more.append(path)
            if path.suffix == ".db" or path.name.endswith(".sqlite"):
                more.extend(path.with_name(path.name + suffix) for suffix in ("-wal", "-shm", "-journal"))
        return dataclasses.replace(self, hidden=(*self.hidden, *more))


UNSANDBOXED_WARNING = (
    "WARNING: --no-sandbox: the bots run as ordinary processes of yours. Nothing stops them from reading the "
    "database, the seed, the other bots' tokens and memory (/proc), or files left by an earlier run, from using the "
    "network, or from outliving the referee if they leave their process group. Use it only for bots you trust."
)


DROP_CACHES = Path("/proc/sys/vm/drop_caches")


def check_drop_caches() -> None:
    """Refuse ``drop_caches`` where the page cache cannot be emptied (not root: ``SandboxError``)."""
    if not os.access(DROP_CACHES, os.W_OK):
        raise SandboxError(f"--drop-caches (sandbox.drop_caches) empties the page cache through {DROP_CACHES}, "
                           "which only root may write: run arena as root, or play without it")


def drop_page_cache() -> None:
    """Empty the host's page cache of every clean page no live process maps (``drop_caches``: 1): whatever a bot's
    stopped processes loaded into it, to be told later by timing a read, is gone."""
    DROP_CACHES.write_text("1\n")


@functools.cache
def bwrap_path() -> str | None:
    """Where bubblewrap is, if it is installed."""
    return shutil.which("bwrap")


def is_root() -> bool:
    """Whether arena runs as root (then each bot gets an unprivileged uid of its own)."""
    return os.geteuid() == 0


@functools.cache
def check_sandbox() -> None:
    """Build one empty sandbox to prove that bubblewrap works here; raise ``SandboxError`` saying why if not."""
    bwrap = bwrap_path()
    if bwrap is None:
        raise SandboxError(
            f"the bot sandbox needs bubblewrap (bwrap), which is not installed: {INSTALL_HINT}; or pass --no-sandbox "
            "to run the bots unprotected (they can then read the database, the seed and each other's tokens)"
        )
    argv = [bwrap, *_namespaces(), *_system_binds(), "--", "/bin/true"]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SandboxError(f"bubblewrap failed to start: {exc}") from None
    if proc.returncode != 0:
        hint = "" if is_root() else (
            " (as an ordinary user bubblewrap needs unprivileged user namespaces; some systems, such as Ubuntu 24.04 "
            "with AppArmor, restrict them)"
        )
        raise SandboxError(f"bubblewrap cannot build a sandbox here{hint}: {proc.stderr.strip() or proc.returncode}")


@functools.cache
def check_views() -> None:
    """Build one sandbox with the static views of /proc (after ``check_sandbox``); ``SandboxError`` if this host
    will not let bubblewrap bind them."""
    bwrap = bwrap_path() or "bwrap"
    with scratch.scratch("arena-check-") as folder:
        argv = [bwrap, *_namespaces(), *_system_binds(), *write_views(folder, 0), "--", "/bin/true"]
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=20, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SandboxError(f"bubblewrap failed to start: {exc}") from None
    if proc.returncode != 0:
        raise SandboxError(f"bubblewrap cannot bind the static views of /proc here ({proc.stderr.strip()}): pass "
                           "--host-proc to show the bots the host's /proc (sandbox.proc_views)")


_said: set[str] = set()


def host_warnings(policy: SandboxPolicy) -> list[str]:
    """What this host takes away from the policy, in words, each said once per process: no cgroup for the bots (so
    only per-process limits), no seccomp filter, limits lowered to the referee's own."""
    if not policy.enabled:
        return []
    notes = list(policy.limits.fitted()[1])
    limits = policy.limits
    if policy.cgroup:
        found, why = sandbox_cgroup.layout()
        if found is None:
            notes.append(
                f"no cgroup for the bots here ({why}): each bot is limited per process only ({limits.memory_mb} MB of "
                f"address space per process, so a bot with N processes can hold N times that; processes per uid; no "
                f"CPU cap). Run arena as root, or in a delegated cgroup, to cap each bot as a whole (sandbox.cgroup)")
        else:
            for controller, what in (("pids", "processes are limited per uid only"), ("cpu", "no CPU cap")):
                if controller not in found.controllers:
                    notes.append(f"the bots' cgroups ({found.describe()}) have no {controller} controller: {what}")
    if policy.seccomp:
        try:
            filter_program()
        except SeccompError as exc:
            notes.append(f"no seccomp filter for the bots: {exc} (sandbox.seccomp)")
    fresh = [n for n in notes if n not in _said]
    _said.update(fresh)
    return fresh


def _namespaces() -> list[str]:
    common = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
              "--hostname", "arena-bot", "--die-with-parent", "--new-session"]
    if is_root():  # privileged bubblewrap; the bot's uid is switched with setpriv inside (see command)
        return common
    return [*common, "--unshare-user", "--uid", str(NOGROUP), "--gid", str(NOGROUP), "--disable-userns"]


def _system_binds() -> list[str]:
    """The read-only system: /usr and /etc, the merged-/usr links (or folders) of /bin, /lib..., /proc, /dev."""
    args = ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
    for top in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / top
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    return [*args, "--proc", "/proc", "--dev", "/dev"]


def _inside(path: Path, folders: Iterable[Path]) -> bool:
    return any(path == f or f in path.parents for f in folders)


def _without_assignments(words: list[str]) -> list[str]:
    """The words of a command after its leading ``NAME=value`` environment assignments."""
    for index, word in enumerate(words):
        if not ("=" in word and word.split("=", 1)[0].isidentifier()):
            return words[index:]
    return []


def command_folders(command: str, cwd: Path) -> list[Path]:
    """A bot's own folders: the folder of the program when it is a file of its own (``./target/release/bot``, not
    an interpreter of the toolchain), and the folder of the first existing file its arguments name (``python
    bots/mine/bot.py`` -> ``bots/mine``). Programs found on ``PATH`` (python, node) are toolchain, bound apart."""
    try:
        words = _without_assignments(shlex.split(command))
    except ValueError as exc:
        raise SandboxError(f"cannot read the bot command {command!r}: {exc}") from None
    if not words:
        return []
    folders: list[Path] = []
    toolchain = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve()}
    program = words[0]
    if "/" in program:
        path = (cwd / program).resolve()
        if path.is_file() and not _inside(path, toolchain):
            folders.append(path.parent)
    for word in words[1:]:
        if word.startswith("-"):
            continue
        candidate = (cwd / word).resolve()
        if candidate.is_file():
            folders.append(candidate.parent)
            break
    return folders


def toolchain_folders(command: str, cwd: Path, path_env: str) -> list[Path]:
    """Installations the command's program lives in (a Python or Node.js outside /usr), and this Python's own."""
    folders = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve()}
    try:
        words = _without_assignments(shlex.split(command))
    except ValueError:
        words = []
    if words:
        found = shutil.which(words[0], path=path_env) if "/" not in words[0] else str(cwd / words[0])
        if found:
            real = Path(found).resolve()
            for candidate in (Path(found).absolute(), real):
                parts = candidate.parts
                prefix = Path(*parts[: parts.index("bin")]) if "bin" in parts[1:] else candidate.parent
                folders.add(prefix)
    return sorted(f for f in folders if f.is_dir() and not _inside(f, [Path("/usr")]))


def arena_folders() -> list[Path]:
    """arena's public files every bot may read: the package, the Python SDK's package (``arena_sdk``: in
    ``proto/python`` for an editable install, else in site-packages) and ``proto/``."""
    package = Path(arena.__file__).resolve().parent
    sdk = Path(arena_sdk.__file__).resolve().parent
    proto = package.parent / "proto"
    return [package, sdk, *([proto] if proto.is_dir() else [])]


def sandbox_path() -> str:
    """The ``PATH`` of a sandboxed bot: this Python's folder first (``python`` in a command is arena's)."""
    return f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin"


def readable_folders(policy: SandboxPolicy, command: str, cwd: Path) -> list[tuple[Path, str]]:
    """Every folder a bot running ``command`` from ``cwd`` may read, and what it is (``{bot}`` stands for the bot's
    name): its toolchain, arena's public files, its own folder, the policy's extra folders."""
    cwd = cwd.resolve()
    return [*((p, "a toolchain bot {bot} runs with") for p in toolchain_folders(command, cwd, sandbox_path())),
            *((p, "arena's public files, which every bot reads") for p in arena_folders()),
            *((p, "bot {bot}'s own folder") for p in command_folders(command, cwd)),
            *((p.resolve(), "a folder every bot reads (--sandbox-bind)") for p in policy.binds),
            *((p.resolve(), "a folder every bot may write") for p in policy.writable)]


class BotSandbox:
    """One bot process's sandbox: its uid, cgroup, /proc views and seccomp program, and the bubblewrap command line
    that starts it. ``cleanup`` gives everything back."""

    def __init__(self, policy: SandboxPolicy, socket_path: Path, cwd: Path) -> None:
        self.policy = policy
        self.socket_path = socket_path
        self.cwd = cwd.resolve()
        self.folder = scratch.scratch_folder("arena-bot-")  # the referee's: the bot sees only its views
        self.uid: int | None = None
        self.cgroup: BotCgroup | None = None
        self._lease: UidLease | None = None
        self._fds: list[int] = []
        for note in host_warnings(policy):
            log.warning("%s", note)
        try:
            if is_root():
                self._lease = take_uid() if policy.unique_uids else per_process_uid()
                self.uid = self._lease.uid
            if policy.cgroup:
                found, _ = sandbox_cgroup.layout()
                if found is not None:
                    limits = policy.limits
                    try:
                        self.cgroup = BotCgroup(found, limits.memory_mb, limits.processes, limits.cpus)
                    except CgroupError as exc:  # the layout was writable a moment ago: say so, play on per process
                        if str(exc) not in _said:
                            _said.add(str(exc))
                            log.warning("%s; this bot is limited per process only (sandbox.cgroup)", exc)
        except (OSError, RuntimeError):
            self.cleanup()
            raise

    @property
    def pass_fds(self) -> tuple[int, ...]:
        """The file descriptors the bubblewrap process inherits (its seccomp program), once ``argv`` is built."""
        return tuple(self._fds)

    def started(self) -> None:
        """The bubblewrap process has started: close the referee's copies of what it inherited."""
        for fd in self._fds:
            os.close(fd)
        self._fds.clear()

    def environment(self, token: str, name: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """All a sandboxed bot's environment holds."""
        env = {
            "PATH": sandbox_path(),
            "HOME": "/tmp",
            "TMPDIR": "/tmp",
            "LANG": "C.UTF-8",
            "PYTHONUNBUFFERED": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
            "ARENA_ADDRESS": f"unix:{SOCKET_IN_SANDBOX}",
            "ARENA_TOKEN": token,
            "ARENA_BOT_NAME": name,
        }
        env.update(extra or {})
        return env

    def argv(self, command: str, env: Mapping[str, str], bot_command: str | None = None) -> list[str]:
        """The command line that runs ``command`` (through ``/bin/sh -c``) in this sandbox; run it with ``env``
        (``environment``) as its whole environment and ``pass_fds``, then call ``started``. ``bot_command``: the
        bot's own command when ``command`` wraps it (the ACPC bridge): its folders and toolchain are bound too."""
        bwrap = bwrap_path()
        if bwrap is None:
            raise SandboxError(f"bubblewrap is not installed: {INSTALL_HINT}")
        own = bot_command if bot_command is not None else command
        readable = [*toolchain_folders(command, self.cwd, env["PATH"]), *toolchain_folders(own, self.cwd, env["PATH"]),
                    *arena_folders(), *command_folders(own, self.cwd), *(p.resolve() for p in self.policy.binds)]
        writable = [p.resolve() for p in self.policy.writable]
        for path in [*readable, *writable]:
            if not path.exists():
                raise SandboxError(f"cannot bind {path} into the bot's sandbox: it does not exist")
        limits = self.policy.limits.fitted()[0]
        args = [bwrap, *_namespaces(), *_system_binds()]
        if self.policy.proc_views:
            check_views()
            args += shared_views(limits.memory_mb)
        # /tmp first, so that folders under /tmp on the host are bound over it, not hidden by it
        if limits.memory_mb:
            args += ["--size", str(limits.memory_mb * MB)]
        args += ["--perms", "1777", "--tmpfs", "/tmp"]
        made: set[Path] = {Path("/"), Path("/usr"), Path("/etc"), Path("/proc"), Path("/dev"), Path("/tmp"),
                           Path("/run")}
        bound: list[Path] = [Path("/usr"), Path("/etc")]

        def parents(path: Path) -> None:
            for parent in reversed(path.parents):
                if parent not in made and not _inside(parent, bound):
                    args.extend(["--perms", "0755", "--dir", str(parent)])
                    made.add(parent)

        for path in sorted(set(readable), key=lambda p: len(p.parts)):
            if _inside(path, bound):
                continue
            parents(path)
            args.extend(["--ro-bind", str(path), str(path)])
            bound.append(path)
            made.add(path)
        for path in sorted(set(writable), key=lambda p: len(p.parts)):
            parents(path)
            args.extend(["--bind", str(path), str(path)])
            bound.append(path)
            made.add(path)
        for secret in self.policy.hidden:
            if not secret.exists() or not _inside(secret, bound):
                continue
            if secret.is_dir():
                args.extend(["--tmpfs", str(secret)])
            else:
                args.extend(["--ro-bind", "/dev/null", str(secret)])
        args += ["--perms", "0755", "--dir", "/run/arena",
                 "--bind", str(self.socket_path), SOCKET_IN_SANDBOX]
        if self.cwd not in made and not _inside(self.cwd, bound):
            parents(self.cwd)
            args.extend(["--perms", "0755", "--dir", str(self.cwd)])
        if self.policy.seccomp:
            try:
                fd = program_fd(filter_program())
            except SeccompError:
                pass  # said once by host_warnings
            else:
                self._fds.append(fd)
                args += ["--seccomp", str(fd)]
        # the environment reaches the bot as bubblewrap's own (run it with ``env``), not as --setenv arguments:
        # the sandbox's first process shows bubblewrap's command line in /proc/1/cmdline
        args += ["--chdir", str(self.cwd), "--", "/usr/bin/prlimit", *limits.prlimit_args(), "--"]
        if self.uid is not None:
            args += ["/usr/bin/setpriv", f"--reuid={self.uid}", f"--regid={NOGROUP}", "--clear-groups",
                     "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all", "--"]
        args += ["/bin/sh", "-c", command]
        return enter_argv(self.cgroup.procs_files, args) if self.cgroup is not None else args

    def end_note(self) -> str:
        """Why arena ended the bot, when it did (it went over its memory cap), else ''."""
        if self.cgroup is not None and self.cgroup.oom_kills():
            return (f"killed: exceeded its memory cap of {self.cgroup.memory_mb} MB (sandbox.memory_mb, all its "
                    "processes together)")
        return ""

    def cleanup(self) -> None:
        """End whatever is left of the bot, remove its cgroup, give its uid back, delete the referee's folder."""
        self.started()
        if self.cgroup is not None:
            if not self.cgroup.remove():
                log.warning("the bot's cgroup %s could not be removed", self.cgroup.name)
            self.cgroup = None
        if self._lease is not None:
            self._lease.release()
            self._lease = None
        scratch.remove(self.folder)


def describe(policy: SandboxPolicy) -> str:
    """One line on how local bots are started, for logs and ``--help``."""
    if not policy.enabled:
        return "bots unsandboxed (--no-sandbox)"
    limits = policy.limits
    parts = [f"{limits.memory_mb} MB of memory" if limits.memory_mb else "no memory limit",
             f"{limits.processes} processes" if limits.processes else "no process limit",
             f"{limits.cpus:g} CPUs" if limits.cpus else "no CPU cap",
             f"{limits.cpu_seconds} CPU s" if limits.cpu_seconds else "no CPU-time limit"]
    return "bots sandboxed with bubblewrap (" + ", ".join(parts) + ")"
