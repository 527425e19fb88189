"""The layers of ../shared/ARCHITECTURE.md, asserted: each package of ``arena`` imports only the packages of the
layers before it, and the bots' SDK (``arena_sdk``, its own package in proto/python) imports nothing from arena, so
the shape of the code cannot decay without this test saying where.

Imports are read from the source (every ``import arena.x`` and ``from arena.x import``, at any depth, lazy ones
inside functions too); for the SDK, also from what importing each of its modules loads.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import arena
import arena_sdk
from tests.sdk.helpers import REFEREE_DEPENDENCIES

PACKAGE = Path(arena.__file__).resolve().parent
SDK = Path(arena_sdk.__file__).resolve().parent

LAYERS: tuple[tuple[str, ...], ...] = (
    ("text", "switches", "scratch"),  # untrusted text made safe for terminals, file names and pages; the
    # environment's switches (ARENA_ENGINE, ARENA_TABLE_LOOP); scratch folders that a killed process's successor
    # sweeps: needed everywhere, need nothing
    ("cards",),
    ("engine",),
    ("adapters",),  # beside the SDK, outside the referee: built on arena_sdk and the engine's types only
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
earlier layer. The adapters (ARCHITECTURE.md: "Adapters sit beside the SDK, outside the referee") come right after
the engine: they may use the cards and the engine's types (and the SDK, which is not arena), nothing of the
referee, the transport or the runner; the runner and the CLI start them."""



def imported(source: str) -> list[str]:
    """The modules a file's source imports by absolute name, at any depth."""
    names: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
        elif isinstance(node, ast.Import):
            names.extend(a.name for a in node.names)
    return names


def imports() -> dict[tuple[str, str], list[str]]:
    """(importing package, imported package) -> the files where it happens."""
    found: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        source = path.relative_to(PACKAGE).parts[0].removesuffix(".py")
        for name in imported(path.read_text(encoding="utf-8")):
            if name.startswith("arena.") and (target := name.split(".")[1]) != source:
                found[source, target].append(str(path.relative_to(PACKAGE.parent)))
    return found


def of_arena(names: list[str]) -> list[str]:
    """The names that are arena or one of its modules (``arena_sdk`` is not)."""
    return [n for n in names if n == "arena" or n.startswith("arena.")]


def allowed(source: str, target: str) -> bool:
    level = {name: i for i, names in enumerate(LAYERS) for name in names}
    if source not in level or target not in level:
        return False
    return level[target] < level[source]


def test_every_package_is_placed_in_a_layer() -> None:
    placed = {name for names in LAYERS for name in names}
    present = {p.name.removesuffix(".py") for p in PACKAGE.iterdir()
               if (p.is_dir() and (p / "__init__.py").exists()) or (p.suffix == ".py" and p.name != "__init__.py")}
    assert present <= placed, f"place these in LAYERS: {sorted(present - placed)}"


def test_each_package_imports_only_the_layers_before_it() -> None:
    broken = {pair: files for pair, files in imports().items() if not allowed(*pair)}
    lines = [f"  {source} -> {target}: {', '.join(sorted(set(files)))}"
             for (source, target), files in sorted(broken.items())]
    assert not broken, "imports against the layers of ARCHITECTURE.md:\n" + "\n".join(lines)


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


def test_the_adapters_stand_on_the_sdk_and_the_engine_only() -> None:
    """An adapter (the ACPC bridge) is one more bot to the referee: it imports the cards, the engine's types and the
    SDK, never the referee, the transport or the runner, which may start it."""
    used = {target for source, target in imports() if source == "adapters"}
    assert used, "the adapters import nothing of arena: is arena/adapters still there?"
    assert used <= {"text", "cards", "engine"}, f"the adapters import {sorted(used)}"
    for inner in ("deals", "referee", "transport", "runner"):
        assert not allowed("adapters", inner)  # positive control: such an import is reported
    assert allowed("runner", "adapters") and allowed("cli", "adapters")


def test_the_sdk_imports_nothing_from_arena() -> None:
    """The bots' package stands alone (ARCHITECTURE.md: "The SDK is its own light package"): no file of arena_sdk,
    generated stubs included, imports arena; the same check finds an import of the referee where there is one."""
    found = {str(path.relative_to(SDK.parent)): bad for path in sorted([*SDK.rglob("*.py"), *SDK.rglob("*.pyi")])
             if (bad := of_arena(imported(path.read_text(encoding="utf-8"))))}
    assert not found, f"arena_sdk imports arena: {found}"
    seat = "from arena.referee import Seat\nimport arena_sdk.pb\n\ndef later():\n    import arena\n"
    assert of_arena(imported(seat)) == ["arena.referee", "arena"]  # positive control


def _loaded_by_importing_the_sdk(extra: str = "") -> list[str]:
    """Importing every module of arena_sdk (then ``extra``) in a fresh interpreter: the arena modules and the
    referee's dependencies that got loaded."""
    script = (
        "import importlib, pkgutil, sys\n"
        "import arena_sdk\n"
        "for m in pkgutil.walk_packages(arena_sdk.__path__, 'arena_sdk.'):\n"
        "    importlib.import_module(m.name)\n"
        f"{extra}\n"
        f"heavy = {sorted(REFEREE_DEPENDENCIES)!r}\n"
        "print(' '.join(sorted(m for m in sys.modules if m == 'arena' or m.startswith('arena.')\n"
        "                      or m.split('.')[0] in heavy)))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    return proc.stdout.split()


def test_importing_every_sdk_module_loads_nothing_of_arena_nor_its_dependencies() -> None:
    assert _loaded_by_importing_the_sdk() == []
    assert "arena.cards" in _loaded_by_importing_the_sdk("import arena.cards")  # positive control
