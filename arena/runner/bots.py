"""Local bots as subprocesses: each gets the referee's address and its own token through its environment.

A bot command is run by the shell inside a sandbox (arena.runner.sandbox), in its own session (so a bot that starts
children is stopped whole), with ``ARENA_ADDRESS``, ``ARENA_TOKEN`` and ``ARENA_BOT_NAME`` set, and with the
directory of the running Python first on ``PATH`` so that ``python`` in a command is the interpreter arena runs in.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from arena.runner.sandbox import BotSandbox, SandboxPolicy
from arena.text import TextLimitError, check_length


class BotSpecError(ValueError):
    """A ``--bot`` argument that is not ``NAME=COMMAND``."""


ACPC_PREFIX = "acpc:"


def acpc_launch(command: str) -> str:
    """The shell command that runs ACPC client ``command`` behind the ACPC bridge (arena.adapters.acpc), which
    starts it as ``COMMAND HOST PORT``: both in the bot's one sandbox, the client reaching only the bridge's port."""
    client = shlex.quote(f'{command} "$@"')
    return f"{shlex.quote(sys.executable)} -m arena.adapters.acpc -- /bin/sh -c {client} acpc-client"


@dataclass(frozen=True, slots=True)
class BotSpec:
    """A bot to launch: its display name, the shell command that starts it, and an optional version. With ``acpc``
    the command is an ACPC client's (``HOST PORT`` appended), run behind the ACPC bridge. A hosted bot (a league's
    submission) also has its own ``folder``, which its command runs from and which is the one folder of its own its
    sandbox binds (no other bot's), and the SHA-256 of the ``archive`` it was unpacked from (a Ray node that lacks
    the folder unpacks it from that archive: arena.runner.archive)."""

    name: str
    command: str
    version: str = ""
    acpc: bool = False
    folder: Path | None = None
    archive: str = ""

    def __post_init__(self) -> None:
        try:
            check_length(self.name, "name")
            check_length(self.version, "version")
        except TextLimitError as exc:
            raise BotSpecError(str(exc)) from None

    @classmethod
    def parse(cls, text: str) -> BotSpec:
        """``NAME=COMMAND`` (the name may carry a version: ``NAME@VERSION=COMMAND``); ``NAME=acpc:COMMAND`` for an
        ACPC client."""
        name, sep, command = text.partition("=")
        name = name.strip()
        command = command.strip()
        acpc = command.startswith(ACPC_PREFIX)
        if acpc:
            command = command.removeprefix(ACPC_PREFIX).strip()
        if not sep or not name or not command:
            example = "caller='python sample_bots/python/calling_station.py'"
            raise BotSpecError(f"--bot {text!r}: expected NAME=COMMAND, e.g. {example} (an ACPC client: "
                               "NAME=acpc:COMMAND, started as COMMAND HOST PORT)")
        name, _, version = name.partition("@")
        return cls(name, command, version, acpc)

    @property
    def launch(self) -> str:
        """The shell command that starts the bot: its command, or the ACPC bridge that starts it."""
        return acpc_launch(self.command) if self.acpc else self.command


def host_environment(address: str, token: str, name: str) -> dict[str, str]:
    """The environment of an unsandboxed bot (``--no-sandbox``): the referee's, with the bot's address, token and
    name, and this Python first on ``PATH``."""
    env = dict(os.environ)
    for key in [k for k in env if k.startswith("ARENA_")]:
        del env[key]  # the referee's own settings (a seed, above all) never reach a bot
    env["ARENA_ADDRESS"] = address
    env["ARENA_TOKEN"] = token
    env["ARENA_BOT_NAME"] = name
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


TAIL_LINES = 20


class BotProcess:
    """One running bot process: sandboxed unless the policy says otherwise; its output goes to a log file (or is
    discarded). It is started in a session of its own, so that stopping it stops everything it started."""

    def __init__(self, spec: BotSpec, log_path: Path | None = None, sandbox: SandboxPolicy | None = None) -> None:
        self.spec = spec
        self.log_path = log_path
        self.policy = sandbox if sandbox is not None else SandboxPolicy()
        self.process: asyncio.subprocess.Process | None = None
        self._log: IO[bytes] | None = None
        self._box: BotSandbox | None = None
        self._watch: asyncio.Task[None] | None = None
        self.peak_memory_bytes = 0  # the most memory its cgroup held at once, read when it is stopped (0: unknown)
        self.limit_note = ""  # why arena ended it, when it went over a limit (its memory cap), kept past its cgroup
        self.ended_by_arena = False  # arena signalled it to stop: it did not exit on its own (not a crash)

    async def start(self, socket_path: Path, token: str, cwd: Path | None = None) -> None:
        """Launch the command, reaching the referee through the Unix-domain socket ``socket_path``."""
        workdir = (cwd or Path.cwd()).resolve()
        if self.log_path is not None:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            self._log = self.log_path.open("ab")
        output = self._log if self._log is not None else asyncio.subprocess.DEVNULL
        fds: tuple[int, ...] = ()
        if self.policy.enabled:
            box = self._box = BotSandbox(self.policy, socket_path, workdir)
            env = box.environment(token, self.spec.name)
            argv = box.argv(self.spec.launch, env, self.spec.command)
            fds = box.pass_fds
        else:
            argv = [sys.executable, "-m", "arena.runner.reaper", self.spec.launch]
            env = host_environment(f"unix:{socket_path}", token, self.spec.name)
        try:
            self.process = await asyncio.create_subprocess_exec(
                *argv, env=env, stdin=asyncio.subprocess.DEVNULL, stdout=output, stderr=output, cwd=workdir,
                start_new_session=True, pass_fds=fds,
            )
        finally:
            if self._box is not None:
                self._box.started()
        if self._box is not None and self._box.cgroup is not None:
            self._watch = asyncio.ensure_future(self._end_when_over_cap(self._box))

    async def _end_when_over_cap(self, box: BotSandbox, every_s: float = 0.1) -> None:
        """End the whole bot as soon as the kernel kills one of its processes for going over its memory cap (the
        kernel kills one process; a bot is ended whole), noting why in its log."""
        while self.process is not None and self.process.returncode is None:
            if box.end_note():
                self.limit_note = box.end_note()
                if self._log is not None:
                    self._log.write(f"\narena: {box.end_note()}\n".encode())
                    self._log.flush()
                if box.cgroup is not None:
                    box.cgroup.kill()
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                return
            await asyncio.sleep(every_s)

    @property
    def private_folder(self) -> Path | None:
        """The sandbox's private folder (its /tmp), deleted when the process is stopped; None unsandboxed."""
        return self._box.folder if self._box is not None else None

    @property
    def returncode(self) -> int | None:
        """The exit status once the process has ended."""
        return self.process.returncode if self.process is not None else None

    def tail(self, lines: int = TAIL_LINES) -> list[str]:
        """The last lines the bot wrote (stdout and stderr), if they were kept, and last arena's note of why it
        ended the bot, if it did (``arena: killed: exceeded its memory cap...``)."""
        note = self.limit_note or (self._box.end_note() if self._box is not None else "")
        text = ""
        if self.log_path is not None and self.log_path.exists():
            with self.log_path.open("rb") as f:
                f.seek(max(0, f.seek(0, os.SEEK_END) - 16384))
                text = f.read().decode("utf-8", "replace")
        if not note:
            return text.splitlines()[-lines:]
        note = f"arena: {note}"
        bot = [line for line in text.splitlines() if line.strip() and line != note][-(lines - 1):] if lines > 1 else []
        return [*bot, note]

    async def stop(self, grace_s: float = 5.0) -> int | None:
        """Let the bot exit on its own for ``grace_s`` (it should, after MatchEnd), then terminate it; either way
        end whatever is left of its process group and of its cgroup, and give back its sandbox."""
        process = self.process
        if process is None:
            if self._box is not None:
                self._box.cleanup()
            return None
        try:
            await asyncio.wait_for(process.wait(), grace_s)
        except TimeoutError:
            self.ended_by_arena = True
            for sig, wait in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 5.0)):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, sig)
                try:
                    await asyncio.wait_for(process.wait(), wait)
                    break
                except TimeoutError:
                    continue
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)  # children the bot left behind in its group
        if self._watch is not None:
            self._watch.cancel()
            self._watch = None
        if self._log is not None:
            self._log.close()
            self._log = None
        if self._box is not None:
            cgroup = self._box.cgroup
            if cgroup is not None:
                self.peak_memory_bytes = max(self.peak_memory_bytes, cgroup.peak_bytes())
                self.limit_note = self.limit_note or self._box.end_note()
            await asyncio.to_thread(self._box.cleanup)  # waits (briefly) for the kernel to let its cgroup go
        return process.returncode
