"""Matches per minute by executor: the same round-robin (five Python SDK bots, ten heads-up duplicate matches,
sandboxed) played in the same run by the local executor, then by the Ray executor on a local cluster of one node and
of two nodes (``ray.cluster_utils.Cluster``: every node on this machine, two CPUs each, so two nodes share the same
two cores).

Figures: matches per minute from the first match submitted to the last recorded (the cluster's start-up is printed
apart, not counted), and hands per second. Printed, never asserted.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from arena.records import queries
from arena.records.db import Database
from arena.records.ledger import Ledger
from arena.runner.executor import LocalExecutor, MatchExecutor
from arena.runner.tournament import TournamentConfig, run_tournament, schedule

REPO = Path(__file__).resolve().parents[2]
HANDS = 40  # per match: short matches, where starting the bots weighs most
NODE_CPUS = 2


def config(folder: Path) -> TournamentConfig:
    """The round-robin, with a fixed seed."""
    python = sys.executable
    bots = [{"name": "caller", "command": f"{python} {REPO}/sample_bots/python/calling_station.py"}]
    bots += [{"name": f"random{k}", "command": f"{python} {REPO}/sample_bots/python/random_bot.py --seed {k}"}
             for k in range(1, 5)]
    data = {"name": "bench", "hands": HANDS, "bots": bots, "clock": {"per_action_ms": 10000}}
    return dataclasses.replace(TournamentConfig.from_dict(data, folder), seed="bench-seed")


def play(make: Callable[[], MatchExecutor], label: str, setup_s: float = 0.0) -> None:
    """One run of the round-robin with a fresh database; print its figures."""
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as scratch:
        folder = Path(scratch)
        db = Database(folder / "bench.db")
        cup = config(folder)
        executor = make()
        started = time.perf_counter()
        asyncio.run(run_tournament(cup, Ledger(db), executor=executor))
        seconds = time.perf_counter() - started
        matches = len(schedule(cup))
        hands = sum(queries.hands_recorded(db, m.match_id) for m in schedule(cup))
        at_once = executor.matches_at_once(cup.workers)
        executor.close()
        db.close()
    setup = f", cluster start-up {setup_s:.1f} s (not counted)" if setup_s else ""
    print(f"{label:<28} {matches} matches ({at_once} at once) in {seconds:6.1f} s: {60 * matches / seconds:6.1f} "
          f"matches/min, {hands / seconds:6.1f} hands/s{setup}", flush=True)


def ray_cluster(nodes: int) -> None:
    """The round-robin on a local Ray cluster of ``nodes`` nodes (the head runs no match)."""
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"  # the cluster sends nothing anywhere
    import ray
    from ray.cluster_utils import Cluster

    from arena.runner.ray_executor import RayExecutor

    started = time.perf_counter()
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
    for _ in range(nodes):
        cluster.add_node(num_cpus=NODE_CPUS)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, logging_level="ERROR", log_to_driver=False)
    setup = time.perf_counter() - started
    try:
        play(RayExecutor, f"ray, {nodes} node(s) of {NODE_CPUS} CPUs", setup)
    finally:
        ray.shutdown()
        cluster.shutdown()


def main() -> None:
    """Local, then Ray with one node, then two."""
    play(LocalExecutor, "local")
    try:
        import ray  # noqa: F401
    except ImportError:
        print("ray is not installed (pip install -e '.[ray]'): no Ray figures")
        return
    for nodes in (1, 2):
        ray_cluster(nodes)


if __name__ == "__main__":
    main()
