#!/usr/bin/env python3
"""Sample bot: the calling station. Checks when it can, otherwise calls; never folds, never raises.

Run: ``python sample_bots/python/calling_station.py --address 127.0.0.1:50051 --token TOKEN``.
"""

from __future__ import annotations

from arena_sdk import Action, Bot, Request, call, check, run


class CallingStation(Bot):
    """Check if free, else call: the simplest bot that never gives up a pot, and a baseline every bot should beat."""

    max_tables = 256  # it acts from the request alone: any number of tables on one connection

    def act(self, request: Request) -> Action:
        """Check when nothing is owed, otherwise call whatever it costs."""
        return check() if request.legal.can_check else call()


if __name__ == "__main__":
    raise SystemExit(run(CallingStation(), name="calling-station", version="1.0").exit_code)
