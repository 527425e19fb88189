"""A real league: ``arena host`` as a process, six bots as processes (the C++ sample bot's seeded random style,
20 ms a decision) connecting with their API keys over TCP, the database, the live site over HTTP and in headless
Chromium, a revoked key, a new version, and SIGKILL with a restart on the same database.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from arena.ratings.blocks import RatingRules, rating_games
from arena.ratings.league_ratings import LeagueRatings
from arena.ratings.sessions import load_sessions
from arena.records import queries
from arena.records.db import Database
from arena.referee import MatchKind, MatchStatus
from tests.bots import random_bot
from tests.publish.chromium import Chromium
from tests.publish.test_browser import Visible, visible

REPO = Path(__file__).resolve().parents[2]
ARENA = [sys.executable, "-m", "arena"]
LEAGUE = "test-league"
BOTS = {"b1": "ann", "b2": "ann", "b3": "bob", "b4": "cy", "b5": "dee", "b6": "eve"}
THINK_MS = 20  # each answer: answering at once, the bots had the host play 400 matches in the test's 25 s, its
# site rebuilt from all of them every 2 s (33 s of CPU in all; 14 s with this, and 20 s instead of 26)

pytestmark = pytest.mark.timeout(400)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(what: str, check: Callable[[], Any], timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


@dataclass
class League:
    folder: Path
    grpc: int
    http: int
    keys: dict[str, str] = field(default_factory=dict)
    host: subprocess.Popen[str] | None = None
    bots: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    @property
    def db(self) -> Path:
        return self.folder / "league.db"

    def arena(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*ARENA, *args], capture_output=True, text=True, timeout=60, cwd=self.folder)

    def start_host(self) -> None:
        log = (self.folder / "host.log").open("a")
        self.host = subprocess.Popen([*ARENA, "host", "league.toml", "--db", "league.db", "-v"], cwd=self.folder,
                                     stdout=log, stderr=subprocess.STDOUT, text=True)
        wait_for("the live site", lambda: self.get("/api/live", quiet=True) is not None)

    def start_bot(self, name: str, version: str = "") -> None:
        env = {**os.environ, "ARENA_ADDRESS": f"127.0.0.1:{self.grpc}", "ARENA_KEY": self.keys[name],
               "ARENA_BOT_VERSION": version or "1.0"}
        log = (self.folder / f"{name}.log").open("ab")
        command = shlex.split(random_bot(list(BOTS).index(name) + 1, think_ms=THINK_MS))
        self.bots[name] = subprocess.Popen(command, env=env, stdout=log,
                                           stderr=subprocess.STDOUT, cwd=self.folder)

    def get(self, path: str, quiet: bool = False) -> Any:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.http}{path}", timeout=10) as response:
                return json.loads(response.read())
        except OSError:
            if quiet:
                return None
            raise

    def finished(self) -> list[str]:
        db = Database(self.db, read_only=True)
        try:
            return queries.finished_matches_of(db, LEAGUE, MatchKind.LEAGUE)
        finally:
            db.close()

    def log(self, name: str) -> str:
        return (self.folder / f"{name}.log").read_text(errors="replace")

    def stop(self) -> None:
        for process in [*self.bots.values(), self.host]:
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()


def write_league_file(folder: Path, grpc: int, http: int, matches_at_once: int) -> None:
    """The league.toml of these tests: short matches on 127.0.0.1, a generous clock, a wide rating window (so
    that ratings never keep two bots from meeting in a short run)."""
    (folder / "league.toml").write_text(f"""
name = "{LEAGUE}"
grpc = "127.0.0.1:{grpc}"
http = "127.0.0.1:{http}"
hands = 10
matches_at_once = {matches_at_once}
matches_per_bot = 1
[clock]
per_action_ms = 3000
reconnect_grace_ms = 500
[matchmaking]
window = 50
[ratings]
block_deals = 5       # two rating games a match of these short matches (the default block is 30 deals)
""")


@pytest.fixture
def league(tmp_path: Path) -> Iterator[League]:
    grpc, http = free_port(), free_port()
    write_league_file(tmp_path, grpc, http, matches_at_once=3)
    lg = League(tmp_path, grpc, http)
    for name, owner in BOTS.items():
        out = lg.arena("bots", "add", name, "--db", "league.db", "--owner", owner)
        assert out.returncode == 0, out.stderr
        key = out.stdout.strip().splitlines()[-1]
        assert re.fullmatch(r"arena_[A-Za-z0-9_-]{43}", key) and "not be shown again" in out.stderr
        lg.keys[name] = key
    try:
        yield lg
    finally:
        lg.stop()


def matches_per_bot(db_path: Path, ids: list[str]) -> tuple[Counter[str], list[tuple[str, ...]]]:
    db = Database(db_path, read_only=True)
    try:
        tables = [tuple(name for name, _ in queries.participants(db, m)) for m in ids]
    finally:
        db.close()
    return Counter(name for table in tables for name in table), tables


def test_a_league_plays_rates_publishes_and_survives_sigkill(league: League, chromium: Chromium) -> None:
    league.start_host()
    for name in BOTS:
        league.start_bot(name)

    # Continuous, fair matchmaking: everyone plays about as often; the two bots of one owner never meet
    wait_for("18 finished matches", lambda: len(league.finished()) >= 18, timeout=120)  # six seats a bot
    counts, tables = matches_per_bot(league.db, league.finished())
    assert set(counts) == set(BOTS)
    assert max(counts.values()) - min(counts.values()) <= 4, counts
    assert not any({"b1", "b2"} <= set(t) for t in tables)
    bots = {b["name"]: b for b in league.get("/api/bots")["bots"]}
    lagging = [b for b in bots.values() if not (b["connected"] and b["version"] == "1.0" and b["games_last_hour"])]
    assert not lagging, bots

    # A new version: a separate rated entry; the old version's results stay
    league.bots["b6"].kill()
    league.bots["b6"].wait()
    league.start_bot("b6", version="2.0")
    wait_for("a match of b6@2.0", lambda: any(
        "2.0" in json.dumps(m["bots"]) for m in league.get("/api/matches")["matches"]), timeout=60)
    rows = {r["bot"] for r in wait_for("b6@2.0 on the leaderboard", lambda: [
        r for r in league.get("/api/leaderboard")["rows"]] if any(
        r["bot"] == "b6@2.0" for r in league.get("/api/leaderboard")["rows"]) else None)}
    assert {"b6@1.0", "b6@2.0"} <= rows and all("sessions" in r for r in league.get("/api/leaderboard")["rows"])

    # A revoked key: the live stream ends within seconds, and the key is refused from then on
    out = league.arena("bots", "revoke", "b5", "--db", "league.db")
    assert out.returncode == 0, out.stderr
    assert league.bots["b5"].wait(timeout=15) != 0
    assert "revoked" in league.log("b5")
    wait_for("b5 shown disconnected", lambda: not {b["name"]: b for b in league.get("/api/bots")["bots"]}["b5"][
        "connected"])
    league.start_bot("b5")
    assert league.bots["b5"].wait(timeout=30) != 0
    assert "unknown, revoked or replaced API key" in league.log("b5")

    # SIGKILL while matches are being played, then a restart on the same database
    wait_for("a match in play", lambda: league.get("/api/live")["live"])
    assert league.host is not None
    league.host.send_signal(signal.SIGKILL)
    league.host.wait()
    db = Database(league.db, read_only=True)
    running = [m for m in queries.matches_of(db, LEAGUE, MatchKind.LEAGUE)
               if queries.require(db, m).status is MatchStatus.RUNNING]
    hands_before = {m: queries.hands_recorded(db, m) for m in queries.match_ids(db)}
    db.close()
    assert running, "SIGKILL came between matches"
    before = len(league.finished())
    league.start_host()
    wait_for("matches after the restart", lambda: len(league.finished()) >= before + len(running) + 3, timeout=120)
    db = Database(league.db, read_only=True)
    for match_id in running:
        info = queries.require(db, match_id)
        assert info.status is MatchStatus.INTERRUPTED and info.seed and info.final_hash
    assert all(queries.hands_recorded(db, m) >= n for m, n in hands_before.items())  # no finished hand lost
    db.close()
    verify = league.arena("verify", "--db", "league.db")
    assert verify.returncode == 0 and "FAIL" not in verify.stdout, verify.stdout[-2000:]
    assert all(league.bots[name].poll() is None for name in BOTS if name != "b5")  # they reconnected by themselves

    # The live ratings are exactly a replay of the sessions in the order the matches ended
    def consistent() -> tuple[list[str], dict[str, float]] | None:
        """The finished matches and the live ratings read while no match ended (the same count before and after)."""
        ids = league.finished()
        rated = league.get("/api/live")["rated_matches"]
        bots = league.get("/api/bots")["bots"]
        if not rated == league.get("/api/live")["rated_matches"] == len(ids) == len(league.finished()):
            return None
        return ids, {f"{b['name']}@{b['version']}": b["mu"] for b in bots if b["connected"]}

    ids, live_mu = wait_for("a quiet moment to compare ratings", consistent, timeout=60)
    db = Database(league.db, read_only=True)
    blocks = RatingRules(block_deals=5)
    replayed = LeagueRatings.replay(rating_games(load_sessions(db, ids), blocks))  # those matches only
    db.close()
    for key, mu in live_mu.items():
        assert mu == pytest.approx(replayed.rating(key).mu, abs=1e-9), key

    # The live site in a real browser
    wait_for("the site rebuilt", lambda: league.get("/api/leaderboard")["rows"])
    page = visible(chromium.dump_dom(f"http://127.0.0.1:{league.http}/"))
    names = {cells[1] for cells in page.rows}
    assert {"b1@1.0", "b6@2.0"} <= names, names
    dom = chromium.dump_dom(f"http://127.0.0.1:{league.http}/league.html")
    live = Visible("league-bots")
    live.feed(dom)
    assert "league.html" in chromium.dump_dom(f"http://127.0.0.1:{league.http}/")
    shown = {cells[0]: cells for cells in live.rows}
    assert set(shown) == set(BOTS), shown
    assert shown["b5"][3] == "revoked" and shown["b1"][3] == "yes" and shown["b6"][2] == "2.0"
    assert all(int(cells[6]) > 0 for cells in live.rows)  # games in the last hour: fairness can be seen

    league.host.send_signal(signal.SIGTERM)
    assert league.host.wait(timeout=30) == 0
    assert "stopping" in (league.folder / "host.log").read_text()
