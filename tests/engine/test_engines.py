"""Which engine ``arena.engine.Hand`` is: the compiled core unless ARENA_ENGINE=python selects the reference."""

from __future__ import annotations

import os
import subprocess
import sys
import tracemalloc

import pytest

from arena.engine import (
    ENGINE_VARIABLE,
    ActionKind,
    AnteMode,
    ConfigError,
    IllegalActionError,
    RuleError,
    TableConfig,
    hand_class,
)
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


def test_the_compiled_engine_keeps_no_memory_of_refused_actions_or_finished_hands() -> None:
    """Reference counting in C: 300 hands with refused actions, errors, copies and every attribute read leave nothing
    behind (an error text leaked a refusal, as once, is about 0.5 MB here)."""
    compiled = hand_class("compiled")
    config = TableConfig(ante=10, ante_mode=AnteMode.EACH)
    refused = 0

    def play(hands: int) -> list[object]:
        nonlocal refused
        seen: list[object] = []
        for number in range(hands):
            hand = compiled(config, [3000, 2000, 1000], list(range(52)), button=number % 3, entry_blinds=[1])
            while hand.to_act is not None:
                seat = hand.to_act
                for bad in ((seat, ActionKind.RAISE, -5), ((seat + 1) % 3, ActionKind.CALL, 0), (seat, 99, 0),
                            (seat, ActionKind.RAISE, "x"), (seat, ActionKind.RAISE, 10**9)):
                    try:
                        hand.apply(*bad)
                    except IllegalActionError:
                        refused += 1
                seen = [hand.copy(), hand.pots(), hand.events, repr(hand), hand.legal_actions()]
                hand.apply(seat, ActionKind.CALL if hand.legal_actions().call_amount else ActionKind.CHECK)
            seen = [hand.shown, hand.hand_values, hand.payoffs, hand.hole]
            try:
                compiled(config, [1, "x"], list(range(52)))
            except RuleError:
                refused += 1
        return seen

    play(30)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        play(300)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert refused > 8000
    assert grown < 50_000, f"{grown:,} bytes kept after 300 hands"
