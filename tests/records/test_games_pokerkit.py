"""Every hand of a freezeout, exported with its real stacks and blinds, replays strictly in PokerKit (R11.4).

Freezeouts between random bots at 2, 3 and 6 seats, no-limit with antes joining the schedule and fixed-limit, are
recorded, exported with ``arena export`` and loaded with PokerKit's own ``HandHistory.loads``; the strict replay
and its two allowances (odd chips of a split pot, the rule differences B and C) are those of test_phh_pokerkit.
"""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

from arena.engine import Structure, TableConfig
from arena.records import queries
from arena.records.db import Database
from arena.records.ledger import Ledger
from arena.records.verify import verify_match
from arena.referee import FunctionSeat, GameKind, GameRules, Level, Match, MatchSpec
from arena.runner.bots import BotSpec
from tests.records.test_phh_pokerkit import NotStrict, known_difference, odd_chips_only, pokerkit_replay, random_bot

GAMES = [  # (seats, structure, schedule)
    (2, Structure.NO_LIMIT, ()),
    (3, Structure.NO_LIMIT, (Level(5, 10), Level(10, 20, 2), Level(25, 50, 5))),
    (6, Structure.NO_LIMIT, (Level(5, 10, 1),)),
    (3, Structure.FIXED_LIMIT, ()),
]


def test_R11_4_every_hand_of_a_freezeout_replays_in_pokerkit_with_its_real_stacks(tmp_path: Path) -> None:
    db = Database(tmp_path / "f.db")
    rng = random.Random(14)
    for index, (seats, structure, levels) in enumerate(GAMES):
        rules = GameRules(GameKind.FREEZEOUT, games=2, levels=levels, level_hands=3)
        spec = MatchSpec(f"fz{index}", f"seed{index}", 10, TableConfig(5, 10, structure), 150, game=rules,
                         duplicate=True)
        names = [f"r{k}" for k in range(seats)]
        entry = Ledger(db).open(spec, [BotSpec(n, "") for n in names])
        match = Match(spec, [(n, FunctionSeat(n, random_bot(rng.randrange(2**32)))) for n in names], [entry])
        entry.finish(asyncio.run(match.run()))
        assert verify_match(db, spec.match_id).ok
    out = tmp_path / "phh"
    proc = subprocess.run([sys.executable, "-m", "arena", "export", "--db", str(db.path), "--phh", str(out)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    seen: Counter[str] = Counter()
    for match_id in queries.match_ids(db):
        for record in queries.hand_records(db, match_id):
            n = len(record.starting_stacks)
            order = [(record.button + 1 + k) % n for k in range(n)]
            expected = [record.final_stacks[seat] for seat in order]
            text = (out / match_id / f"{record.hand_number:06d}.phh").read_text(encoding="utf-8")
            assert f"starting_stacks = [\n    {record.starting_stacks[order[0]]}," in text
            try:
                theirs, written = pokerkit_replay(text)
            except NotStrict as exc:
                assert known_difference(record, text) is not None, f"{exc}\n{text}"
                seen["rule differences B/C"] += 1
                continue
            assert written == expected
            if theirs != expected:
                assert odd_chips_only(record, expected, theirs), text
                seen["odd chips"] += 1
            seen[f"{n} players"] += 1
            seen[f"big blind {record.config.big_blind}"] += 1
            seen["uneven stacks"] += len(set(record.starting_stacks)) > 1
    print(dict(seen))
    assert seen["2 players"] > 20 and seen["6 players"] > 0 and seen["uneven stacks"] > 40
    assert sum(v for k, v in seen.items() if k.startswith("big blind")) > 80
    assert len([k for k in seen if k.startswith("big blind")]) >= 3  # the blinds rose
    assert seen["rule differences B/C"] <= 3


def test_R11_3_every_hand_of_a_cash_game_replays_its_entry_blinds_in_arena_and_the_others_in_pokerkit(
        tmp_path: Path) -> None:
    """A cash game's entry blind (R2.4) has no PHH form: arena writes it in ``_arena_entry_blinds`` and replays it;
    every other hand replays strictly in PokerKit with its real (carried-over, re-bought) stacks."""
    from arena.records.phh import loads
    from arena.records.replay import ENTRY_BLINDS_FIELD, replay_result

    db = Database(tmp_path / "c.db")
    rules = GameRules(GameKind.CASH, join_at=(0, 0, 3, 6, 9, 12), leave_at=(40, 0, 0, 30, 0, 0))
    spec = MatchSpec("cash", "cash-seed", 60, TableConfig(5, 10), 200, game=rules, duplicate=False)
    names = [f"r{k}" for k in range(6)]
    rng = random.Random(3)
    entry = Ledger(db).open(spec, [BotSpec(n, "") for n in names])
    match = Match(spec, [(n, FunctionSeat(n, random_bot(rng.randrange(2**32)))) for n in names], [entry])
    entry.finish(asyncio.run(match.run()))
    assert verify_match(db, "cash").ok
    out = tmp_path / "phh"
    subprocess.run([sys.executable, "-m", "arena", "export", "--db", str(db.path), "--phh", str(out)], check=True,
                   capture_output=True)
    seen: Counter[str] = Counter()
    for record in queries.hand_records(db, "cash"):
        n = len(record.starting_stacks)
        order = [(record.button + 1 + k) % n for k in range(n)]
        expected = [record.final_stacks[seat] for seat in order]
        text = (out / "cash" / f"{record.hand_number:06d}.phh").read_text(encoding="utf-8")
        phh = loads(text)
        assert replay_result(phh).ok and replay_result(phh).finishing_stacks == expected
        if ENTRY_BLINDS_FIELD in phh.extra:
            seen["entry blinds"] += 1
            continue
        try:
            theirs, _ = pokerkit_replay(text)
        except NotStrict:
            assert known_difference(record, text) is not None, text
            continue
        assert theirs == expected or odd_chips_only(record, expected, theirs), text
        seen["pokerkit"] += 1
        seen["uneven"] += len(set(record.starting_stacks)) > 1
    assert seen["entry blinds"] >= 2 and seen["pokerkit"] > 40 and seen["uneven"] > 40
