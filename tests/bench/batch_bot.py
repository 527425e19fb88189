#!/usr/bin/env python3
"""A batch bot for ``bench_tables``: it overrides ``Bot.act_batch`` and answers every request of a batch in one
list comprehension (check when free, else call), as a bot scoring many states at once would.

Run: ``python tests/bench/batch_bot.py --address 127.0.0.1:50051 --token TOKEN`` (the arena runner passes both).
"""

from __future__ import annotations

from collections.abc import Sequence

from arena_sdk import Action, Bot, Request, call, check, run

CHECK = check()
CALL = call()


class BatchBot(Bot):
    """Check if free, else call, a whole batch at a time."""

    max_tables = 256  # it acts from the request alone

    def act(self, request: Request) -> Action:
        """One request (the SDK calls ``act_batch`` instead, since it is overridden)."""
        return CHECK if request.legal.can_check else CALL

    def act_batch(self, requests: Sequence[Request]) -> Sequence[Action]:
        """Every request at once: one pass over the batch, no call per request."""
        return [CHECK if r.pb.legal.can_check else CALL for r in requests]


if __name__ == "__main__":
    raise SystemExit(run(BatchBot(), name="batch-bot", version="1.0").exit_code)
