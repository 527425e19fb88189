"""A real league played by bots in three languages: ``arena host`` as a process, and the JavaScript, C++ and Python
sample bots as processes joining with their API keys over TCP.

Each bot plays match after match on one stream against both others; ``arena verify`` accepts what was recorded;
after a SIGKILL of the host and a restart on the same port, the JavaScript and C++ bots join again by themselves
and play on; and a revoked key ends each one's process with a failure within seconds. Without Node.js the
JavaScript part is left out, and without cmake or g++ the C++ part (never in CI: see ``require_built``).
"""

from __future__ import annotations

import itertools
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from arena.records import queries
from arena.records.db import Database
from arena.referee import MatchKind
from arena.transport.server import port_is_free
from tests.bots import CPP_BOT
from tests.league.test_host import LEAGUE, League, free_port, wait_for, write_league_file
from tests.sdk.helpers import REPO, bot_env, require_built

JS_BOT = REPO / "sample_bots" / "javascript" / "bot.js"
PY_BOT = REPO / "sample_bots" / "python" / "random_bot.py"
MATCHES = 8  # finished before the host is killed

pytestmark = pytest.mark.timeout(400)


@dataclass(frozen=True)
class Entrant:
    """A registered bot of one language: how to start it (with its key as ``--key`` or ``ARENA_KEY``) and what its
    Join declares."""

    name: str
    language: str  # Join.language
    version: str  # Join.bot_version: each one's own default, or the one it was told
    command: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()
    key_as_argument: bool = False


def entrants() -> list[Entrant]:
    """The bots this machine can run: always Python; JavaScript with Node.js; C++ where it is built."""
    out = [Entrant("py", "python", "py-1", (sys.executable, str(PY_BOT)),
                   (("ARENA_BOT_SEED", "7"), ("ARENA_BOT_VERSION", "py-1")))]
    if shutil.which("node") is not None:
        if not (JS_BOT.parent / "node_modules").is_dir():
            pytest.fail("run `npm ci` in sample_bots/javascript (make test does)")
        out.append(Entrant("js", "javascript", "js-2", ("node", str(JS_BOT)), (("ARENA_BOT_VERSION", "js-2"),)))
    try:
        require_built(CPP_BOT)
    except pytest.skip.Exception as skipped:  # no cmake or g++ here (and not CI): play without the C++ bot
        print(f"\nthe C++ part is left out: {skipped}")
    else:
        out.append(Entrant("cpp", "cpp", "cpp-3", (str(CPP_BOT), "--bot-version", "cpp-3"), key_as_argument=True))
    if len(out) < 2:
        pytest.skip("neither Node.js nor the C++ bot is available")
    return out


@pytest.fixture
def league(tmp_path: Path) -> Iterator[League]:
    grpc, http = free_port(), free_port()
    write_league_file(tmp_path, grpc, http, matches_at_once=2)
    lg = League(tmp_path, grpc, http)
    try:
        yield lg
    finally:
        lg.stop()


def register(league: League, name: str) -> None:
    out = league.arena("bots", "add", name, "--db", "league.db", "--owner", f"owner-{name}")
    assert out.returncode == 0, out.stderr
    league.keys[name] = out.stdout.strip().splitlines()[-1]


def start(league: League, bot: Entrant) -> None:
    env = bot_env(ARENA_ADDRESS=f"127.0.0.1:{league.grpc}", **dict(bot.env))
    command = list(bot.command)
    if bot.key_as_argument:
        command += ["--key", league.keys[bot.name]]
    else:
        env["ARENA_KEY"] = league.keys[bot.name]
    log = (league.folder / f"{bot.name}.log").open("ab")
    league.bots[bot.name] = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT,
                                             cwd=league.folder)


def finished_by_bot(league: League) -> dict[str, set[str]]:
    """The finished matches each bot played."""
    db = Database(league.db, read_only=True)
    try:
        out: dict[str, set[str]] = {}
        for match_id in queries.finished_matches_of(db, LEAGUE, MatchKind.LEAGUE):
            for name, _version in queries.participants(db, match_id):
                out.setdefault(name, set()).add(match_id)
        return out
    finally:
        db.close()


def test_javascript_cpp_and_python_bots_play_a_league_rejoin_after_a_restart_and_stop_when_revoked(
    league: League,
) -> None:
    bots = entrants()
    for bot in bots:
        register(league, bot.name)
    league.start_host()
    for bot in bots:
        start(league, bot)

    # Match after match on one stream each, every bot against every other
    wait_for(f"{MATCHES} finished matches", lambda: len(league.finished()) >= MATCHES, timeout=150)
    db = Database(league.db, read_only=True)
    try:
        ids = queries.finished_matches_of(db, LEAGUE, MatchKind.LEAGUE)
        tables = {m: queries.participants(db, m) for m in ids}
        joins = {m: queries.joined(db, m) for m in ids}
    finally:
        db.close()
    by_name = {b.name: b for b in bots}
    met: set[frozenset[str]] = set()
    for match_id, seated in tables.items():
        met.add(frozenset(name for name, _ in seated))
        for participant, (name, version) in enumerate(seated):
            assert version == by_name[name].version, (match_id, name, version)  # --bot-version, ARENA_BOT_VERSION
            said = joins[match_id][participant]
            assert {j.language for j in said} == {by_name[name].language}, (match_id, name, said)
    assert met >= {frozenset(pair) for pair in itertools.combinations(by_name, 2)}, met
    assert all(league.bots[b.name].poll() is None for b in bots)  # nobody left at a MatchEnd
    for bot in bots:
        if bot.language != "python":
            log = league.log(bot.name)
            assert log.count("joining the league") == 1, log[-3000:]  # one stream for all its matches
            assert len(re.findall(r"match \S+ against \S+ over \(MATCH_END_REASON_COMPLETED\)", log)) >= 2, log[-3000:]
    verify = league.arena("verify", "--db", "league.db")
    assert verify.returncode == 0 and "FAIL" not in verify.stdout, verify.stdout[-2000:] + verify.stderr[-2000:]

    # SIGKILL, then the host again on the same port: the bots join again by themselves and play on
    assert league.host is not None
    league.host.send_signal(signal.SIGKILL)
    league.host.wait()
    before = finished_by_bot(league)
    # A connection the killed host closed first (the JavaScript bot's) lingers in TIME_WAIT on the host's port for up
    # to a minute: the port counts as free (as gRPC binds it, with SO_REUSEADDR), so the host starts again at once
    assert port_is_free("127.0.0.1", league.grpc) is None
    league.start_host()
    others = [b for b in bots if b.language != "python"]

    def played_on() -> bool:
        now = finished_by_bot(league)
        return all(len(now.get(b.name, set()) - before.get(b.name, set())) >= 2 for b in others)

    wait_for("more matches of every bot after the restart", played_on, timeout=120)
    for bot in others:
        assert league.bots[bot.name].poll() is None, league.log(bot.name)[-3000:]
        log = league.log(bot.name)
        assert log.count("joining the league") >= 2 and "joining again in" in log, log[-3000:]

    # A revoked key: the host ends the stream with a fatal Error, and the bot exits with a failure
    for bot in sorted(others, key=lambda b: b.language != "cpp"):  # the C++ bot first, then the JavaScript one
        out = league.arena("bots", "revoke", bot.name, "--db", "league.db")
        assert out.returncode == 0, out.stderr
        code = league.bots[bot.name].wait(timeout=15)
        log = league.log(bot.name)
        assert code != 0, log[-3000:]
        assert re.search(r"the league ended this bot's stream: ERROR_CODE_BAD_TOKEN: .*revoked.*; exiting", log), (
            log[-3000:])
    assert league.bots["py"].poll() is None
