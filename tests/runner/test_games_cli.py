"""``arena match --game freezeout`` with real sandboxed bot processes: a referee killed with SIGKILL in the middle
of a game resumes to exactly the uninterrupted records and places (R11.4, R11.5), and ``arena verify`` re-plays
the whole games."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import random
import re
import shlex
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from arena.ratings.leaderboard import build_leaderboard, leaderboard_json
from arena.records.db import Database
from arena.records.verify import verify_match
from tests.bots import caller, cpp, random_bot
from tests.runner.test_many_tables_cli import wait_for_hands

PY = sys.executable
# the C++ sample bot in its three styles: a player with a plan, a calling station, a seeded random bot
BOTS = ["--bot", f"sample={cpp()}", "--bot", f"caller={caller()}", "--bot", f"random={random_bot(5)}"]
GAME = ["--game", "freezeout", "--games", "2", "--stakes", "10/20", "--stack", "1500", "--level-hands", "8"]


def arena(*args: str | Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, "-m", "arena", *map(str, args)], capture_output=True, text=True, timeout=timeout,
                          check=False)


def outcome(db: Path) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    conn = sqlite3.connect(db)
    hands = conn.execute(
        "SELECT s.hand_number, s.seat, s.participant, s.hole, s.starting_stack, s.payoff, h.board, h.config"
        " FROM hand_seats s JOIN hands h USING (match_id, hand_number) ORDER BY 1, 2").fetchall()
    places = conn.execute("SELECT game, rotation, participant, place, hands, final_stack, eliminated FROM"
                          " game_results ORDER BY 1, 2, 3").fetchall()
    conn.close()
    return hands, places


@pytest.mark.timeout(300)
def test_R11_4_a_freezeout_killed_mid_game_resumes_to_the_uninterrupted_games_and_places(tmp_path: Path) -> None:
    seed = tmp_path / "seed"
    seed.write_text("freezeout-resume")
    whole = tmp_path / "whole.db"
    done = arena("match", *BOTS, *GAME, "--seed-file", seed, "--db", whole, "--match-id", "fz", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    games = report["game"]["games"]
    assert report["status"] == "completed" and [(g["game"], g["rotation"]) for g in games] == [
        (0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    assert all(g["end"] == "one player holds every chip" for g in games)
    assert all(sorted(p["place"] for p in g["players"]) in ([1, 2, 3], [1, 2, 2]) for g in games)
    assert {s["bot"] for s in report["game"]["standings"]} == {"sample", "caller", "random"}
    total = report["hands"]["played"]
    assert verify_match(Database(whole, read_only=True), "fz").ok
    # the leaderboard's mbb/hand: the mean over the sessions, each a game's duplicate set (its three freezeouts'
    # chips and hands summed: the luck of the decks cancels), where each freezeout was once a session of its own;
    # each freezeout stays a rating game of its own
    per_set: dict[str, list[float]] = {}
    for game in (0, 1):
        played = [p for g in games if g["game"] == game for p in g["players"]]
        for bot in {p["bot"] for p in played}:
            chips = sum(p["net"] for p in played if p["bot"] == bot)
            hands = sum(p["hands"] for p in played if p["bot"] == bot)
            per_set.setdefault(bot, []).append(chips / 20 / hands * 1000)
    board = leaderboard_json(build_leaderboard(Database(whole, read_only=True)))
    assert {r["bot"]: r["mbb_per_hand"] for r in board["rows"]} == pytest.approx(
        {bot: sum(rates) / len(rates) for bot, rates in per_set.items()})
    assert {r["sessions"] for r in board["rows"]} == {2} and {r["games"]["games"] for r in board["rows"]} == {6}
    # R11.5 without memory: each rotation's games were played by processes of their own (one table per rotation),
    # and no table (no process) was dealt a deck twice
    conn = sqlite3.connect(whole)
    tables = conn.execute("SELECT table_id, rotation, deal FROM hands").fetchall()
    spans = conn.execute("SELECT rotation, MIN(started_at), MAX(finished_at) FROM hands GROUP BY rotation"
                         " ORDER BY rotation").fetchall()
    conn.close()
    assert {(t, r) for t, r, _ in tables} == {(f"table-1-r{r}", r) for r in range(3)}
    assert len({(t, d) for t, _, d in tables}) == len(tables) == total
    # ... one rotation after the other: every game of a rotation is over before the next rotation's first hand
    assert all(earlier[2] <= later[1] for earlier, later in itertools.pairwise(spans)), spans

    cut = tmp_path / "cut.db"
    env = {k: v for k, v in os.environ.items() if k != "ARENA_SEED"}
    victim = subprocess.Popen([PY, "-m", "arena", "match", *BOTS, *GAME, "--seed-file", str(seed), "--db", str(cut),
                               "--match-id", "fz", "--json"], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    target = random.Random(os.getpid()).randint(total // 4, total // 2)
    try:
        wait_for_hands(cut, target, victim)
        assert victim.poll() is None, "the match ended before it could be killed"
        os.kill(victim.pid, signal.SIGKILL)  # the referee alone: its sandboxed bots die with it
        victim.wait(timeout=30)
    finally:
        if victim.poll() is None:
            victim.kill()
            victim.wait()
        with contextlib.suppress(ProcessLookupError):  # anything left in its process group
            os.killpg(victim.pid, signal.SIGKILL)
    before = outcome(cut)[0]
    assert 0 < len({row[0] for row in before}) < total
    resumed = arena("match", *BOTS, "--db", cut, "--match-id", "fz", "--resume", "--json")
    assert resumed.returncode == 0, resumed.stderr
    again = json.loads(resumed.stdout)
    assert outcome(cut) == outcome(whole)
    assert again["game"] == report["game"] and again["hands"] == report["hands"]
    assert verify_match(Database(cut, read_only=True), "fz").ok
    checked = arena("verify", "--db", cut)
    assert checked.returncode == 0 and "ok" in checked.stdout


def tournament_file(folder: Path, extra: str) -> Path:
    (folder / "cup.seed").write_text("games-cup\n")
    text = f'name = "cup"\nseed_file = "cup.seed"\nworkers = 2\nstack = 600\nstakes = "10/20"\n{extra}\n'
    for name, command in (("sample", cpp()), ("caller", caller()), ("random", random_bot(2))):
        text += f'[[bots]]\nname = "{name}"\ncommand = "{command}"\n'
    path = folder / "cup.toml"
    path.write_text(text)
    return path


@pytest.mark.timeout(300)
def test_R11_4_a_tournament_of_freezeouts_from_toml_ranks_the_bots_by_their_finishing_orders(tmp_path: Path) -> None:
    config = tournament_file(tmp_path, 'game = "freezeout"\ngames = 2\n[freezeout]\nlevel_hands = 5\n'
                                       'levels = ["10/20", "20/40/5"]\n')
    db = tmp_path / "cup.db"
    done = arena("tournament", config, "--db", db, "--no-progress", "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["leaderboard"]["rows"]
    assert {r["bot"] for r in rows} == {"sample", "caller", "random"}
    for row in rows:  # 3 heads-up pairings, each 2 games in 2 rotations: every bot played 8 freezeouts, each a
        # rating game, in 4 duplicate sets (a game in both rotations), each a session of its mbb/hand
        assert row["games"]["games"] == 8 and row["sessions"] == 4
        assert row["games"]["wins"] == row["games"]["itm"]  # heads-up: only the winner is in the money
    assert sum(r["games"]["wins"] for r in rows) == 12
    checked = arena("verify", "--db", db)
    assert checked.returncode == 0, checked.stdout
    assert checked.stdout.count("ok ") == 3

    bad = tournament_file(tmp_path, 'game = "sit-and-go"\n')
    refused = arena("tournament", bad, "--db", tmp_path / "bad.db", "--no-progress")
    assert refused.returncode == 2 and "game" in refused.stderr and "freezeout" in refused.stderr
    bad = tournament_file(tmp_path, 'game = "cash"\n[cash]\nbuy_in = "1000..2000"\n')
    refused = arena("tournament", bad, "--db", tmp_path / "bad.db", "--no-progress")
    assert refused.returncode == 2 and "R11.1" in refused.stderr


@pytest.mark.timeout(120)
def test_R11_4_arena_serve_plays_a_freezeout_with_remote_bots_that_join_by_printed_token(tmp_path: Path) -> None:
    db = tmp_path / "serve.db"
    serve = subprocess.Popen(
        [PY, "-m", "arena", "serve", "--bot", "alice", "--bot", "bob", "--bot", "carol", "--port", "0", "--game",
         "freezeout", "--stakes", "10/20", "--stack", "600", "--level-hands", "5", "--db", str(db), "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
    )
    assert serve.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + 30
    while len([line for line in lines if "ARENA_TOKEN=" in line]) < 3 and time.monotonic() < deadline:
        lines.append(serve.stdout.readline())
    found = re.findall(r"(\w+): ARENA_ADDRESS=(\S+) ARENA_TOKEN=(\S+)", "".join(lines))
    tokens = {name: (address, token) for name, address, token in found}
    assert set(tokens) == {"alice", "bob", "carol"}, lines
    bots = [subprocess.Popen(shlex.split(cpp()),
                             env={**os.environ, "ARENA_ADDRESS": tokens[name][0], "ARENA_TOKEN": tokens[name][1]},
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for name in tokens]
    out, err = serve.communicate(timeout=90)
    for bot in bots:
        assert bot.wait(timeout=30) == 0
    assert serve.returncode == 0, err
    report = json.loads(out)
    (game,) = report["game"]["games"]  # remote bots: fresh decks, one game (no duplicate rotation)
    assert game["end"] == "one player holds every chip" and sorted(p["place"] for p in game["players"])[0] == 1
    assert sum(p["final_stack"] for p in game["players"]) == 1800
    assert verify_match(Database(db, read_only=True), report["match_id"]).ok
