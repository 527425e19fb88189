"""Local bots run in a sandbox: bubblewrap (Debian's ``bubblewrap``) builds each bot process a world of its own.

What a sandboxed bot can reach, and nothing else:

* its own PID, network, IPC and UTS namespaces: it sees no other process (not the referee, not the other bots, not
  their command lines or environments) and has no network at all, only the referee's Unix-domain socket, bound into
  the sandbox at ``/run/arena/referee.sock``;
* a read-only view of the system (``/usr``, ``/etc``, the interpreters its command needs), of arena's own public
  files (the ``arena`` package, which the Python SDK is part of, and ``proto/``), of its own folder (the folder of
  the first file named in its command) and of any extra folder the host binds for it;
* one private, empty, writable folder: ``/tmp`` (also ``HOME``), made fresh for every process and deleted after it,
  so nothing passes from one run of a bot to the next;
* an environment with nothing but ``PATH``, ``HOME``, ``LANG``, its referee address, token and name.

The database, its journal files, the tournament file, seed files and the bots' logs are never bound; if one lies
inside a folder that is, it is covered (an empty file or folder in its place). When arena runs as root, every bot
process also runs as an unprivileged uid of its own (``UID_BASE`` and up, gid ``nogroup``), so files the referee
keeps with mode 0600 are unreadable to it even where a folder is shared, and the process limit counts that bot's
processes alone. Otherwise bubblewrap maps the bot to uid 65534 in a user namespace of its own.

Limits per process (``setrlimit``): CPU seconds, address space, processes and threads, open files, no core dumps.
``--die-with-parent`` and the PID namespace end every process of a sandbox when the referee dies, however it dies.
"""

from __future__ import annotations

import functools
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import arena

SOCKET_IN_SANDBOX = "/run/arena/referee.sock"
UID_BASE = 61000  # uids 61000..61999 for sandboxed bots when arena runs as root (free on Debian: users stop below)
UID_SPAN = 1000
NOGROUP = 65534
INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; `make install` does it as root)"


class SandboxError(RuntimeError):
    """The sandbox cannot be built here (no bubblewrap, no namespaces) or a bot's files cannot be bound."""


@dataclass(frozen=True, slots=True)
class SandboxLimits:
    """Resource limits for each process of a sandboxed bot; 0 means no limit.

    ``memory_mb`` limits the address space (RLIMIT_AS: what a process maps, not what it touches, so leave room for
    runtimes that reserve much, like V8 or the JVM); ``processes`` counts threads too (RLIMIT_NPROC, per bot when
    arena runs as root); ``cpu_seconds`` is CPU time per process over its whole life (RLIMIT_CPU).
    """

    cpu_seconds: int = 0
    memory_mb: int = 4096
    processes: int = 256
    open_files: int = 1024

    def __post_init__(self) -> None:
        for name in ("cpu_seconds", "memory_mb", "processes", "open_files"):
            if getattr(self, name) < 0:
                raise ValueError(f"sandbox limit {name} must not be negative")

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
    """

    enabled: bool = True
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    binds: tuple[Path, ...] = ()
    writable: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()

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
        return SandboxPolicy(self.enabled, self.limits, self.binds, self.writable, (*self.hidden, *more))


UNSANDBOXED_WARNING = (
    "WARNING: --no-sandbox: the bots run as ordinary processes of yours. Nothing stops them from reading the "
    "database, the seed, the other bots' tokens and memory (/proc), or files left by an earlier run, from using the "
    "network, or from outliving the referee if they leave their process group. Use it only for bots you trust."
)


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
    """arena's public files every bot may read: the package (the Python SDK is part of it) and ``proto/``."""
    package = Path(arena.__file__).resolve().parent
    proto = package.parent / "proto"
    return [package, *([proto] if proto.is_dir() else [])]


class BotSandbox:
    """One bot process's sandbox: its private folder and the bubblewrap command line that starts it."""

    _next_uid = 0

    def __init__(self, policy: SandboxPolicy, socket_path: Path, cwd: Path) -> None:
        self.policy = policy
        self.socket_path = socket_path
        self.cwd = cwd.resolve()
        self.private = Path(tempfile.mkdtemp(prefix="arena-bot-"))
        self.uid: int | None = None
        if is_root():
            self.uid = UID_BASE + BotSandbox._next_uid % UID_SPAN
            BotSandbox._next_uid += 1
            os.chown(self.private, self.uid, NOGROUP)
        self.private.chmod(0o700)

    def environment(self, token: str, name: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """All a sandboxed bot's environment holds."""
        venv_bin = str(Path(sys.executable).parent)
        env = {
            "PATH": f"{venv_bin}:/usr/local/bin:/usr/bin:/bin",
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

    def argv(self, command: str, env: Mapping[str, str]) -> list[str]:
        """The bubblewrap command line that runs ``command`` (through ``/bin/sh -c``) in this sandbox; run it with
        ``env`` (``environment``) as its whole environment."""
        bwrap = bwrap_path()
        if bwrap is None:
            raise SandboxError(f"bubblewrap is not installed: {INSTALL_HINT}")
        readable = [*toolchain_folders(command, self.cwd, env["PATH"]), *arena_folders(),
                    *command_folders(command, self.cwd), *(p.resolve() for p in self.policy.binds)]
        writable = [p.resolve() for p in self.policy.writable]
        for path in [*readable, *writable]:
            if not path.exists():
                raise SandboxError(f"cannot bind {path} into the bot's sandbox: it does not exist")
        # the private folder first, so that folders under /tmp on the host are bound over it, not hidden by it
        args = [bwrap, *_namespaces(), *_system_binds(), "--bind", str(self.private), "/tmp"]
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
        # the environment reaches the bot as bubblewrap's own (run it with ``env``), not as --setenv arguments:
        # the sandbox's first process shows bubblewrap's command line in /proc/1/cmdline
        args += ["--chdir", str(self.cwd), "--", "/usr/bin/prlimit", *self.policy.limits.prlimit_args(), "--"]
        if self.uid is not None:
            args += ["/usr/bin/setpriv", f"--reuid={self.uid}", f"--regid={NOGROUP}", "--clear-groups",
                     "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all", "--"]
        return [*args, "/bin/sh", "-c", command]

    def cleanup(self) -> None:
        """Delete the private folder (whatever the bot left there goes with it)."""
        shutil.rmtree(self.private, ignore_errors=True)


def describe(policy: SandboxPolicy) -> str:
    """One line on how local bots are started, for logs and ``--help``."""
    if not policy.enabled:
        return "bots unsandboxed (--no-sandbox)"
    limits = policy.limits
    parts = [f"{limits.memory_mb} MB address space" if limits.memory_mb else "no memory limit",
             f"{limits.processes} processes" if limits.processes else "no process limit",
             f"{limits.cpu_seconds} CPU s" if limits.cpu_seconds else "no CPU-time limit"]
    return "bots sandboxed with bubblewrap (" + ", ".join(parts) + ")"
