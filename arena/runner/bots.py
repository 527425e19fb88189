"""Local bots as subprocesses: each gets the referee's address and its own token through its environment.

A bot command is run by the shell, in its own process group (so a bot that starts children is stopped whole),
with ``ARENA_ADDRESS``, ``ARENA_TOKEN`` and ``ARENA_BOT_NAME`` set, and with the directory of the running Python
first on ``PATH`` so that ``python`` in a command is the interpreter arena runs in.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO


class BotSpecError(ValueError):
    """A ``--bot`` argument that is not ``NAME=COMMAND``."""


@dataclass(frozen=True, slots=True)
class BotSpec:
    """A bot to launch: its display name, the shell command that starts it, and an optional version."""

    name: str
    command: str
    version: str = ""

    @classmethod
    def parse(cls, text: str) -> BotSpec:
        """``NAME=COMMAND`` (the name may carry a version: ``NAME@VERSION=COMMAND``)."""
        name, sep, command = text.partition("=")
        name = name.strip()
        if not sep or not name or not command.strip():
            example = "caller='python sample_bots/python/calling_station.py'"
            raise BotSpecError(f"--bot {text!r}: expected NAME=COMMAND, e.g. {example}")
        name, _, version = name.partition("@")
        return cls(name, command.strip(), version)


def bot_environment(address: str, token: str, name: str) -> dict[str, str]:
    """The environment a bot process starts with."""
    env = dict(os.environ)
    env["ARENA_ADDRESS"] = address
    env["ARENA_TOKEN"] = token
    env["ARENA_BOT_NAME"] = name
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


class BotProcess:
    """One running bot; its output goes to a log file (or is discarded)."""

    def __init__(self, spec: BotSpec, log_path: Path | None = None) -> None:
        self.spec = spec
        self.log_path = log_path
        self.process: asyncio.subprocess.Process | None = None
        self._log: IO[bytes] | None = None

    async def start(self, address: str, token: str, cwd: Path | None = None) -> None:
        """Launch the command with the referee's address and this bot's token."""
        if self.log_path is not None:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            self._log = self.log_path.open("ab")
        output = self._log if self._log is not None else asyncio.subprocess.DEVNULL
        self.process = await asyncio.create_subprocess_shell(
            self.spec.command,
            env=bot_environment(address, token, self.spec.name),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=output,
            stderr=output,
            cwd=cwd,
            start_new_session=True,
        )

    @property
    def returncode(self) -> int | None:
        """The exit status once the process has ended."""
        return self.process.returncode if self.process is not None else None

    async def stop(self, grace_s: float = 5.0) -> int | None:
        """Let the bot exit on its own for ``grace_s`` (it should, after MatchEnd), then terminate it."""
        process = self.process
        if process is None:
            return None
        try:
            await asyncio.wait_for(process.wait(), grace_s)
        except TimeoutError:
            for sig, wait in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 5.0)):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, sig)
                try:
                    await asyncio.wait_for(process.wait(), wait)
                    break
                except TimeoutError:
                    continue
        if self._log is not None:
            self._log.close()
        return process.returncode
