"""Shared test settings: where the conformance hand histories are (``../shared`` beside the repository)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

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
