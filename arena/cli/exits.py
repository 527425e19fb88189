"""The exit statuses of ``arena match``, ``serve``, ``tournament`` and ``demo`` (``arena compare`` has its own,
for CI: see its help)."""

EXIT_OK = 0  # every scheduled hand was played and every bot played its part
EXIT_ERROR = 1  # the command could not do its work: a bad database, no sandbox, a taken port, a failed verification
EXIT_USAGE = 2  # bad arguments or configuration
EXIT_BOT_FAILED = 4  # it ran, but a bot never connected, crashed, forfeited or was disconnected
EXIT_INTERRUPTED = 130  # stopped with Ctrl-C; what was played is recorded, --resume finishes it
