"""Run every benchmark: ``python -m tests.bench`` calls ``main()`` of each ``tests/bench/bench_*.py`` in name order."""

from __future__ import annotations

import importlib
import time
from pathlib import Path


def main() -> None:
    """Import each ``bench_*`` module of this package and run its ``main()`` under a header."""
    names = sorted(path.stem for path in Path(__file__).resolve().parent.glob("bench_*.py"))
    for name in names:
        print(f"\n===== {name} =====", flush=True)
        start = time.perf_counter()
        module = importlib.import_module(f"{__package__ or 'tests.bench'}.{name}")
        module.main()
        print(f"({name} took {time.perf_counter() - start:.1f} s)", flush=True)


if __name__ == "__main__":
    main()
