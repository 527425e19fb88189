"""``python -m arena`` and the ``arena`` command: the environment's switches checked (``arena.switches``: read deep
inside a match, a bad one would end it with a traceback), then the command line."""

import sys

from arena import switches


def run() -> None:
    """The ``arena`` command."""
    try:
        switches.check()
    except switches.SwitchError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    from arena.cli import main  # imports the engine, which reads ARENA_ENGINE

    main()


if __name__ == "__main__":
    run()
