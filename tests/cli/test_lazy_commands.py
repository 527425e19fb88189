"""The ``arena`` group imports a subcommand's module only when that subcommand runs: every registered name leads to
its command, and a command that needs no plotting, templating, web server or gRPC does not load them (each ``arena``
process starts that much faster)."""

from __future__ import annotations

import subprocess
import sys

import click
import pytest

from arena.cli import COMMANDS, main

HEAVY = ("matplotlib", "jinja2", "aiohttp", "grpc", "ray")


def loaded_after(*args: str) -> set[str]:
    """The heavy libraries a fresh interpreter has imported after ``arena ARGS``."""
    code = ("import sys\nfrom arena.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            f"print('loaded:', *(m for m in {HEAVY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True, timeout=60)
    return set(out.stdout.splitlines()[-1].split()[1:])


def test_every_registered_name_leads_to_its_command() -> None:
    ctx = click.Context(main)
    assert main.list_commands(ctx) == sorted(COMMANDS)
    for name in COMMANDS:
        command = main.get_command(ctx, name)
        assert isinstance(command, click.Command) and command.name == name, name
    assert main.get_command(ctx, "no-such-command") is None


@pytest.mark.parametrize("args", [("--version",), ("bots", "list", "--help"), ("verify", "--help"),
                                  ("export", "--help"), ("leaderboard", "--help"),
                                  ("acpc-bridge", "--help")])
def test_commands_that_need_no_heavy_library_do_not_load_one(args: tuple[str, ...]) -> None:
    assert loaded_after(*args) == set()


def test_the_positive_control_sees_a_heavy_library_loaded() -> None:
    assert "jinja2" in loaded_after("publish", "--help")
    assert "aiohttp" in loaded_after("host", "--help")
