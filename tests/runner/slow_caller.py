"""A deterministic test bot that takes its time: checks or calls after ``--delay-ms`` (so a match lasts long enough to
be cut short in the middle)."""

from __future__ import annotations

import argparse
import time

from arena_sdk import Action, Bot, Request, call, check, run


class SlowCaller(Bot):
    """Check if free, else call, each after a fixed pause."""

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s

    def act(self, request: Request) -> Action:
        """Wait, then check or call."""
        time.sleep(self.delay_s)
        return check() if request.legal.can_check else call()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(allow_abbrev=False)
    parser.add_argument("--delay-ms", type=float, default=20.0)
    args, _ = parser.parse_known_args()
    raise SystemExit(run(SlowCaller(args.delay_ms / 1000), name="slow-caller", version="1.0").exit_code)
