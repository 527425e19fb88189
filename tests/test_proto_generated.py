"""The committed generated code matches the .proto files (regenerate with ``python -m arena.transport.build_proto``)."""

from __future__ import annotations

from arena.transport.build_proto import OUT_DIR, generate


def test_generated_code_is_up_to_date() -> None:
    fresh = generate()
    committed = {p.name: p.read_text() for p in OUT_DIR.iterdir() if p.is_file()}
    stale = sorted(name for name in fresh.keys() | committed.keys() if fresh.get(name) != committed.get(name))
    assert stale == [], f"run `python -m arena.transport.build_proto`: {stale} differ from proto/"
