"""gRPC's own experiments that the referee and the SDK's bots turn off in their process (and a bot's fork support), as
gRPC is first imported.

grpcio 1.85 serves each connection's reads and writes on its EventEngine's threads and hands every completion to
the thread that polls for the event loop; with the experiments below turned off it does the I/O on that polling
thread itself, as gRPC long did. On this project's two-core machine that took 10 to 17% off the wall time of a
match (``farm-bench`` paired runs of ``arena match`` against the code before: C++ bots 0.904 at 64 tables and 0.831
at one table; Python SDK bots at 64 tables, the referee and the bots tuned, 0.867), with fewer threads woken for
each message.

A bot (``import_grpc(bot=True)``) also loads gRPC without its fork support (``GRPC_ENABLE_FORK_SUPPORT=0``) and with
``event_engine_client`` off. Fork support is what gRPC runs around a ``fork()``: with it, a bot whose ``act`` used a
``multiprocessing`` pool (fork is its default on Linux up to Python 3.13) hung in the pool in 4 matches of 15, and with
``event_engine_client`` off as well, the children of tests/integrity/cheats/spinner.py restarted gRPC's timers and sent
the parent's HTTP/2 pings on the inherited socket, so the referee closed the connection for too many pings (gRPC's trace
shows the children's process ids writing). Without it a child is a plain copy: gRPC's threads are not in it and nothing
of gRPC runs there (a bot's children never use gRPC; one that does must be started with ``spawn``). Both:
tests/sdk/test_forking_bot.py. ``event_engine_client`` off then leaves EventEngine's four threads in a bot idle (each
woke about a thousand times a second at 64 tables): paired against the code before, Python random bots at 64 tables
0.923 of the wall time and calling stations 0.934 with the experiment alone off (six pairs each), the random bots 0.967
with fork support off too (eight pairs, the machine noisy; 2026-12-06). The referee keeps both: with
``event_engine_client`` off there, C++ bots at one table took 1.04 of the time (four pairs).

gRPC reads ``GRPC_EXPERIMENTS`` (and ``GRPC_ENABLE_FORK_SUPPORT``) once, as its core loads, so ``import_grpc`` sets
the variables for that import only and then puts the environment back as it was: no process started afterwards (a
bot above all: other gRPC libraries, such as the C++ sample bot's libgrpc++ 1.51, log an error for each name they do
not know) inherits them. Nothing is set when gRPC is loaded already, where the user set the variable already (the
user's own choice wins), or for a grpcio whose experiments were not measured here (an unknown name makes gRPC log an
error as it loads).
"""

from __future__ import annotations

import os
import re
import sys
from importlib.util import find_spec
from pathlib import Path

VARIABLE = "GRPC_EXPERIMENTS"
EXPERIMENTS = "-event_engine_listener,-event_engine_for_all_other_endpoints,-event_engine_callback_cq"
BOT_EXPERIMENTS = EXPERIMENTS + ",-event_engine_client"  # a bot's, without fork support only
FORK_VARIABLE = "GRPC_ENABLE_FORK_SUPPORT"
_OFF = ("0", "false", "no")  # the values gRPC reads as off (any case); anything else leaves its fork support on
MEASURED = ((1, 85),)  # grpcio releases (major, minor) these were measured on (the newest the registry has)

applied = ""  # the experiments this process's gRPC was loaded with turned off ("": none set here)
fork_support_off = False  # whether this process's gRPC was loaded without fork support here


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


def import_grpc(bot: bool = False) -> None:
    """Load gRPC, if it is not loaded yet, with ``EXPERIMENTS`` turned off; for a ``bot``, also without fork support
    and then, fork support off (by us or by the user), with ``BOT_EXPERIMENTS`` (see the module's documentation). A
    variable the user set is left as it is."""
    global applied, fork_support_off
    if "grpc" in sys.modules or not _measured_release():
        import grpc  # loaded as it is

        return
    chosen = {}
    fork_support = os.environ.get(FORK_VARIABLE)
    if bot and fork_support is None:
        fork_support = chosen[FORK_VARIABLE] = "0"
    if VARIABLE not in os.environ:  # event_engine_client off only where a fork leaves gRPC alone
        forks_alone = bot and (fork_support or "").lower() in _OFF
        chosen[VARIABLE] = BOT_EXPERIMENTS if forks_alone else EXPERIMENTS
    os.environ.update(chosen)
    try:
        import grpc  # noqa: F401  (its core reads the variables now)
        applied = chosen.get(VARIABLE, "")
        fork_support_off = FORK_VARIABLE in chosen
    finally:
        for name in chosen:
            del os.environ[name]
