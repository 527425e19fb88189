"""Shared test settings: where the conformance hand histories are (``../shared`` beside the repository), and how
the workers share the suite (``tests.parallel``)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena_sdk.grpc_tuning import import_grpc
from tests import parallel
from tests.publish.chromium import CHROMIUM, Chromium

import_grpc()  # the whole suite's own process on the referee's gRPC (arena_sdk.grpc_tuning; bots in their own)

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


@pytest.fixture(scope="session")
def chromium() -> Iterator[Chromium]:
    """Debian's headless Chromium, one per test worker (started on its first page, quit at the session's end).
    Skipped on a developer machine without /usr/bin/chromium; in CI (``CI`` set) a missing browser is a failure."""
    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing: CI must install Debian's chromium (apt-get install -y chromium)")
        pytest.skip(f"{CHROMIUM} is missing (apt-get install -y chromium); in CI this test fails instead")
    browser = Chromium(CHROMIUM)
    yield browser
    browser.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[object]:
    """A test marked ``alone`` runs while no other worker runs a test, one marked ``foreground`` gets the CPU first
    (see tests.parallel)."""
    with parallel.turn_for(item):
        return (yield)


def pytest_configure(config: pytest.Config) -> None:
    """The run's files timed for the next run's order, where every report is seen (see tests.parallel)."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        config.pluginmanager.register(parallel.Stopwatch(), "arena-stopwatch")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Files longest first, those with an ``alone`` test near the end (see tests.parallel)."""
    parallel.order(items, parallel.known_seconds(config))


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The run's foreground cgroup removed by the last worker to finish."""
    lock = parallel.turns(session.config)
    if lock is not None:
        lock.close()
