"""The layers of ../shared/ARCHITECTURE.md, asserted: each package of ``arena`` imports only the packages of the
layers before it, so the shape of the code cannot decay without this test saying where.

Imports are read from the source (every ``import arena.x`` and ``from arena.x import``, at any depth, lazy ones
inside functions too), not from what happens to be loaded.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import arena

PACKAGE = Path(arena.__file__).resolve().parent

LAYERS: tuple[tuple[str, ...], ...] = (
    ("text",),  # untrusted text made safe for terminals, file names and pages: needed everywhere, needs nothing
    ("cards",),
    ("engine",),
    ("deals",),
    ("referee",),
    ("transport",),
    ("runner",),
    ("records",),
    ("ratings",),
    ("publish",),
    ("league",),
    ("cli",),
    ("__main__",),
)
"""Layer by layer, in order (ARCHITECTURE.md, "Layers"; its ninth, publishing and the CLI, is the site, then the
league host that publishes it live, then the command that starts either); a package may import any package of an
earlier layer."""

SIDE: dict[str, frozenset[str]] = {
    "sdk": frozenset({"text", "cards", "engine", "transport"}),  # the bot side: cards, engine types and the wire
}
"""Packages beside the layers, with what they may import (ARCHITECTURE.md: "adapters and SDK: only cards, engine
types and transport")."""

KNOWN: frozenset[tuple[str, str]] = frozenset({
    ("sdk", "referee"),  # the SDK's in-process seat for tests and benchmarks: to move out of the bot-side package
})
"""Imports that break the layers today and are to go (issue 26). Each must still be there: when one is fixed, take
it off this list, so that it cannot come back."""


def imports() -> dict[tuple[str, str], list[str]]:
    """(importing package, imported package) -> the files where it happens."""
    found: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).parts
        if parts[0] == "transport" and "pb" in parts:
            continue  # generated code
        source = parts[0].removesuffix(".py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
                     else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            for name in names:
                if name.startswith("arena.") and (target := name.split(".")[1]) != source:
                    found[source, target].append(str(path.relative_to(PACKAGE.parent)))
    return found


def allowed(source: str, target: str) -> bool:
    if source in SIDE:
        return target in SIDE[source]
    level = {name: i for i, names in enumerate(LAYERS) for name in names}
    if source not in level or target not in level:
        return False
    return level[target] < level[source]


def test_every_package_is_placed_in_a_layer() -> None:
    placed = {name for names in LAYERS for name in names} | set(SIDE)
    present = {p.name.removesuffix(".py") for p in PACKAGE.iterdir()
               if (p.is_dir() and (p / "__init__.py").exists()) or (p.suffix == ".py" and p.name != "__init__.py")}
    assert present <= placed, f"place these in LAYERS or SIDE: {sorted(present - placed)}"


def test_each_package_imports_only_the_layers_before_it() -> None:
    broken = {pair: files for pair, files in imports().items() if not allowed(*pair) and pair not in KNOWN}
    lines = [f"  {source} -> {target}: {', '.join(sorted(set(files)))}"
             for (source, target), files in sorted(broken.items())]
    assert not broken, "imports against the layers of ARCHITECTURE.md:\n" + "\n".join(lines)


def test_the_known_exceptions_are_still_there() -> None:
    present = set(imports())
    gone = sorted(KNOWN - present)
    assert not gone, f"fixed: take {gone} off KNOWN in tests/test_layering.py"


def test_only_the_records_touch_sqlite() -> None:
    """Nobody outside arena.records opens a database, writes SQL or sees a row (ARCHITECTURE.md, "Results in types"):
    no other module imports sqlite3."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).parts
        if parts[0] == "records":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([node.module] if isinstance(node, ast.ImportFrom) and node.module
                     else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            if any(name == "sqlite3" or name.startswith("sqlite3.") for name in names):
                found.append(str(path.relative_to(PACKAGE.parent)))
    assert not found, f"sqlite3 imported outside arena/records: {found}"
