"""gRPC's experiments that the referee and the SDK's bots turn off (``arena_sdk.grpc_tuning``): set for gRPC's own
import in every process that serves or plays, never left in the environment a bot or any other child inherits, and
never over a user's own setting."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from arena_sdk import grpc_tuning

REPO = Path(__file__).resolve().parents[2]

# what a fresh process reports once the module is imported: the experiments it turned off, whether it turned gRPC's
# fork support off, whether gRPC is loaded at all, and what the environment holds afterwards
PROBE = """
import importlib, json, os, sys
importlib.import_module(sys.argv[1])
if sys.argv[1] == "arena_sdk":
    from arena_sdk import run  # a bot's way in
from arena_sdk import grpc_tuning
print(json.dumps([grpc_tuning.applied, grpc_tuning.fork_support_off, "grpc" in sys.modules,
                  os.environ.get("GRPC_EXPERIMENTS"), os.environ.get("GRPC_ENABLE_FORK_SUPPORT")]))
"""


def probe(module: str, env: dict[str, str] | None = None) -> tuple[str, bool, bool, str | None, str | None]:
    """Import ``module`` first thing in a new interpreter: (the experiments it turned off, whether it turned gRPC's
    fork support off, gRPC loaded, GRPC_EXPERIMENTS and GRPC_ENABLE_FORK_SUPPORT afterwards)."""
    base = {k: v for k, v in os.environ.items() if k not in (grpc_tuning.VARIABLE, grpc_tuning.FORK_VARIABLE)}
    done = subprocess.run([sys.executable, "-c", PROBE, module], capture_output=True, text=True, cwd=REPO,
                          env={**base, **(env or {})}, timeout=60, check=True)
    applied, fork_off, loaded, left, fork_left = json.loads(done.stdout.strip().splitlines()[-1])
    return applied, fork_off, loaded, left, fork_left


@pytest.mark.skipif(not grpc_tuning._measured_release(), reason="a grpcio release these were not measured on")
@pytest.mark.parametrize("module", ["arena.cli.match", "arena.cli.tournament", "arena.cli.host", "arena.cli.demo",
                                    "arena.runner.match_worker"])
def test_every_process_that_serves_loads_grpc_tuned_and_leaves_no_trace(module: str) -> None:
    """A referee (a match, a tournament, a league host, the demo, a Ray node's match worker) loads gRPC with the
    server's experiments turned off and its fork support as it is (it starts its bots), and nothing a child process
    could inherit is left behind."""
    assert probe(module) == (grpc_tuning.EXPERIMENTS, False, True, None, None)


@pytest.mark.skipif(not grpc_tuning._measured_release(), reason="a grpcio release these were not measured on")
def test_a_bot_loads_grpc_without_fork_support_and_with_the_bots_experiments() -> None:
    """A bot of the SDK loads gRPC without fork support (its children never touch gRPC: tests/sdk/test_forking_bot)
    and with ``event_engine_client`` off too, which is safe only then; nothing is left for its children."""
    assert probe("arena_sdk") == (grpc_tuning.BOT_EXPERIMENTS, True, True, None, None)
    assert "-event_engine_client" in grpc_tuning.BOT_EXPERIMENTS.split(",")
    assert "-event_engine_client" not in grpc_tuning.EXPERIMENTS.split(",")


@pytest.mark.skipif(not grpc_tuning._measured_release(), reason="a grpcio release these were not measured on")
@pytest.mark.parametrize("off", ["0", "false", "No"])
def test_a_bot_whose_user_turned_fork_support_off_gets_the_bots_experiments(off: str) -> None:
    """The user's own GRPC_ENABLE_FORK_SUPPORT, any value gRPC reads as off, is kept and counts as off."""
    assert probe("arena_sdk", {grpc_tuning.FORK_VARIABLE: off}) == (grpc_tuning.BOT_EXPERIMENTS, False, True, None, off)


@pytest.mark.skipif(not grpc_tuning._measured_release(), reason="a grpcio release these were not measured on")
def test_a_bot_whose_user_keeps_fork_support_keeps_event_engine_client() -> None:
    """A user's own GRPC_ENABLE_FORK_SUPPORT is kept; with fork support on, ``event_engine_client`` is not turned
    off (the two together let a forked child write on the bot's socket)."""
    assert probe("arena_sdk", {grpc_tuning.FORK_VARIABLE: "1"}) == (grpc_tuning.EXPERIMENTS, False, True, None, "1")


def test_a_user_s_own_setting_is_kept_as_it_is() -> None:
    """GRPC_EXPERIMENTS set by the user is theirs: gRPC reads it unchanged and it stays in the environment."""
    assert probe("arena.cli.match", {grpc_tuning.VARIABLE: "-event_engine_client"}) == (
        "", False, True, "-event_engine_client", None)


def test_commands_that_serve_nothing_do_not_load_grpc() -> None:
    """The results side (a leaderboard) still starts without gRPC."""
    assert probe("arena.cli.leaderboard") == ("", False, False, None, None)


def test_an_unmeasured_grpcio_release_gets_nothing_set(monkeypatch: pytest.MonkeyPatch) -> None:
    """For a release whose experiments were not measured here nothing is set (an unknown name makes gRPC log an
    error as it loads); an unreadable version counts as unmeasured."""
    for version in ("1.84.2", "1.99.0", "2.0.0", "not a version", ""):
        monkeypatch.setattr(grpc_tuning, "installed_version", lambda v=version: v)
        assert not grpc_tuning._measured_release(), version
    monkeypatch.setattr(grpc_tuning, "installed_version", lambda: "1.85.3")
    assert grpc_tuning._measured_release()


def test_the_version_read_without_loading_grpc_is_grpcio_s_own() -> None:
    """What is read from the file is what the installed grpcio's metadata says."""
    from importlib import metadata

    assert grpc_tuning.installed_version() == metadata.version("grpcio")
