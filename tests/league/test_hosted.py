"""Hosted bots end to end: ``arena host`` as a process receives two submissions over the network (``arena bots
submit``), plays them against each other in duplicate (every deal in both seat rotations) and rates them; killed with
SIGKILL in the middle of a match and started again, it has lost no submission and no finished hand, and the hosted
bots play on without anyone reconnecting."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from arena.records import queries
from arena.records.db import Database
from arena.records.registry import Registry
from arena.referee import MatchKind, MatchStatus
from tests.league.test_host import ARENA, free_port, wait_for

pytestmark = pytest.mark.timeout(300)

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_bots" / "python"
LEAGUE = "hosted-league"


class Host:
    def __init__(self, folder: Path, grpc: int, http: int) -> None:
        self.folder, self.grpc, self.http = folder, grpc, http
        self.process: subprocess.Popen[str] | None = None

    def start(self) -> None:
        log = (self.folder / "host.log").open("a")
        self.process = subprocess.Popen([*ARENA, "host", "league.toml", "--db", "league.db", "-v"], cwd=self.folder,
                                        stdout=log, stderr=subprocess.STDOUT, text=True)
        wait_for("the live site", lambda: self.api("/api/live") is not None)

    def api(self, path: str) -> dict | None:  # type: ignore[type-arg]
        import urllib.request
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.http}{path}", timeout=10) as response:
                data: dict = json.loads(response.read())  # type: ignore[type-arg]
                return data
        except OSError:
            return None

    def arena(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*ARENA, *args], capture_output=True, text=True, timeout=120, cwd=self.folder)

    def finished(self) -> list[str]:
        db = Database(self.folder / "league.db", read_only=True)
        try:
            return queries.finished_matches_of(db, LEAGUE, MatchKind.LEAGUE)
        finally:
            db.close()

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def test_two_submissions_play_in_duplicate_are_rated_and_survive_sigkill(tmp_path: Path) -> None:
    grpc, http = free_port(), free_port()
    (tmp_path / "league.toml").write_text(f"""
name = "{LEAGUE}"
grpc = "127.0.0.1:{grpc}"
http = "127.0.0.1:{http}"
hands = 20
matches_at_once = 1
[clock]
per_action_ms = 3000
[matchmaking]
window = 50
[ratings]
block_deals = 5
[submissions]
validate_hands = 2
validate_against = ["caller"]
""")
    db = Database(tmp_path / "league.db")
    keys = {name: Registry(db).add(name, owner=name) for name in ("caller", "random")}
    db.close()
    host = Host(tmp_path, grpc, http)
    try:
        host.start()
        for name, command in (("caller", "python calling_station.py"), ("random", "python random_bot.py --seed 3")):
            out = host.arena("bots", "submit", "--address", f"127.0.0.1:{grpc}", "--key", keys[name], "--folder",
                             str(SAMPLES), "--command", command)
            assert out.returncode == 0, out.stdout + out.stderr
            assert f"accepted: {name}@1 is hosted from now on" in out.stdout and "ready: " in out.stdout

        wait_for("two finished matches", lambda: len(host.finished()) >= 2, timeout=120)
        db = Database(tmp_path / "league.db", read_only=True)
        for match_id in host.finished()[:2]:
            info = queries.require(db, match_id)
            assert info.duplicate and info.status is MatchStatus.COMPLETED
            assert sorted(p.name for p in queries.participants(db, match_id)) == ["caller", "random"]
            rotations = Counter(h.deal for h in queries.hand_results(db, match_id))
            assert set(rotations.values()) == {2} and len(rotations) == 10  # every deal in both rotations
        db.close()
        bots = {b["name"]: b for b in host.api("/api/bots")["bots"]}  # type: ignore[index]
        assert all(bots[n]["hosted"] and bots[n]["version"] == "1" and bots[n]["matches"] >= 2 for n in keys), bots
        assert bots["caller"]["mu"] != 25.0  # rated after its matches
        board = host.arena("leaderboard", "--db", "league.db", "--json", "--block-deals", "5")
        rows = {r["bot"]: r for r in json.loads(board.stdout)["rows"]}
        assert {"caller@1", "random@1"} <= set(rows) and all(rows[k]["rating_games"] >= 4 for k in rows), rows

        # SIGKILL in the middle of a match, then a restart on the same database
        wait_for("a match in play", lambda: any(m["hands_played"] for m in (host.api("/api/live") or {}).get(
            "live", [])), timeout=60)
        host.kill()
        db = Database(tmp_path / "league.db", read_only=True)
        running = [m for m in queries.matches_of(db, LEAGUE, MatchKind.LEAGUE)
                   if queries.require(db, m).status is MatchStatus.RUNNING]
        hands_before = {m: queries.hands_recorded(db, m) for m in queries.match_ids(db)}
        db.close()
        assert running, "SIGKILL came between matches"
        before = len(host.finished())
        host.start()
        listed = json.loads(host.arena("bots", "list", "--db", "league.db", "--json").stdout)
        assert [(b["name"], b["hosted"], b["submission"]["version"]) for b in listed] == [
            ("caller", True, "1"), ("random", True, "1")]
        wait_for("matches after the restart", lambda: len(host.finished()) >= before + len(running) + 1, timeout=120)
        db = Database(tmp_path / "league.db", read_only=True)
        for match_id in running:
            info = queries.require(db, match_id)
            assert info.status is MatchStatus.INTERRUPTED and info.seed and info.final_hash
        assert all(queries.hands_recorded(db, m) >= n for m, n in hands_before.items())  # no finished hand lost
        db.close()
        verify = host.arena("verify", "--db", "league.db")
        assert verify.returncode == 0 and "FAIL" not in verify.stdout, verify.stdout[-2000:]
        assert host.process is not None
        host.process.send_signal(signal.SIGTERM)
        assert host.process.wait(timeout=60) == 0
    finally:
        host.kill()
        print((tmp_path / "host.log").read_text()[-3000:], file=sys.stderr)



def test_a_hosted_bot_plays_one_match_at_a_time_whatever_matches_per_bot_says(tmp_path: Path) -> None:
    """Its matches among hosted bots are duplicate: its process in another match, alive across both rotations of
    one, could relay that one's first half to its second (README, "Duplicate without memory")."""
    from types import SimpleNamespace

    from arena.league.host import LeagueHost, Resident
    from arena.ratings.league_ratings import LeagueRatings
    from arena.records.submissions import Submission

    def resident(name: str, playing: int) -> Resident:
        hosted = Resident(Submission(name, "1", "0" * 64, "python bot.py", 1, 0.0, "", 0, "", None, ""), "owner",
                          tmp_path)
        hosted.playing = playing
        return hosted

    host = SimpleNamespace(config=SimpleNamespace(matches_per_bot=3), members={}, ratings=LeagueRatings(),
                           residents={"idle": resident("idle", 0), "busy": resident("busy", 1)})
    free = {c.name: c.free for c in LeagueHost.candidates(host)}  # type: ignore[arg-type]
    assert free == {"idle": 1, "busy": 0}
