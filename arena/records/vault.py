"""Seeds that are not published yet, kept beside the database where no bot can read them.

A match's seed fixes every card, so until the match is over it lives only in the referee's memory and in this file:
``<database>.seeds``, JSON, mode 0600 (only the referee's user may read it), never bound into a bot's sandbox.
The database holds the seed's commitment from the start and the seed itself once the match is over (``Database``
moves it there). ``--resume`` reads the seed back from here.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path


class VaultError(RuntimeError):
    """The seed file exists but cannot be read or written."""


class SeedVault:
    """A small key-value file of secret seeds (match ids and tournament names as keys)."""

    def __init__(self, database: Path) -> None:
        self.path = database.with_name(database.name + ".seeds")

    def _load(self) -> dict[str, str]:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise VaultError(f"cannot read the seed file {self.path}: {exc}") from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            raise VaultError(f"the seed file {self.path} is damaged (not JSON)") from None
        if not isinstance(data, dict):
            raise VaultError(f"the seed file {self.path} is damaged (not a JSON object)")
        return {str(k): str(v) for k, v in data.items()}

    def _save(self, data: dict[str, str]) -> None:
        if not data:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
            return
        fd, tmp = tempfile.mkstemp(prefix=self.path.name + ".", dir=self.path.parent)
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f, indent=1, sort_keys=True)
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise

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
