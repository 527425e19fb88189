"""The garbage collector of a process that referees: its young generation collected every ``YOUNG`` objects rather
than Python's default 700.

Reference counting frees nearly everything a decision makes (a view, a request's parts, a future, the engine's
tuples) at once; the cyclic collector only looks for cycles, and each of its young passes cost about 2 ms of CPU
here whatever it found. At the default it ran every 250 decisions or so: 0.9 of the referee's 12 s of CPU over
10,000 hands of two C++ bots at 64 tables, against 0.1 s at ``YOUNG`` (tests/bench/bench_tables.py's C++ row,
2026-12-04), with the same peak memory (62 MB). What the imports made is frozen out of the passes: a 20,000-hand
match of two C++ bots at 64 tables took 0.94, 0.99 and 0.96 of its time with it (three sets of four to six pairs,
2026-12-05: little, within the machine's noise); in the scoring worker, which sets its collector the same way, the
match took 0.93."""

from __future__ import annotations

import gc

YOUNG = 50_000


_frozen = False


def collect_in_batches() -> None:
    """Raise this process's young-generation threshold to ``YOUNG`` (never lower it; the older generations keep
    theirs), and the first time, collect once and freeze what is left (the imports, the set-up) out of every later
    pass. Called as a match begins: it is the process's setting from then on. Freezing only once keeps a long-lived
    server (a league) from freezing a finished match's objects, whose cycles would then never be freed."""
    global _frozen
    young, *older = gc.get_threshold()
    if young < YOUNG:
        gc.set_threshold(YOUNG, *older)
    if not _frozen:
        _frozen = True
        gc.collect()
        gc.freeze()
