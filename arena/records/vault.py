"""Seeds that are not published yet, kept beside the database where no bot can read them.

A match's seed fixes every card, so until the match is over it lives only in the referee's memory and in this file:
``<database>.seeds``, JSON, mode 0600 (only the referee's user may read it), never bound into a bot's sandbox.
The database holds the seed's commitment from the start and the seed itself once the match is over (``Database``
moves it there). ``--resume`` reads the seed back from here.

The file is rewritten in place, never replaced or deleted: where it lies in a folder a sandbox binds, the sandbox
covers it by binding an empty file over its path, and a file renamed over that path (an atomic replace) or made
anew would show through in every sandbox already running, where a bot run by the referee's own user could read
it. A torn write cannot lose the seeds: each change is written in full to the backup ``<database>.seeds.bak``
first (also in place), then to the file, and a file that does not parse is read from its backup.
"""

from __future__ import annotations

import json
import os
from pathlib import Path


class VaultError(RuntimeError):
    """The seed file exists but cannot be read or written."""


class SeedVault:
    """A small key-value file of secret seeds (match ids and tournament names as keys)."""

    def __init__(self, database: Path) -> None:
        self.path = database.with_name(database.name + ".seeds")
        self.backup = database.with_name(database.name + ".seeds.bak")

    @property
    def files(self) -> tuple[Path, Path]:
        """The vault's files, to hide from the bots."""
        return self.path, self.backup

    @staticmethod
    def _parse(path: Path) -> dict[str, str] | None:
        """The seeds in ``path``; {} if it does not exist; None if it is damaged."""
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except UnicodeDecodeError:  # bytes that are not text: as damaged as a torn write
            return None
        except OSError as exc:
            raise VaultError(f"cannot read the seed file {path}: {exc}") from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            return None
        if not isinstance(data, dict):
            return None
        return {str(k): str(v) for k, v in data.items()}

    def _load(self) -> dict[str, str]:
        data = self._parse(self.path)
        if data is None:  # cut off in the middle of a write: the backup has the whole of it
            data = self._parse(self.backup)
        if data is None:
            raise VaultError(f"the seed file {self.path} and its backup are damaged (not a JSON object)")
        return data

    @staticmethod
    def _write(path: Path, text: bytes) -> None:
        """Write ``text`` over ``path`` in place (the same file, so a cover bound over it stays in place)."""
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            os.fchmod(fd, 0o600)
            os.ftruncate(fd, 0)
            view = memoryview(text)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)

    def _save(self, data: dict[str, str]) -> None:
        text = json.dumps(data, indent=1, sort_keys=True).encode("utf-8")
        for path in (self.backup, self.path):  # the backup first: a torn write of the file leaves it whole
            try:
                self._write(path, text)
            except OSError as exc:
                raise VaultError(f"cannot write the seed file {path}: {exc}") from None

    def get(self, key: str) -> str | None:
        """The seed kept under ``key``, if any."""
        return self._load().get(key)

    def put(self, key: str, seed: str) -> None:
        """Keep ``seed`` under ``key``."""
        data = self._load()
        if data.get(key) != seed:
            data[key] = seed
            self._save(data)

    def pop(self, key: str) -> str | None:
        """Forget the seed under ``key`` (it is being published); return it."""
        data = self._load()
        seed = data.pop(key, None)
        if seed is not None:
            self._save(data)
        return seed
