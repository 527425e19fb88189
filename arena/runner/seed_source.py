"""Where a match's or tournament's seed comes from, so that it never sits where a bot could read it: a file given
with ``--seed-file`` (or ``seed_file`` in a tournament file), else the referee's environment variable ``ARENA_SEED``
(which no bot inherits), else the seed kept from an earlier start of the same event (a resume), else a fresh secret
seed. Never a command-line argument: every process on the machine can read those (/proc/PID/cmdline).
"""

from __future__ import annotations

import os
from pathlib import Path

from arena.deals import new_seed

SEED_ENV = "ARENA_SEED"
SEED_ON_COMMAND_LINE = (
    "--seed would put the seed on a command line, where every process on this machine can read it "
    "(/proc/PID/cmdline): put it in a file and pass --seed-file PATH, or set the environment variable ARENA_SEED"
)


class SeedError(ValueError):
    """A seed file that cannot be read or is empty."""


def read_seed_file(path: Path) -> str:
    """The seed in a file: its text without surrounding whitespace."""
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError as exc:  # its reason in words, without Python's "[Errno 2] ...: 'path'"
        raise SeedError(f"cannot read the seed file {path}: {(exc.strerror or str(exc)).lower()}") from None
    except UnicodeDecodeError as exc:
        raise SeedError(f"cannot read the seed file {path}: not UTF-8 text ({exc.reason} at byte {exc.start})"
                        ) from None
    if not text:
        raise SeedError(f"the seed file {path} is empty")
    return text


def given_seed(seed_file: Path | None) -> str | None:
    """The seed the operator gave: from ``seed_file``, else from ``ARENA_SEED``, else None."""
    if seed_file is not None:
        return read_seed_file(seed_file)
    value = os.environ.get(SEED_ENV, "").strip()
    return value or None


def choose_seed(seed_file: Path | None, kept: str | None = None) -> str:
    """The seed to deal from: the operator's, else the one kept from an earlier start, else a fresh secret one."""
    return given_seed(seed_file) or kept or new_seed()
