"""Helpers for the SDK tests: hand-made ActionRequests, random legal situations, loading the sample bots."""

from __future__ import annotations

import importlib.util
import os
import random
import re
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from arena.cards import format_card, parse_cards
from arena_sdk.pb import bot_pb2, poker_pb2

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_bots" / "python"
REFEREE_DEPENDENCIES = frozenset({"matplotlib", "jinja2", "trueskill", "trueskillthroughtime", "ray", "rich", "click",
                                  "aiohttp"})
"""Distributions (and modules of the same name) the referee needs and a bot's install must not (the SDK's
pyproject.toml asks only for grpcio and protobuf)."""


def load_sample(name: str) -> ModuleType:
    """Import ``sample_bots/python/<name>.py`` as a module (the folder is not a package)."""
    module_name = f"sample_bot_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, SAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def config_pb(num_seats: int = 2, sb: int = 50, bb: int = 100, stack: int = 10_000) -> poker_pb2.TableConfig:
    """A no-limit table config."""
    return poker_pb2.TableConfig(
        num_seats=num_seats,
        structure=poker_pb2.STRUCTURE_NO_LIMIT,
        small_blind=sb,
        big_blind=bb,
        starting_stack=stack,
        reveal_all_at_showdown=True,
    )


def make_request(
    *,
    hole: str = "AsKd",
    board: str = "",
    seat: int = 0,
    button: int = 0,
    stacks: Sequence[int] = (9950, 9900),
    bets: Sequence[int] = (50, 100),
    committed: Sequence[int] | None = None,
    statuses: Sequence[int] | None = None,
    legal: poker_pb2.LegalActions | None = None,
    request_id: int = 1,
    hand_id: str = "m1-t0-h1",
    table_id: str = "t0",
    street: int | None = None,
) -> bot_pb2.ActionRequest:
    """An ActionRequest for ``seat``; by default the README's first request (AsKd on the button, 50 to call).

    ``legal`` defaults to what the bets imply in no-limit: call the top bet, raise to at least top + big blind.
    """
    n = len(stacks)
    committed = list(bets) if committed is None else list(committed)
    statuses = [poker_pb2.SEAT_STATUS_ACTIVE] * n if statuses is None else list(statuses)
    board_cards = parse_cards(board)
    if street is None:
        street = {0: 1, 3: 2, 4: 3, 5: 4}[len(board_cards)]
    if legal is None:
        top = max(bets)
        owed = top - bets[seat]
        stack = stacks[seat]
        raise_ok = stack > owed
        high = bets[seat] + stack
        low = min(max(top + 100, 100), high)
        legal = poker_pb2.LegalActions(
            can_fold=True,
            can_check=owed == 0,
            can_call=owed > 0,
            call_amount=min(owed, stack),
            can_raise=raise_ok,
            min_raise_to=low if raise_ok else 0,
            max_raise_to=high if raise_ok else 0,
        )
    in_hand = [s for s in range(n) if statuses[s] in (poker_pb2.SEAT_STATUS_ACTIVE, poker_pb2.SEAT_STATUS_ALL_IN)]
    return bot_pb2.ActionRequest(
        table_id=table_id,
        hand_id=hand_id,
        request_id=request_id,
        seat=seat,
        hole_cards=[format_card(c) for c in parse_cards(hole)],
        board=[format_card(c) for c in board_cards],
        button=button,
        street=street,  # type: ignore[arg-type]
        seats=[
            poker_pb2.SeatState(
                seat=s,
                name=f"bot{s}",
                stack=stacks[s],
                bet=bets[s],
                committed=committed[s],
                status=statuses[s],  # type: ignore[arg-type]
            )
            for s in range(n)
        ],
        pots=[poker_pb2.Pot(amount=sum(committed), eligible_seats=in_hand)],
        legal=legal,
        clock=poker_pb2.Clock(action_ms_left=1000, bank_ms_left=30_000),
        config=config_pb(n),
    )


def random_request(rng: random.Random, request_id: int = 1) -> bot_pb2.ActionRequest:
    """A random but consistent situation: 2-9 seats, any street, random stacks, bets and legal actions."""
    n = rng.randint(2, 9)
    seat = rng.randrange(n)
    cards = rng.sample(range(52), 7)
    board_len = rng.choice((0, 3, 4, 5))
    statuses = [
        rng.choice((poker_pb2.SEAT_STATUS_ACTIVE, poker_pb2.SEAT_STATUS_FOLDED, poker_pb2.SEAT_STATUS_ALL_IN))
        for _ in range(n)
    ]
    statuses[seat] = poker_pb2.SEAT_STATUS_ACTIVE
    if all(statuses[s] == poker_pb2.SEAT_STATUS_FOLDED for s in range(n) if s != seat):
        statuses[(seat + 1) % n] = poker_pb2.SEAT_STATUS_ACTIVE
    stacks = [rng.randint(1, 20_000) for _ in range(n)]
    bets = [rng.choice((0, 0, 50, 100, 300, rng.randint(1, 5000))) for _ in range(n)]
    top = max(bets)
    owed = top - bets[seat]
    stack = stacks[seat]
    can_raise = stack > owed and rng.random() < 0.8
    low = min(top + rng.choice((1, 100, 200, 700)), bets[seat] + stack)
    high = rng.randint(low, bets[seat] + stack) if can_raise else 0
    legal = poker_pb2.LegalActions(
        can_fold=owed > 0 or rng.random() < 0.5,
        can_check=owed == 0,
        can_call=owed > 0,
        call_amount=min(owed, stack),
        can_raise=can_raise,
        min_raise_to=low if can_raise else 0,
        max_raise_to=high,
    )
    return make_request(
        hole=format_card(cards[0]) + format_card(cards[1]),
        board="".join(format_card(c) for c in cards[2 : 2 + board_len]),
        seat=seat,
        button=rng.randrange(n),
        stacks=stacks,
        bets=bets,
        committed=[b + rng.randint(0, 3000) for b in bets],
        statuses=statuses,
        legal=legal,
        request_id=request_id,
        hand_id=f"h{rng.randrange(10**6)}",
    )


def most_hands_at_once(log: str, hand_start: re.Pattern[str], hand_end: re.Pattern[str]) -> int:
    """The most hands a bot was in at the same time, from its log's hand-start and hand-end lines (each pattern's
    group 1 is the hand id)."""
    playing: set[str] = set()
    most = 0
    for line in log.splitlines():
        if start := hand_start.match(line):
            playing.add(start[1])
            most = max(most, len(playing))
        elif end := hand_end.match(line):
            playing.discard(end[1])
    assert not playing, f"hands never ended: {sorted(playing)}"
    return most


def assert_clean_match(result: dict[str, Any], hands: int) -> None:
    """An ``arena match --json`` report of a match every bot played through: every hand, nothing wrong."""
    assert result["status"] == "completed", result["summary"]
    assert result["hands"] == {"played": hands, "total": hands}
    assert sum(r["net"] for r in result["results"]) == 0
    for r in result["results"]:
        assert r["outcome"] == "ok" and r["decisions"] > 0, r
        assert (r["violations"], r["timeouts"], r["illegal"], r["absent"], r["forfeited"]) == (0, 0, 0, 0, False), r


def require_built(*binaries: Path) -> None:
    """Skip where the C++ bot cannot be built (no cmake or g++), never in CI; fail where it could be but is not."""
    if all(b.is_file() for b in binaries):
        return
    missing = [tool for tool in ("cmake", "g++") if shutil.which(tool) is None]
    if missing and not os.environ.get("CI"):
        pytest.skip(f"the C++ bot cannot be built here: {' and '.join(missing)} not installed")
    pytest.fail(f"{binaries[0].relative_to(REPO)} is not built: run `make install` (it builds sample_bots/cpp)")


def bot_env(**values: str) -> dict[str, str]:
    """This process's environment without any ARENA_ variable, plus ``values``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env.update(values)
    return env
