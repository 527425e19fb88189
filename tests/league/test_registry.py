"""Registered bots and API keys: a key is shown once, only its hash is kept, revoked and replaced keys fail."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from arena.records.db import Database
from arena.records.registry import KEY_PREFIX, Registry, RegistryError, key_hash


def registry(tmp_path: Path) -> Registry:
    return Registry(Database(tmp_path / "league.db"))


def test_a_key_authenticates_its_bot_and_only_its_hash_is_stored(tmp_path: Path) -> None:
    reg = registry(tmp_path)
    key = reg.add("alpha", owner="ann")
    other = reg.add("beta")
    assert key.startswith(KEY_PREFIX) and len(key) >= len(KEY_PREFIX) + 43  # 256 bits, URL-safe base64
    assert key != other
    bot = reg.authenticate(key)
    assert bot is not None and bot.name == "alpha" and bot.owner == "ann"
    assert reg.authenticate(other) is not None and reg.authenticate(other).name == "beta"  # type: ignore[union-attr]
    raw = b"".join(f.read_bytes() for f in tmp_path.glob("league.db*"))  # the file and its write-ahead log
    assert key.encode() not in raw and key_hash(key).encode() in raw
    dump = "\n".join(sqlite3.connect(tmp_path / "league.db").iterdump())
    assert key not in dump


@pytest.mark.parametrize("wrong", ["", "arena_", "not-a-key", "arena_" + "A" * 43, "x" * 10_000])
def test_wrong_keys_are_refused(tmp_path: Path, wrong: str) -> None:
    reg = registry(tmp_path)
    key = reg.add("alpha")
    assert reg.authenticate(wrong) is None
    assert reg.authenticate(key[:-1]) is None
    assert reg.authenticate(key + "x") is None


def test_revoke_and_rotate(tmp_path: Path) -> None:
    reg = registry(tmp_path)
    key = reg.add("alpha")
    assert reg.revoke("alpha").revoked_at is not None
    assert reg.authenticate(key) is None
    new = reg.rotate("alpha")
    assert reg.authenticate(new) is not None and reg.authenticate(key) is None
    assert reg.get("alpha").active


def test_mistakes_are_named(tmp_path: Path) -> None:
    reg = registry(tmp_path)
    reg.add("alpha")
    with pytest.raises(RegistryError, match="registered already"):
        reg.add("alpha")
    with pytest.raises(RegistryError, match=r"no registered bot 'gamma'.*registered: alpha"):
        reg.revoke("gamma")
    for bad in ("", "a b", "x@1", "-lead", "é", "a" * 65):
        with pytest.raises(RegistryError, match="bot name"):
            reg.add(bad)
