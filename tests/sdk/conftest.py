"""Fixtures of the SDK tests: a clean environment (no ARENA_* variables) and a running fake referee."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.sdk.fake_referee import FakeReferee


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests set the ARENA_* variables they need themselves."""
    for name in ("ARENA_ADDRESS", "ARENA_TOKEN", "ARENA_BOT_NAME", "ARENA_TLS_CA", "ARENA_BOT_SEED", "ARENA_RECONNECT",
                 "ARENA_RECONNECT_S"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def referee() -> Iterator[FakeReferee]:
    """A fake referee with the default script, already serving; ``referee.address`` is where."""
    ref = FakeReferee()
    ref.start()
    yield ref
    ref.stop()
