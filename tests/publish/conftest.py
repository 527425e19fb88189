"""A published site of a small real database, shared by the publish tests (built once per session)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from arena.publish import PublishResult, publish
from arena.records.db import Database
from tests.publish.helpers import sample_database

TITLE = "Test arena <&> leaderboard"


@dataclass(frozen=True)
class Site:
    """The sample database and the site published from it."""

    db: Database
    out: Path
    result: PublishResult


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    root = tmp_path_factory.mktemp("publish")
    db = sample_database(root / "arena.db")
    out = root / "site"
    return Site(db, out, publish(db, out, TITLE))
