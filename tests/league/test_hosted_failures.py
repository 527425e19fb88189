"""A league host in this process playing hosted bots beside a remote one: tables of hosted bots only are dealt in
duplicate, tables with the remote bot fresh; a hosted bot that passed its validation but crashes in its matches has
each failure recorded with the reason and is retired after ``retire_after`` of them, while the league goes on; its
page says why."""

from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from arena.league.admin import AdminServicer
from arena.league.host import LeagueHost
from arena.league.settings import LeagueConfig
from arena.league.submissions import SubmissionDesk
from arena.records import queries, submissions
from arena.records.db import Database
from arena.records.registry import Registry
from arena.referee import BotOutcome, MatchKind
from arena.runner.archive import pack
from tests.bots import random_bot
from tests.league.test_admin import until
from tests.league.test_host import free_port

pytestmark = pytest.mark.timeout(300)

REPO = Path(__file__).resolve().parents[2]
LEAGUE = "hosted-failures"


def test_a_failing_hosted_bot_is_retired_with_its_reason_and_the_league_goes_on(tmp_path: Path) -> None:
    asyncio.run(scenario(tmp_path))
    out = subprocess.run([sys.executable, "-m", "arena", "publish", "--db", str(tmp_path / "league.db"), "--out",
                          str(tmp_path / "site")], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    [page] = [p for p in (tmp_path / "site" / "bots").glob("*.html") if "<h1 class=\"bot-name\">c@1</h1>" in
              p.read_text()]
    text = page.read_text()
    assert "retired: failed in 2 matches (the last: crashed (exited with status 3" in text
    assert "crasher: not the validation&#39;s opponent, leaving" in text  # its last words, on the page


async def scenario(tmp_path: Path) -> None:
    db = Database(tmp_path / "league.db")
    registry = Registry(db)
    keys = {name: registry.add(name, owner=name) for name in ("a", "c", "r")}
    port = free_port()
    config = LeagueConfig.from_dict({
        "name": LEAGUE, "grpc": f"127.0.0.1:{port}", "http": "off", "hands": 2, "matches_at_once": 2,
        "clock": {"per_action_ms": 3000, "reconnect_grace_ms": 300}, "matchmaking": {"window": 50},
        "submissions": {"retire_after": 2, "validate_hands": 2, "validate_against": ["caller"]}}, tmp_path)
    host = LeagueHost(config, db)
    await host.start()
    desk = SubmissionDesk(host)
    good = await desk.take(registry.get("a"), "python calling_station.py", "", pack(REPO / "sample_bots" / "python"))
    bad = await desk.take(registry.get("c"), "python crasher.py", "", pack(Path(__file__).parent / "hosted_bots"))
    assert good.accepted and bad.accepted, (good, bad)  # the crasher passes its validation
    status = AdminServicer(host, "t" * 32).status()  # what arena league status shows
    assert [(b.name, b.version, b.peer) for b in status.bots] == [("a", "1", "hosted"), ("c", "1", "hosted")]
    env = {**os.environ, "ARENA_ADDRESS": f"127.0.0.1:{port}", "ARENA_KEY": keys["r"]}
    remote = await asyncio.create_subprocess_exec(*shlex.split(random_bot(5)), env=env,
                                                  stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
    stop = asyncio.Event()
    running = asyncio.create_task(host.run(stop))
    try:
        retired = await until("c retired", lambda: (s := submissions.find(db, "c", "1")) is not None
                              and not s.active and s, timeout=180)
        assert "c" not in host.residents
        done = len(queries.finished_matches_of(db, LEAGUE, MatchKind.LEAGUE))
        await until("two more matches without c", lambda: len(queries.finished_matches_of(
            db, LEAGUE, MatchKind.LEAGUE)) >= done + 2, timeout=120)
    finally:
        stop.set()
        await running
        await host.stop()
        remote.kill()
        await remote.wait()

    assert retired.failures == 2 and retired.retired_reason.startswith("failed in 2 matches (the last: crashed")
    finished = queries.finished_matches_of(db, LEAGUE, MatchKind.LEAGUE)
    tables = {m: [p.name for p in queries.participants(db, m)] for m in finished}
    for match_id, names in tables.items():
        info = queries.require(db, match_id)
        assert info.duplicate is ("r" not in names), (match_id, names)  # duplicate among hosted bots only
    assert any("r" not in names for names in tables.values()) and any("r" in names for names in tables.values())
    outcomes = [o for o in queries.bot_outcomes(db, finished) if o.name == "c"]
    crashed = [o for o in outcomes if o.outcome is BotOutcome.CRASHED]
    assert len(crashed) == 2 and all("exited with status 3" in o.detail for o in crashed), outcomes
    later = finished[-2:]
    assert all("c" not in tables[m] for m in later)  # the league went on without it
    assert submissions.find(db, "a", "1").failures == 0  # type: ignore[union-attr]
    db.close()
