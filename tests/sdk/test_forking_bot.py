"""A Python bot that forks (a ``multiprocessing`` pool, then children that outlive gRPC's timers) keeps its stream
and is never late: gRPC as the SDK loads it (arena_sdk.grpc_tuning: no fork support) leaves the children alone and
keeps them off the inherited socket. With gRPC's fork support on, the pool hung; with it on and
``event_engine_client`` off, the children wrote the parent's HTTP/2 pings and the referee closed the connection for
too many pings: this test sees the time-outs, the reconnects and the decisions played for the bot."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.integrity.harness import CALLER, arena, by_name, match_json
from tests.sdk.forking_bot import FORKS

FORKER = Path(__file__).resolve().parent / "forking_bot.py"


def test_a_bot_that_forks_keeps_its_stream(tmp_path: Path) -> None:
    proc = arena("match", "--no-duplicate", "--hands", "6", "--per-action-ms", "5000", "--json", "--no-sandbox",
                 "--log-dir", str(tmp_path), "--bot", f"caller={CALLER}", "--bot", f"forker={sys.executable} {FORKER}",
                 cwd=tmp_path)
    result = match_json(proc)
    forker = by_name(result)["forker"]
    assert result["status"] == "completed" and not result.get("errors"), result.get("errors")
    assert forker["outcome"] == "ok" and forker["absent"] == 0 and forker["timeouts"] == 0, forker
    log = next(tmp_path.rglob("*-forker.log")).read_text(errors="replace")
    forked = [int(line.split()[1]) for line in log.splitlines() if line.startswith("FORKED ")]
    assert forked == [FORKS] and forker["decisions"] > FORKS, log[-2000:]
    assert "reconnect" not in log and "too_many_pings" not in log, log[-2000:]
