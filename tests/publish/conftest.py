"""A published site of a small real database, shared by the publish tests (built once per session)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from arena.publish import PublishResult, publish
from arena.ratings.sprt import Sprt, SprtParams
from arena.records.db import Database
from tests.publish.helpers import SAMPLE_RULES, compare, folder, raiser, sample_database

TITLE = "Test arena <&> leaderboard"
BLOCK = 10
"""Hands a data file of the sample site holds: small, so that its matches span several files (the viewer then
loads another file to go to the next hand, or to show a deal's hands beside it: three-way's deal 3 is hands 9 to
11); a real site has 1,000 (arena.publish.match_data.BLOCK_HANDS)."""


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
    return Site(db, out, publish(db, out, TITLE, rules=SAMPLE_RULES, block_hands=BLOCK))


@dataclass(frozen=True)
class Compared:
    """A database holding one comparison (raiser against folder, decided for the raiser), and its site."""

    db: Database
    out: Path
    result: PublishResult
    test: Sprt


@pytest.fixture(scope="session")
def compared(tmp_path_factory: pytest.TempPathFactory) -> Compared:
    root = tmp_path_factory.mktemp("compared")
    db = Database(root / "arena.db")
    test = compare(db, "cmp-1", ("raiser", raiser), ("folder", folder), 200, SprtParams(mbb1=200.0, min_sessions=8))
    out = root / "site"
    return Compared(db, out, publish(db, out, TITLE), test)
