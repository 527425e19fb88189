"""Tournaments on a Ray cluster of two nodes on this machine (``ray.cluster_utils.Cluster``): the same records as a
local run of the same seed, also after a worker process, a node or the driver is killed in the middle (then
``--resume``), and no process left behind.

One cluster for the module (a head that runs no task, two nodes of two CPUs); each tournament is three short
matches of deterministic bots, one of which takes its time so that a match can be cut in its middle.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

os.environ["RAY_USAGE_STATS_ENABLED"] = "0"  # the cluster and every driver started here send nothing anywhere
ray = pytest.importorskip("ray")
from ray.cluster_utils import Cluster  # noqa: E402

from arena.deals import derive_seed  # noqa: E402
from arena.records import queries, submissions  # noqa: E402
from arena.records.db import Database  # noqa: E402
from arena.records.registry import Registry  # noqa: E402
from arena.referee import MatchKind, MatchStatus  # noqa: E402
from arena.runner.archive import SubmissionStore, pack  # noqa: E402
from arena.runner.ray_executor import CACHE_ENV  # noqa: E402
from tests.bots import cpp, random_bot  # noqa: E402
from tests.league.test_host import free_port  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
HANDS = 16  # per match: 8 deals, each played both ways
MATCHES = 3
pytestmark = pytest.mark.timeout(240)


def _config(folder: Path, name: str = "cup") -> Path:
    """A round-robin of three deterministic bots, one of them slow; every bot command is marked with ``folder``'s
    name (``ARENA_TEST_RUN=...``), which the bot processes carry in their command line or their environment."""
    (folder / "cup.seed").write_text("ray-test\n")
    # the slow caller (an SDK bot of these tests' own) takes its time, so that a match can be cut in its middle; the
    # other two are the C++ sample bot: its own strategy and its seeded random style
    bots = [("slow", f"{sys.executable} {Path(__file__).with_name('slow_caller.py')} --delay-ms 25"),
            ("sample", cpp()), ("random", random_bot(5))]
    text = f'name = "{name}"\nseed_file = "cup.seed"\nhands = {HANDS}\n[clock]\nper_action_ms = 20000\n'
    for bot, command in bots:
        text += f'[[bots]]\nname = "{bot}"\ncommand = "ARENA_TEST_RUN={_marker(folder)} {command}"\n'
    path = folder / "cup.toml"
    path.write_text(text)
    return path


def _records(db: Path) -> dict[str, list[tuple[object, ...]]]:
    """Everything recorded of the hands (not when they were played), and how each match ended."""
    conn = sqlite3.connect(db)
    queries = {
        "hands": "SELECT match_id, hand_number, deal, rotation, table_id, button, deck, board FROM hands ORDER BY 1, 2",
        "seats": "SELECT * FROM hand_seats ORDER BY match_id, hand_number, seat",
        "actions": "SELECT match_id, hand_number, seq, street, seat, kind, amount, cards, all_in, pot, how, request_id,"
                   " rejected FROM actions ORDER BY match_id, hand_number, seq",
        "matches": "SELECT id, status, seed, commitment, hands_total FROM matches ORDER BY id",
        "outcomes": "SELECT match_id, participant, outcome FROM match_bots ORDER BY 1, 2",
    }
    out = {name: conn.execute(sql).fetchall() for name, sql in queries.items()}
    conn.close()
    return out


def _arena(*args: str) -> list[str]:
    return [sys.executable, "-m", "arena", "tournament", *args, "--no-progress"]


def _marker(folder: Path) -> str:
    return f"ray-{folder.name}"


def _left_behind(folder: Path) -> list[str]:
    """Processes of a test's tournament still alive (as ``ps`` would list them): match workers, and the bots'
    sandboxes, shells and interpreters (marked with the folder's name)."""
    marker = _marker(folder).encode()
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            environ = (entry / "environ").read_bytes()
            state = next(line for line in (entry / "status").read_text().splitlines() if line.startswith("State:"))
        except (OSError, StopIteration):
            continue
        if "zombie" in state:
            continue
        ours = cmdline.startswith(sys.executable.encode())  # not a match worker of another checkout's suite
        if (ours and b"arena.runner.match_worker" in cmdline) or marker in cmdline or marker in environ:
            words = cmdline.replace(b"\0", b" ").decode(errors="replace")
            out.append(f"{entry.name}: {words}")
    return out


def _wait_until(check: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {seconds} s: {what}")
        time.sleep(0.05)


def _hands(db: Path) -> int:
    try:
        conn = sqlite3.connect(db)
        try:
            return int(conn.execute("SELECT COUNT(*) FROM hands").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def _parent(pid: int) -> int:
    return int(next(line for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                    if line.startswith("PPid:")).split()[1])


def _slow_match_worker() -> int | None:
    """The pid of a match worker playing a match of the slow bot (the parent of that bot's sandbox), if one runs:
    a match that still has many hands to go."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            if cmdline.split(b"\0")[0].endswith(b"bwrap") and b"slow_caller.py" in cmdline:
                parent = _parent(int(entry.name))
                if b"arena.runner.match_worker" in Path(f"/proc/{parent}/cmdline").read_bytes():
                    return parent
        except (OSError, StopIteration, ValueError):
            continue
    return None


def _victim(db: Path, levels: int) -> int:
    """Once hands are recorded: the process ``levels`` above a slow match's worker (1: its Ray worker process,
    2: the raylet of its node)."""
    found: list[int] = []

    def look() -> bool:
        pid = _slow_match_worker() if _hands(db) >= 4 else None
        try:
            for _ in range(levels):
                pid = _parent(pid) if pid is not None else None
        except (OSError, StopIteration):
            return False
        if pid is not None:
            found.append(pid)
        return pid is not None

    _wait_until(look, 120, "a slow match in play, with hands recorded")
    return found[0]


@pytest.fixture(scope="module")
def node_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the cluster's nodes keep hosted bots' archives and folders (their workers inherit the variable)."""
    return tmp_path_factory.mktemp("node-cache") / "submissions"


@pytest.fixture(scope="module")
def cluster(node_cache: Path) -> Iterator[Cluster]:
    """A head that runs no task and two nodes of two CPUs each."""
    os.environ[CACHE_ENV] = str(node_cache)
    fast_checks = {"health_check_initial_delay_ms": 0, "health_check_period_ms": 1000,
                   "health_check_failure_threshold": 3}  # a dead node is found within seconds, not half a minute
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False,
                                                            "_system_config": fast_checks})
    for _ in range(2):
        cluster.add_node(num_cpus=2)
    cluster.wait_for_nodes()
    yield cluster
    cluster.shutdown()


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[tuple[object, ...]]]:
    """The records of the tournament played locally, uninterrupted."""
    folder = tmp_path_factory.mktemp("local")
    subprocess.run(_arena(str(_config(folder)), "--db", str(folder / "whole.db")), check=True, capture_output=True,
                   cwd=folder)
    records = _records(folder / "whole.db")
    assert len(records["hands"]) == MATCHES * HANDS
    assert {row[1] for row in records["matches"]} == {"completed"}
    return records


def test_a_tournament_on_ray_records_what_a_local_run_does_though_a_worker_process_is_killed(
        cluster: Cluster, whole: dict[str, list[tuple[object, ...]]], tmp_path: Path) -> None:
    """The same records as the local run of the same seed, though the Ray worker process of a match is killed in
    its middle (the match plays on from its first lost hand); no process left behind, and no match's seed written
    anywhere in the cluster's session (its logs, sockets' neighbours, spilled objects). (A run with nothing killed
    was a test of its own until the suite had to fit in five minutes: it proves nothing this one does not.)"""
    config = _config(tmp_path)
    db = tmp_path / "ray.db"
    driver = subprocess.Popen(_arena(str(config), "--db", str(db), "--executor", "ray", "--ray-address",
                                     cluster.address),
                              cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    os.kill(_victim(db, 1), signal.SIGKILL)  # the Ray worker process running that match's task
    _, stderr = driver.communicate(timeout=180)
    assert driver.returncode == 0, stderr
    assert "its Ray worker was lost" in stderr and "played on from its first lost hand" in stderr
    assert _records(db) == whole
    # the match workers' process groups are killed as their tasks end, and a sandbox takes a moment to go (it once
    # was still there as the driver exited)
    _wait_until(lambda: not _left_behind(tmp_path), 30, f"no process left behind: {_left_behind(tmp_path)}")
    seeds = [derive_seed("ray-test", match_id).encode() for match_id, *_ in _records(db)["matches"]]
    session = Path(cluster.head_node.get_session_dir_path())  # every node's logs, sockets and spilled objects
    for path in (p for p in session.rglob("*") if p.is_file() and not p.is_socket()):
        data = path.read_bytes()
        assert not any(seed in data for seed in seeds), f"a match's seed is written in {path}"


def test_a_killed_driver_leaves_no_process_and_resume_finishes_the_same_tournament(
        cluster: Cluster, whole: dict[str, list[tuple[object, ...]]], tmp_path: Path) -> None:
    config = _config(tmp_path)
    db = tmp_path / "ray.db"
    arena = _arena(str(config), "--db", str(db), "--executor", "ray", "--ray-address", cluster.address)
    driver = subprocess.Popen(arena, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    _wait_until(lambda: _hands(db) >= 6, 120, "hands recorded")
    os.killpg(driver.pid, signal.SIGKILL)
    driver.wait()
    cut = _hands(db)
    assert 0 < cut < MATCHES * HANDS
    _wait_until(lambda: not _left_behind(tmp_path), 60, f"no process left behind: {_left_behind(tmp_path)}")
    done = subprocess.run([*arena, "--resume"], capture_output=True, text=True, cwd=tmp_path, timeout=180)
    assert done.returncode == 0, done.stderr
    assert _records(db) == whole
    assert not _left_behind(tmp_path)


def test_a_league_plays_its_hosted_bots_on_ray_shipping_each_by_its_hash(
        cluster: Cluster, node_cache: Path, tmp_path: Path) -> None:
    """``arena host --executor ray``: a table of hosted bots is a Ray task; the node gets the bots' archive from the
    object store by its SHA-256 and runs them from its own cache; the match is dealt in duplicate and recorded by
    the host as any other."""
    db = Database(tmp_path / "league.db")
    for name in ("caller", "random"):
        Registry(db).add(name, owner=name)
    data = pack(REPO / "sample_bots" / "python")
    sha = SubmissionStore.beside(db.path).put(data)  # as the submission desk leaves an accepted archive
    submissions.add(db, "caller", "1", sha, "python calling_station.py", len(data), "")
    submissions.add(db, "random", "1", sha, "python random_bot.py --seed 3", len(data), "")
    db.close()
    (tmp_path / "league.toml").write_text(f'name = "ray-league"\ngrpc = "127.0.0.1:{free_port()}"\nhttp = "off"\n'
                                          'hands = 4\nmatches_at_once = 1\n[matchmaking]\nwindow = 50\n')
    log = (tmp_path / "host.log").open("w")
    host = subprocess.Popen([sys.executable, "-m", "arena", "host", "league.toml", "--db", "league.db", "-v",
                             "--executor", "ray", "--ray-address", cluster.address], cwd=tmp_path, stdout=log,
                            stderr=subprocess.STDOUT)
    try:
        def finished() -> list[str]:
            if not (tmp_path / "league.db").exists():
                return []
            with contextlib.closing(Database(tmp_path / "league.db", read_only=True)) as read:
                return queries.finished_matches_of(read, "ray-league", MatchKind.LEAGUE)

        _wait_until(lambda: len(finished()) >= 2, 150, "two league matches played on Ray")
        host.send_signal(signal.SIGTERM)
        assert host.wait(timeout=60) == 0, (tmp_path / "host.log").read_text()[-3000:]
    finally:
        if host.poll() is None:
            host.kill()
            host.wait()
    with contextlib.closing(Database(tmp_path / "league.db", read_only=True)) as read:
        for match_id in finished()[:2]:
            info = queries.require(read, match_id)
            assert info.duplicate and info.status is MatchStatus.COMPLETED
            assert Counter(h.deal for h in queries.hand_results(read, match_id)) == {0: 2, 1: 2}
    assert (node_cache / "unpacked" / sha / "calling_station.py").is_file()  # shipped to the node by its hash
    assert (node_cache / "archives" / f"{sha}.tar").read_bytes() == data
    assert "hosted bots only on the ray executor" in (tmp_path / "host.log").read_text()


def test_a_node_that_dies_takes_its_matches_to_the_other_node(
        cluster: Cluster, whole: dict[str, list[tuple[object, ...]]], tmp_path: Path) -> None:
    config = _config(tmp_path)
    db = tmp_path / "ray.db"
    driver = subprocess.Popen(_arena(str(config), "--db", str(db), "--executor", "ray", "--ray-address",
                                     cluster.address),
                              cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    raylet = _victim(db, 2)  # match worker -> Ray worker -> the node's raylet
    node = next(n for n in cluster.worker_nodes if n.all_processes["raylet"][0].process.pid == raylet)
    cluster.remove_node(node, allow_graceful=False)  # the last test of the module: the cluster stays one node short
    _, stderr = driver.communicate(timeout=180)
    assert driver.returncode == 0, stderr
    # the node's death is seen as its Ray worker lost or as the match worker killed with it (status -9), whichever
    # reaches the driver first: both are a lost worker (ray_executor's MatchFailure ``lost``), played on
    assert "played on from its first lost hand" in stderr, stderr
    assert "its Ray worker was lost" in stderr or "exited with status -9 before the match ended" in stderr, stderr
    assert _records(db) == whole
    _wait_until(lambda: not _left_behind(tmp_path), 30, f"no process left behind: {_left_behind(tmp_path)}")
