"""The bots tests start, as command lines: the C++ sample bot in its three styles (the cheapest real bots: a compiled
binary starts in milliseconds and answers in microseconds), and the Python sample bots for the tests whose point is
the Python SDK or the sample bots themselves.

A test that only needs *a* bot at a seat (a calling station, a seeded random opponent, a player with a plan) uses the
C++ one: each Python bot start costs about 0.14 s of CPU (importing grpc and protobuf) and the equity bot about 1 ms a
decision, which over the suite's ~900 starts was a sixth of its CPU.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CPP_BOT = REPO / "sample_bots" / "cpp" / "build" / "arena-cpp-bot"
PYTHON_BOTS = REPO / "sample_bots" / "python"


def cpp(style: str = "sample", seed: int | None = None, think_ms: int = 0) -> str:
    """The C++ sample bot's command: ``sample`` (its strategy), ``call`` (a calling station) or ``random`` (seeded);
    ``think_ms`` before each message's answers."""
    if not CPP_BOT.exists():
        pytest.fail(f"the C++ sample bot is not built ({CPP_BOT}): run make install")
    args = [str(CPP_BOT)] + ([] if style == "sample" else ["--strategy", style])
    if seed is not None:
        args += ["--seed", str(seed)]
    if think_ms:
        args += ["--think-ms", str(think_ms)]
    return shlex.join(args)


def caller() -> str:
    """A calling station (the C++ bot's ``call`` style)."""
    return cpp("call")


def random_bot(seed: int, think_ms: int = 0) -> str:
    """A seeded random bot (the C++ bot's ``random`` style): the same answers to the same requests in every run."""
    return cpp("random", seed, think_ms)


def python_bot(script: str, *args: str) -> str:
    """A Python sample bot's command (``equity_bot.py``, ``calling_station.py``, ``random_bot.py``) with its args."""
    return shlex.join([sys.executable, str(PYTHON_BOTS / script), *args])
