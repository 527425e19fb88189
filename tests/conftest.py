"""Shared test settings: where the conformance hand histories are (``../shared`` beside the repository), and how
the workers share the suite (``tests.parallel``)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.parallel import turns

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("ARENA_SHARED", REPO.parent / "shared"))
CONFORMANCE = SHARED / "conformance" / "phh"


@pytest.fixture(scope="session")
def conformance() -> Path:
    """The conformance folder; in CI its absence is an error, elsewhere the tests that need it are skipped."""
    if not CONFORMANCE.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"conformance hands not found at {CONFORMANCE} (set ARENA_SHARED)")
        pytest.skip(f"conformance hands not found at {CONFORMANCE}")
    return CONFORMANCE


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[object]:
    """A test marked ``alone`` runs while no other worker runs a test (see tests.parallel)."""
    lock = turns(item.config)
    if lock is None:
        return (yield)
    with lock.turn(item.get_closest_marker("alone") is not None):
        return (yield)
