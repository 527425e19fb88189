"""Generate ``proto/python/arena_sdk/pb`` from ``proto/arena/v1/*.proto``: ``python -m arena.transport.build_proto``.

The stubs belong to the SDK package (``arena-sdk``), the public protocol that bots and arena alike import. They are
committed so that installing either needs no code generator; a test regenerates them
and fails if they differ from the ``.proto`` files. They are never edited by hand: protoc writes imports as
``from arena.v1 import ...`` (the proto package path), which this script points at ``arena_sdk.pb``.
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROTO_DIR = ROOT / "proto"
OUT_DIR = ROOT / "proto" / "python" / "arena_sdk" / "pb"
_IMPORT = re.compile(r"^from arena\.v1 import ", re.MULTILINE)


def generate() -> dict[str, str]:
    """Run protoc (grpcio-tools) with the mypy-protobuf plugins and return {file name: text}."""
    import os

    from grpc_tools import protoc  # dev dependency: only needed to regenerate

    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"  # plugins

    sources = sorted(str(p.relative_to(PROTO_DIR)) for p in (PROTO_DIR / "arena" / "v1").glob("*.proto"))
    with tempfile.TemporaryDirectory() as tmp:
        args = [
            "protoc",
            f"-I{PROTO_DIR}",
            f"-I{Path(protoc.__file__).parent / '_proto'}",
            f"--python_out={tmp}",
            f"--grpc_python_out={tmp}",
            f"--mypy_out={tmp}",
            f"--mypy_grpc_out={tmp}",
            *sources,
        ]
        if protoc.main(args) != 0:
            raise SystemExit("protoc failed")
        files = {}
        for path in sorted((Path(tmp) / "arena" / "v1").iterdir()):
            text = _IMPORT.sub("from arena_sdk.pb import ", path.read_text())
            files[path.name] = text
    files["__init__.py"] = '"""Generated from proto/arena/v1 by arena.transport.build_proto; do not edit."""\n'
    return files


def main() -> None:
    """Write the generated modules into ``proto/python/arena_sdk/pb``."""
    OUT_DIR.mkdir(exist_ok=True)
    for old in OUT_DIR.glob("*.py*"):
        old.unlink()
    for name, text in generate().items():
        (OUT_DIR / name).write_text(text)
    print(f"wrote {len(list(OUT_DIR.iterdir()))} files to {OUT_DIR}", file=sys.stderr)


if __name__ == "__main__":
    main()
