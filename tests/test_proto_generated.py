"""The committed generated code matches the .proto files (regenerate with ``python -m arena.transport.build_proto``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from arena.transport.build_proto import OUT_DIR

GENERATE = """
import json, sys
from arena.transport.build_proto import generate
with open(sys.argv[1], "w") as out:
    json.dump(generate(), out)
"""


def test_generated_code_is_up_to_date(tmp_path: Path) -> None:
    """protoc runs in a process of its own: its compiler carries its own protobuf and abseil, and once aborted in a
    test worker that had loaded Ray's and gRPC's copies (and it sets the process's PATH for its plugins)."""
    out = tmp_path / "generated.json"
    subprocess.run([sys.executable, "-c", GENERATE, str(out)], check=True, capture_output=True, timeout=120)
    fresh = json.loads(out.read_text())
    committed = {p.name: p.read_text() for p in OUT_DIR.iterdir() if p.is_file()}
    stale = sorted(name for name in fresh.keys() | committed.keys() if fresh.get(name) != committed.get(name))
    assert stale == [], f"run `python -m arena.transport.build_proto`: {stale} differ from proto/"
