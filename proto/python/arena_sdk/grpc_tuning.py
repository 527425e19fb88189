"""gRPC's own experiments that the referee and the SDK's bots turn off in their process, as gRPC is first imported.

grpcio 1.85 serves each connection's reads and writes on its EventEngine's threads and hands every completion to
the thread that polls for the event loop; with the experiments below turned off it does the I/O on that polling
thread itself, as gRPC long did. On this project's two-core machine that took 10 to 17% off the wall time of a
match (``farm-bench`` paired runs of ``arena match`` against the code before: C++ bots 0.904 at 64 tables and 0.831
at one table; Python SDK bots at 64 tables, the referee and the bots tuned, 0.867), with fewer threads woken for
each message.

``event_engine_client`` stays on, on purpose. Off in a bot, its channel's connection left EventEngine's four threads
idle and took 7% off the wall time of Python bots at 64 tables (paired, 2026-12-06), but a bot that forks then breaks
its own stream: the children of tests/integrity/cheats/spinner.py sent the parent's HTTP/2 pings on the inherited
socket (gRPC's trace shows their process ids writing), and the referee closed the connection for too many pings
(tests/integrity/test_bot_cgroup.py failed every time). A bot may fork (``multiprocessing`` does on Linux); with the
experiment on, its children stay off the socket.

gRPC reads ``GRPC_EXPERIMENTS`` once, as its core loads, so ``import_grpc`` sets the variable for that import only
and then puts the environment back as it was: no process started afterwards (a bot above all: other gRPC
libraries, such as the C++ sample bot's libgrpc++ 1.51, log an error for each name they do not know) inherits it.
Nothing is set when gRPC is loaded already, when the variable is set already (the user's own choice wins), or for a
grpcio whose experiments were not measured here (an unknown name makes gRPC log an error as it loads).
"""

from __future__ import annotations

import os
import re
import sys
from importlib.util import find_spec
from pathlib import Path

VARIABLE = "GRPC_EXPERIMENTS"
EXPERIMENTS = "-event_engine_listener,-event_engine_for_all_other_endpoints,-event_engine_callback_cq"
MEASURED = ((1, 85),)  # grpcio releases (major, minor) these were measured on (the newest the registry has)

applied = False  # whether this process's gRPC was loaded with them


def installed_version() -> str:
    """The installed grpcio's version, read from its ``grpc/_grpcio_metadata.py`` without loading gRPC ('' if it
    cannot be read). Not ``importlib.metadata``: loading that took 21 ms of every bot's and referee's start."""
    spec = find_spec("grpc")
    if spec is None or spec.origin is None:
        return ""
    try:
        text = (Path(spec.origin).parent / "_grpcio_metadata.py").read_text()
    except OSError:
        return ""
    found = re.search(r"""__version__\s*=\s*['"]+([^'"]+)""", text)
    return found.group(1) if found else ""


def _measured_release() -> bool:
    """Whether the installed grpcio is one of the ``MEASURED`` releases."""
    try:
        major, minor = (int(part) for part in installed_version().split(".")[:2])
    except ValueError:
        return False
    return (major, minor) in MEASURED


def import_grpc() -> None:
    """Load gRPC, with ``EXPERIMENTS`` turned off if it is not loaded yet (see the module's documentation)."""
    global applied
    if "grpc" in sys.modules or VARIABLE in os.environ or not _measured_release():
        import grpc  # loaded as it is

        return
    os.environ[VARIABLE] = EXPERIMENTS
    try:
        import grpc  # noqa: F401  (its core reads the variable now)
        applied = True
    finally:
        del os.environ[VARIABLE]
