"""``arena compare`` as a CI job runs it: a subprocess with real bot processes over gRPC, read by its exit status
and its JSON file. The bots are the C++ sample bot's styles (they start in milliseconds): its own strategy clearly
beats its calling station (about +2,300 mbb/hand with the first test's seed), so each run decides within a couple of
hundred hands. The estimators' test plays the calling station against the seeded random bot, whose all-ins the all-in
estimator rescores."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

from arena.records import queries
from arena.records.db import Database
from arena.referee import MatchKind, MatchStatus
from tests.bots import caller, cpp, random_bot

SAMPLE = f"sample={cpp()}"
CALLER = f"caller={caller()}"


def _command() -> list[str]:
    """``arena compare``, as a user runs it."""
    return [sys.executable, "-m", "arena", "compare"]


def _run(tmp: Path, *args: str, json_name: str | None = "out.json", seed: str | None = None,
         ) -> tuple[int, dict[str, Any] | None, str]:
    """Run ``arena compare``; the seed, if any, goes through ARENA_SEED (a command line is readable by all)."""
    extra = ["--json", str(tmp / json_name)] if json_name else []
    env = {k: v for k, v in os.environ.items() if k != "ARENA_SEED"}
    if seed is not None:
        env["ARENA_SEED"] = seed
    proc = subprocess.run(
        [*_command(), "--db", str(tmp / "arena.db"), "-q", *extra, *args],
        capture_output=True, text=True, timeout=120, cwd=tmp, env=env,
    )
    data = None
    if json_name and (tmp / json_name).exists():
        data = json.loads((tmp / json_name).read_text())
    return proc.returncode, data, proc.stdout + proc.stderr


def test_better_candidate_exits_0_and_reports_everything(tmp_path: Path) -> None:
    code, data, output = _run(tmp_path, "--candidate", SAMPLE, "--baseline", CALLER, "--id", "ci1", seed="ci-1")
    assert code == 0, output
    assert data is not None
    assert data["verdict"] == "H1" and data["exit_code"] == 0 and data["errors"] == []
    assert data["summary"].startswith("H1 accepted: sample is better than caller")
    assert data["candidate"]["name"] == "sample" and data["baseline"]["name"] == "caller"
    test = data["test"]
    assert (test["mbb0"], test["mbb1"], test["alpha"], test["beta"]) == (0.0, 500.0, 0.05, 0.05)
    assert data["llr"] >= test["upper_bound"] > 0 > test["lower_bound"]
    low, high = data["estimate"]["ci95"]
    assert 0 < low < data["estimate"]["mbb_per_hand"] < high
    hands = data["hands"]
    assert hands["used"] == 2 * data["sessions"] == 2 * data["decided_after_sessions"]
    assert hands["used"] <= hands["played"] <= hands["max"] == 20000
    assert data["fixed_length_hands"] > 3 * hands["used"]
    assert data["seed"] == "ci-1" and len(data["commitment"]) == 64
    [match] = data["matches"]
    assert match["match_id"] == "ci1-h2h" and match["status"] == "stopped"
    assert "H1 accepted" in output and "95% CI" in output
    # recorded like any match: every hand, the match's status, the bots
    db = Database(tmp_path / "arena.db")
    assert queries.hands_recorded(db, "ci1-h2h") == hands["played"]
    info = queries.require(db, "ci1-h2h")
    assert (info.status, info.kind, info.event) == (MatchStatus.STOPPED, MatchKind.COMPARE, "ci1")
    assert match["final_hash"] == info.final_hash and len(info.final_hash) == 64
    assert queries.participants(db, "ci1-h2h") == [("sample", ""), ("caller", "")]
    db.close()
    # ... and re-verifiable from those hands alone
    code, verified, output = _run(tmp_path, "--verify", "ci1", json_name="verify.json")
    assert code == 0, output
    assert verified is not None and verified["verified"] is True
    assert (verified["verdict"], verified["llr"], verified["sessions"]) == ("H1", data["llr"], data["sessions"])


def test_worse_candidate_exits_1(tmp_path: Path) -> None:
    code, data, output = _run(tmp_path, "--candidate", CALLER, "--baseline", SAMPLE, seed="ci-2")
    assert code == 1, output
    assert data is not None and data["verdict"] == "H0" and data["exit_code"] == 1
    assert data["llr"] <= data["test"]["lower_bound"]
    assert data["estimate"]["ci95"][1] < 0


def test_hand_limit_exits_3_and_json_to_stdout(tmp_path: Path) -> None:
    proc = subprocess.run(
        [*_command(), "--db", str(tmp_path / "a.db"), "-q", "--json", "-", "--candidate", SAMPLE, "--baseline",
         CALLER, "--hands", "20"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )
    assert proc.returncode == 3, proc.stderr
    data = json.loads(proc.stdout)  # nothing but the JSON on standard output
    assert data["verdict"] == "inconclusive" and data["exit_code"] == 3 and data["test_verdict"] == "continue"
    assert data["hands"]["played"] == data["hands"]["used"] == data["hands"]["max"] == 20
    assert data["matches"][0]["status"] == "completed"
    assert "inconclusive" in proc.stderr


def test_errors_exit_2(tmp_path: Path) -> None:
    # arguments
    code, _, output = _run(tmp_path, "--candidate", "no-command", "--baseline", CALLER, json_name=None)
    assert code == 2 and "NAME=COMMAND" in output
    code, _, output = _run(tmp_path, "--candidate", SAMPLE, "--baseline", CALLER, "--mbb0", "10", "--mbb1", "5",
                           json_name=None)
    assert code == 2 and "M0 < M1" in output
    code, _, output = _run(tmp_path, "--candidate", SAMPLE, json_name=None)
    assert code == 2
    code, _, output = _run(tmp_path, "--candidate", SAMPLE, "--baseline", SAMPLE, json_name=None)
    assert code == 2 and "different names" in output
    code, data, output = _run(tmp_path, "--verify", "no-such-comparison")
    assert code == 2 and data is not None and data["verdict"] == "error"
    # a candidate that dies at once: reported as an error, not as "not better"
    crash = f"broken={shlex.quote(sys.executable)} -c 'raise SystemExit(3)'"
    code, data, output = _run(tmp_path, "--candidate", crash, "--baseline", CALLER, "--connect-timeout-ms", "1000",
                              "--id", "crash", seed="ci-4")
    assert code == 2, output
    assert data is not None and data["verdict"] == "error" and data["exit_code"] == 2
    assert any("broken" in e for e in data["errors"]), data["errors"]
    assert data["matches"][0]["status"] in ("no_show", "stopped")
    # the seed never goes on a command line
    code, _, output = _run(tmp_path, "--candidate", SAMPLE, "--baseline", CALLER, "--seed", "x", json_name=None)
    assert code == 2 and "--seed-file" in output and "ARENA_SEED" in output
    code, verified, output = _run(tmp_path, "--verify", "crash", json_name="verify.json")
    assert code == 2 and verified is not None and verified["verified"] is False


def test_the_allin_estimator_is_recorded_and_verified_with_the_comparison(tmp_path: Path) -> None:
    random = f"random={random_bot(3)}"
    runs = {}
    for estimator in ("raw", "allin"):
        folder = tmp_path / estimator
        folder.mkdir()
        played, data, output = _run(folder, "--candidate", CALLER, "--baseline", random, "--hands", "300",
                                    "--estimator", estimator, "--id", "est", seed="estimators")
        assert played in (0, 1, 3) and data is not None, output
        assert data["estimator"] == estimator and ("all-in EV" in output) == (estimator == "allin")
        runs[estimator] = data
        code, verified, output = _run(folder, "--verify", "est", json_name="verify.json")
        assert code == played and verified is not None and verified["verified"] is True, output  # same verdict
        assert verified["estimator"] == estimator and verified["llr"] == data["llr"]
    assert runs["raw"]["hands"]["played"] == runs["allin"]["hands"]["played"] or runs["raw"]["verdict"] == "H1"
    assert runs["raw"]["estimate"]["mbb_per_hand"] != runs["allin"]["estimate"]["mbb_per_hand"]  # all-ins rescored
