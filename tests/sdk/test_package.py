"""The SDK is a light package of its own: it declares only grpcio and protobuf, and what they need in turn brings
none of the referee's dependencies. The real install into a fresh virtual environment takes about 20 s, too long for
the suite: ``make sdk-check`` does it (tests/bench/bench_sdk.py)."""

from __future__ import annotations

import importlib.metadata
import tomllib

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.sdk.helpers import REFEREE_DEPENDENCIES, REPO


def _name(requirement: str) -> str:
    return canonicalize_name(Requirement(requirement).name)


def installed_closure(distribution: str) -> set[str]:
    """Every distribution ``distribution`` needs, transitively, as installed here: the requirements whose markers
    hold for this Python, without extras."""
    seen: set[str] = set()
    todo = [distribution]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for text in importlib.metadata.requires(name) or ():
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(canonicalize_name(requirement.name))
    return seen


def test_the_sdk_declares_only_grpcio_and_protobuf_and_is_installed_as_declared() -> None:
    project = tomllib.loads((REPO / "proto" / "python" / "pyproject.toml").read_text())["project"]
    assert project["name"] == "arena-sdk"
    assert {_name(r) for r in project["dependencies"]} == {"grpcio", "protobuf"}
    assert sorted(importlib.metadata.requires("arena-sdk") or []) == sorted(project["dependencies"])


def test_nothing_the_sdk_needs_is_a_plotting_templating_rating_or_cluster_library() -> None:
    closure = installed_closure("arena-sdk")
    assert closure & REFEREE_DEPENDENCIES == set(), closure
    assert "arena" not in closure
    referee = installed_closure("arena")  # positive control: the same walk finds the referee's
    assert {"matplotlib", "jinja2", "trueskill"} <= referee & REFEREE_DEPENDENCIES


def test_arena_depends_on_the_sdk() -> None:
    assert "arena-sdk" in {_name(r) for r in importlib.metadata.requires("arena") or []}
