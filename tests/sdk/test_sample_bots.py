"""The sample bots: their decisions on hand-made requests, the README's ten-line bot, and who beats whom."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena_sdk import ActionKind, Bot, Request, raise_to
from arena_sdk.pb import poker_pb2
from tests.sdk.engine_match import duplicate_match
from tests.sdk.fake_referee import TOKEN, FakeReferee
from tests.sdk.helpers import REPO, SAMPLES, load_sample, make_request, random_request

calling_station = load_sample("calling_station")
random_bot = load_sample("random_bot")
equity_bot = load_sample("equity_bot")


def sample_bots() -> list[Bot]:
    return [calling_station.CallingStation(), random_bot.RandomBot(seed=1), equity_bot.EquityBot()]


@pytest.mark.parametrize("bot", sample_bots(), ids=lambda b: type(b).__name__)
def test_always_legal_on_random_requests(bot: Bot) -> None:
    import random

    rng = random.Random(11)
    for i in range(300):
        request = Request(random_request(rng, i))
        action = bot.act(request)
        assert request.legal.allows(action.kind, action.amount), f"{action} for {request}"


def test_calling_station_checks_or_calls() -> None:
    bot = calling_station.CallingStation()
    assert bot.act(Request(make_request())).kind is ActionKind.CALL
    assert bot.act(Request(make_request(bets=(100, 100)))).kind is ActionKind.CHECK


def test_random_bot_is_reproducible_and_uses_every_option() -> None:
    requests = [Request(make_request(request_id=i)) for i in range(200)]
    bot_a, bot_b = random_bot.RandomBot(seed=3), random_bot.RandomBot(seed=3)
    first = [bot_a.act(r) for r in requests]
    assert [bot_b.act(r) for r in requests] == first
    assert {a.kind for a in first} == {ActionKind.FOLD, ActionKind.CALL, ActionKind.RAISE}
    amounts = {a.amount for a in first if a.kind is ActionKind.RAISE}
    assert min(amounts) >= 200 and max(amounts) <= 10_000 and len(amounts) > 10


def test_random_bot_seed_from_argv_then_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert random_bot.seed_from(["--token", "x", "--seed", "42"]) == 42
    assert random_bot.seed_from([]) is None
    monkeypatch.setenv("ARENA_BOT_SEED", "9")
    assert random_bot.seed_from([]) == 9
    assert random_bot.seed_from(["--seed=5"]) == 5


def test_equity_bot_raises_aces_preflop() -> None:
    bot = equity_bot.EquityBot()
    action = bot.act(Request(make_request(hole="AsAd")))
    assert action.kind is ActionKind.RAISE
    assert 200 <= action.amount <= 10_000  # about 2/3 of the pot on top of the call: 100 + 133
    assert action == raise_to(233)
    # with six opponents in, aces are still a raise
    many = make_request(hole="AhAc", seat=2, stacks=[10_000] * 7, bets=[0, 50, 0, 100, 0, 0, 0])
    assert bot.act(Request(many)).kind is ActionKind.RAISE


def test_equity_bot_folds_seven_deuce_to_a_big_bet() -> None:
    bot = equity_bot.EquityBot()
    big = make_request(hole="7c2d", stacks=(9900, 8000), bets=(100, 2000))  # 1900 more to call into 2100
    assert Request(big).pot_odds > 0.45
    assert bot.act(Request(big)).kind is ActionKind.FOLD
    flop_bet = make_request(hole="7c2d", board="AsKhQd", stacks=(9000, 8000), bets=(0, 1000), committed=(300, 1300))
    assert bot.act(Request(flop_bet)).kind is ActionKind.FOLD


def test_equity_bot_checks_junk_when_free_and_calls_cheap_blinds() -> None:
    bot = equity_bot.EquityBot()
    free = make_request(hole="7c2d", board="AsKhQd", stacks=(9700, 9700), bets=(0, 0), committed=(300, 300))
    assert bot.act(Request(free)).kind is ActionKind.CHECK
    assert bot.act(Request(make_request(hole="9c4d"))).kind is ActionKind.CALL  # 50 into 150: 25% pot odds


def test_equity_bot_bets_the_nuts_and_is_deterministic() -> None:
    bot = equity_bot.EquityBot()
    nuts = make_request(hole="AsKs", board="QsJsTs", stacks=(9700, 9700), bets=(0, 0), committed=(300, 300))
    action = bot.act(Request(nuts))
    assert action.kind is ActionKind.RAISE and action.amount == 400  # 2/3 of the 600 pot
    request = Request(
        make_request(hole="Jh9h", board="Th8c2d", stacks=(9700, 9300), bets=(0, 400), committed=(300, 700))
    )
    assert bot.equity(request) == bot.equity(request)
    assert abs(bot.equity(request) - equity_bot.EquityBot(samples=4000).equity(request)) < 0.1


def test_equity_bot_is_fast_enough() -> None:
    bot = equity_bot.EquityBot()
    request = Request(make_request(hole="AhAc", seat=2, stacks=[10_000] * 9, bets=[0, 50, 100] + [0] * 6))
    start = time.perf_counter()
    for _ in range(20):
        bot.act(request)
    assert (time.perf_counter() - start) / 20 < 0.1  # seconds per decision, far below a 1 s clock


# --------------------------------------------------------------------------------- the README's ten-line bot


def readme_example() -> str:
    text = (SAMPLES / "README.md").read_text()
    match = re.search(r"## A bot in ten lines\s+```python\n(.*?)```", text, re.S)
    assert match is not None
    return match.group(1)


def test_readme_example_compiles_and_uses_only_real_api() -> None:
    code = readme_example()
    compile(code, "README.md", "exec")
    import arena_sdk

    names = re.search(r"from arena_sdk import (.*)", code)
    assert names is not None
    for name in names.group(1).split(","):
        assert hasattr(arena_sdk, name.strip()), name
    assert len([line for line in code.splitlines() if line.strip()]) <= 10


def test_the_sdks_and_the_protocols_readmes_show_the_same_tested_bot() -> None:
    """The ten-line bot is shown where a bot author starts: the SDK's README and the protocol's, each a copy of
    the one tested here."""
    for readme in (REPO / "proto" / "python" / "README.md", REPO / "proto" / "README.md"):
        blocks = re.findall(r"```python\n(.*?)```", readme.read_text(), re.S)
        assert readme_example() in blocks, readme


def test_readme_example_plays_a_match(tmp_path: Path, referee: FakeReferee) -> None:
    script = tmp_path / "my_bot.py"
    script.write_text(readme_example())
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env.update(ARENA_ADDRESS=referee.address, ARENA_TOKEN=TOKEN)
    proc = subprocess.run(
        [sys.executable, str(script)], cwd=REPO, env=env, capture_output=True, text=True, timeout=30, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert referee.finished.wait(5)
    assert referee.problems == []
    assert referee.join is not None and referee.join.bot_name == "pair-raiser"
    kinds = [a.kind for e in referee.exchanges for a in e.actions]
    assert kinds[0] == poker_pb2.ACTION_KIND_CALL  # AsKd is no pair


# --------------------------------------------------------------------------------- strength


DEALS = 300  # 600 hands per pairing


@pytest.mark.slow
@pytest.mark.parametrize(
    ("villain", "min_mbb"),
    [(calling_station.CallingStation(), 200), (random_bot.RandomBot(seed=17), 1000)],
    ids=["vs-calling-station", "vs-random-bot"],
)
def test_equity_bot_beats_the_other_samples(villain: Bot, min_mbb: float) -> None:
    result = duplicate_match(equity_bot.EquityBot(), villain, DEALS, seed=2024)
    print(
        f"\nEquityBot vs {type(villain).__name__}: {result.mbb_per_hand:+.0f} ± {result.stderr_mbb:.0f} mbb/hand "
        f"over {result.hands} hands"
    )
    assert result.mbb_per_hand > min_mbb
    assert result.mbb_per_hand > 4 * result.stderr_mbb
