"""Matches with ACPC clients behind the bridge, as real processes: the client of ``acpc_client.py`` (or any command),
each behind ``python -m arena.adapters.acpc``, against each other or arena bots."""

from __future__ import annotations

import asyncio
import shlex
import sys
from collections.abc import Callable
from pathlib import Path

from arena.adapters.acpc.gamedef import read_game, table_of
from arena.referee import ClockPolicy, HandRecord, MatchResult, MatchSpec
from arena.runner.bots import BotSpec
from arena.runner.remote_match import run_local_match
from arena.runner.sandbox import SandboxPolicy
from tests.bots import caller

HERE = Path(__file__).resolve().parent
GAMES = HERE / "games"
CLIENT = HERE / "acpc_client.py"
ROOT = HERE.parents[1]
PYTHON = shlex.quote(sys.executable)
NL2, FL2 = GAMES / "holdem.nolimit.2p.reverse_blinds.game", GAMES / "holdem.limit.2p.reverse_blinds.game"
NL3, FL3 = GAMES / "holdem.nolimit.3p.game", GAMES / "holdem.limit.3p.game"
CALLER = caller()  # the arena bot beside the bridged clients: the C++ calling station


def client(game: Path, strategy: str = "random", seed: int = 1, extra: str = "") -> str:
    """The command of the test's ACPC client (HOST PORT are appended by the bridge)."""
    return f"{PYTHON} {shlex.quote(str(CLIENT))} --strategy {strategy} --seed {seed} {extra} {shlex.quote(str(game))}"


def bridged(name: str, command: str, transcript: str = "", game: Path | None = None) -> BotSpec:
    """A bot that is an ACPC client behind the bridge, as the runner would start it (``transcript``: a path the
    shell expands, e.g. with ``$$`` for one file per process)."""
    options = f"--transcript {transcript} " if transcript else ""
    options += f"--game {shlex.quote(str(game))} " if game else ""
    return BotSpec(name, f"{PYTHON} -m arena.adapters.acpc {options}-- {command}")


def spec_for(game: Path, hands: int, match_id: str = "acpc", policy: ClockPolicy | None = None) -> MatchSpec:
    """A duplicate match of ``game``'s table (stakes, structure, stack)."""
    table = table_of(read_game(game))
    return MatchSpec(match_id, f"seed-{match_id}", hands, config=table.config(), starting_stack=table.stack,
                     policy=policy or ClockPolicy())


def play(spec: MatchSpec, bots: list[BotSpec], log_dir: Path,
         on_hand: Callable[[HandRecord], None] | None = None) -> MatchResult:
    """Play the match unsandboxed (the sandbox's own tests are elsewhere; here the protocol is under test)."""
    return asyncio.run(run_local_match(spec, bots, sandbox=SandboxPolicy(enabled=False), log_dir=log_dir,
                                       cwd=ROOT, on_hand=on_hand))
