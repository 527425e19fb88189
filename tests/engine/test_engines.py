"""Which engine ``arena.engine.Hand`` is: the compiled core unless ARENA_ENGINE=python selects the reference."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from arena.engine import ENGINE_VARIABLE, ConfigError, TableConfig, hand_class
from arena.engine import hand as reference


def hand_module(value: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != ENGINE_VARIABLE}
    if value is not None:
        env[ENGINE_VARIABLE] = value
    code = "import arena.engine; print(arena.engine.Hand.__module__)"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)


@pytest.mark.parametrize(("value", "module"), [(None, "arena.engine._core"), ("", "arena.engine._core"),
                                               ("compiled", "arena.engine._core"), ("python", "arena.engine.hand")])
def test_the_variable_selects_the_engine(value: str | None, module: str) -> None:
    assert hand_module(value).stdout.strip() == module


def test_an_unknown_engine_is_refused_by_name() -> None:
    proc = hand_module("pypy")
    assert proc.returncode != 0 and "ARENA_ENGINE must be one of compiled, python; got 'pypy'" in proc.stderr


def test_hand_class_names_either_engine() -> None:
    assert hand_class("python") is reference.Hand
    assert hand_class("compiled").__module__ == "arena.engine._core"
    with pytest.raises(ValueError, match="unknown engine"):
        hand_class("rust")


def test_the_compiled_engine_refuses_stacks_beyond_its_64_bit_chips() -> None:
    deck = list(range(52))
    big = 2**53 + 1
    reference.Hand(TableConfig(), [big, 1000], deck)  # the reference takes any size
    with pytest.raises(ConfigError, match=r"R11\.1: seat 0: the compiled engine takes stacks up to 2\*\*53"):
        hand_class("compiled")(TableConfig(), [big, 1000], deck)
    hand_class("compiled")(TableConfig(), [2**53, 2**53], deck)
