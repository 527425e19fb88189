#!/usr/bin/env python3
"""Sample bot: picks uniformly among the legal kinds of action, and a uniform legal amount when it raises.

Run: ``python sample_bots/python/random_bot.py --address 127.0.0.1:50051 --token TOKEN [--seed 42] [--mixed]``.

The seed comes from ``--seed``, else the environment variable ``ARENA_BOT_SEED``; without one it is random. With
``--mixed`` the bot lets the referee draw among the kinds (a mixed action, ``arena_sdk.mixed``): the same play, and
the AIVAT estimator can then take the luck of that draw out of the results.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from collections.abc import Sequence

from arena_sdk import Action, Bot, Mixed, Request, call, check, fold, mixed, raise_to, run


class RandomBot(Bot):
    """Uniformly one of fold, check, call, raise (those that are legal); a raise goes to a uniform legal amount.

    A noisy sparring partner. With a seed, each decision draws from a generator seeded by the seed, the hand and
    the request, so the bot plays the same way whenever it sees the same request, even in a resumed match.
    """

    max_tables = 256  # it acts from the request alone: any number of tables on one connection

    def __init__(self, seed: int | None = None, mixed: bool = False) -> None:
        self.seed = seed
        self.mixed = mixed
        self.rng = random.Random(seed)

    def act(self, request: Request) -> Action | Mixed:
        """A random legal action (or, mixed, the legal kinds with equal probabilities, for the referee to draw)."""
        if self.seed is not None:
            self.rng = random.Random(f"{self.seed}:{request.hand_id}:{request.request_id}")
        legal = request.legal
        choices: list[Action] = []
        if legal.can_fold:
            choices.append(fold())
        if legal.can_check:
            choices.append(check())
        if legal.can_call:
            choices.append(call())
        if legal.can_raise:
            choices.append(raise_to(self.rng.randint(legal.min_raise_to, legal.max_raise_to)))
        if not choices:  # a correct referee never asks when nothing is legal
            return check() if legal.can_check else fold()
        if self.mixed:
            return mixed({choice: 1.0 for choice in choices})
        return self.rng.choice(choices)


def seed_from(argv: Sequence[str] | None = None) -> int | None:
    """The seed given by ``--seed N`` (in ``argv``, default ``sys.argv``), else ``ARENA_BOT_SEED``, else None."""
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--seed", type=int)
    args, _ = parser.parse_known_args(sys.argv[1:] if argv is None else list(argv))
    if args.seed is not None:
        return int(args.seed)
    env = os.environ.get("ARENA_BOT_SEED", "").strip()
    return int(env) if env else None


if __name__ == "__main__":
    raise SystemExit(run(RandomBot(seed_from(), mixed="--mixed" in sys.argv[1:]), name="random-bot",
                         version="1.0").exit_code)
