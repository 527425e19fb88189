"""A league's registered bots and their API keys (``arena bots add|list|revoke|rotate``, ``arena host``).

A key is 256 random bits, shown once when it is issued; only its SHA-256 is stored. A key is checked by the hash of
what was presented, compared in constant time with the stored one, so neither the database nor the timing of a
refusal tells anything about a valid key. A revoked bot's key is refused from then on; rotating issues a new key
and the old one stops working at once.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import sqlite3
import time
from dataclasses import dataclass

from arena.records.codec import decode, stamp
from arena.records.db import Database
from arena.text import TextLimitError, check_length

KEY_PREFIX = "arena_"  # says what the secret is when it turns up in a log or a shell history
KEY_BYTES = 32  # 256 bits
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class RegistryError(ValueError):
    """A registry request that cannot be done: the message says why (an unknown bot, a name taken, a bad name)."""


@dataclass(frozen=True, slots=True)
class RegisteredBot:
    """A bot of a league: its name (its identity on the leaderboard), its owner, and whether its key works."""

    name: str
    owner: str
    created_at: float
    key_issued_at: float
    revoked_at: float | None

    @property
    def active(self) -> bool:
        """Whether its key is accepted."""
        return self.revoked_at is None


def new_key() -> str:
    """A fresh API key: the prefix and 256 random bits, URL-safe."""
    return KEY_PREFIX + secrets.token_urlsafe(KEY_BYTES)


def key_hash(key: str) -> str:
    """What is stored of a key (its SHA-256, hex): a 256-bit random key needs no slow hash."""
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def _bot(row: sqlite3.Row) -> RegisteredBot:
    bot: RegisteredBot = decode("a registered bot", "registered_bots", None, lambda: RegisteredBot(
        str(row["name"]), str(row["owner"]), stamp(row["created_at"]), stamp(row["key_issued_at"]),
        None if row["revoked_at"] is None else stamp(row["revoked_at"])))
    return bot


class Registry:
    """The registered bots of one league database."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def add(self, name: str, owner: str = "") -> str:
        """Register a bot and return its key (the only time it is shown). Its name and owner are capped as
        everywhere (``arena.text``): 64 characters each."""
        try:
            check_length(name, "name", "bot name")
            check_length(owner, "owner", "owner")
        except TextLimitError as exc:
            raise RegistryError(str(exc)) from None
        if not NAME.match(name):
            raise RegistryError(f"bot name {name!r}: use 1 to 64 letters, digits, '.', '_' or '-', starting with a "
                                "letter or digit")
        key = new_key()
        now = time.time()
        with self.db.transaction():
            if self.db.row("registered_bots", "SELECT 1 FROM registered_bots WHERE name = ?", (name,)):
                raise RegistryError(f"a bot named {name!r} is registered already (arena bots rotate {name} issues "
                                    "it a new key)")
            self.db.write("registered_bots", "INSERT INTO registered_bots(name, owner, key_hash, created_at,"
                          " key_issued_at) VALUES (?, ?, ?, ?, ?)", (name, owner, key_hash(key), now, now))
        return key

    def get(self, name: str) -> RegisteredBot:
        """One registered bot (a ``RegistryError`` if there is none of that name)."""
        row = self.db.row("registered_bots", "SELECT * FROM registered_bots WHERE name = ?", (name,))
        if row is None:
            known = ", ".join(b.name for b in self.list()) or "none yet (arena bots add NAME)"
            raise RegistryError(f"no registered bot {name!r} in {self.db.path} (registered: {known})")
        return _bot(row)

    def list(self) -> list[RegisteredBot]:
        """Every registered bot, by name."""
        return [_bot(r) for r in self.db.rows("registered_bots", "SELECT * FROM registered_bots ORDER BY name")]

    def revoke(self, name: str) -> RegisteredBot:
        """Refuse the bot's key from now on (its results stay)."""
        self.get(name)
        with self.db.transaction():
            self.db.write("registered_bots", "UPDATE registered_bots SET revoked_at = ? WHERE name = ? AND revoked_at"
                          " IS NULL", (time.time(), name))
        return self.get(name)

    def rotate(self, name: str) -> str:
        """Issue the bot a new key (the old one stops working; a revoked bot is active again)."""
        self.get(name)
        key = new_key()
        with self.db.transaction():
            self.db.write("registered_bots", "UPDATE registered_bots SET key_hash = ?, key_issued_at = ?, revoked_at ="
                          " NULL WHERE name = ?", (key_hash(key), time.time(), name))
        return key

    def authenticate(self, key: str) -> RegisteredBot | None:
        """The active bot whose key this is, or None. The lookup is by the key's hash (a random 256-bit key's hash
        reveals nothing by its position in an index), and the stored hash is compared in constant time."""
        if not key.startswith(KEY_PREFIX) or len(key) > 200:
            return None
        presented = key_hash(key)
        row = self.db.row("registered_bots", "SELECT * FROM registered_bots WHERE key_hash = ?", (presented,))
        if row is None or not hmac.compare_digest(str(row["key_hash"]), presented):
            return None
        bot = _bot(row)
        return bot if bot.active else None
