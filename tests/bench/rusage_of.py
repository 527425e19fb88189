"""Runs a command as its child and, once it has exited, appends one line to a file: a label, the child's CPU seconds
(user and system, of the child and every process it waited for, from ``wait4``), this wrapper's own, and the child's
context switches (voluntary and not: how often its threads slept and woke, or were preempted). How
``bench_decisions`` counts each bot's CPU apart from the referee's: ``python rusage_of.py FILE LABEL CMD [ARG ...]``.
SIGTERM, SIGINT and SIGHUP are passed on to the child; the exit status is the child's."""

from __future__ import annotations

import os
import resource
import signal
import sys


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print("usage: rusage_of.py FILE LABEL CMD [ARG ...]", file=sys.stderr)
        return 2
    out, label, command = argv[0], argv[1], argv[2:]
    pid = os.posix_spawnp(command[0], command, os.environ)
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(number, lambda received, _frame: os.kill(pid, received))
    _, status, usage = os.wait4(pid, 0)
    own = resource.getrusage(resource.RUSAGE_SELF)
    with open(out, "a", encoding="utf-8") as file:
        file.write(f"{label} {usage.ru_utime + usage.ru_stime:.6f} {own.ru_utime + own.ru_stime:.6f} "
                   f"{usage.ru_nvcsw + usage.ru_nivcsw}\n")
    code = os.waitstatus_to_exitcode(status)
    if code < 0:  # killed by a signal: die of the same one
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
