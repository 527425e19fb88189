#!/usr/bin/env python3
"""Sample bot: picks uniformly among the legal kinds of action, and a uniform legal amount when it raises.

Run: ``python sample_bots/python/random_bot.py --address 127.0.0.1:50051 --token TOKEN [--seed 42] [--mixed]``.

The seed comes from ``--seed``, else the environment variable ``ARENA_BOT_SEED``; without one it is random. With
``--mixed`` the bot lets the referee draw among the kinds (a mixed action, ``arena_sdk.mixed``): the same play, and
the AIVAT estimator can then take the luck of that draw out of the results.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import sys
from collections.abc import Sequence

from arena_sdk import Action, Bot, Mixed, Request, call, check, fold, mixed, raise_to, run


class RandomBot(Bot):
    """Uniformly one of fold, check, call, raise (those that are legal); a raise goes to a uniform legal amount.

    A noisy sparring partner. With a seed, each decision's draws come from a hash (BLAKE2b) of the seed, the hand
    and the request, so the bot plays the same way whenever it sees the same request, even in a resumed match. (A
    ``random.Random`` seeded for every decision did the same at 8 µs a decision, the most of this bot's own work.)
    """

    max_tables = 256  # it acts from the request alone: any number of tables on one connection

    def __init__(self, seed: int | None = None, mixed: bool = False) -> None:
        self.seed = seed
        self.mixed = mixed
        self.rng = random.Random(seed)

    def act(self, request: Request) -> Action | Mixed:
        """A random legal action (or, mixed, the legal kinds with equal probabilities, for the referee to draw)."""
        legal = request.legal
        if self.seed is not None:  # two independent 64-bit draws: the kind (low bits) and the amount (high bits)
            key = f"{self.seed}:{request.hand_id}:{request.request_id}".encode()
            draws = int.from_bytes(hashlib.blake2b(key, digest_size=16).digest(), "little")
            pick, amount = draws & _LOW, draws >> 64
        else:
            pick, amount = self.rng.getrandbits(64), self.rng.getrandbits(64)
        choices: list[Action] = []
        if legal.can_fold:
            choices.append(fold())
        if legal.can_check:
            choices.append(check())
        if legal.can_call:
            choices.append(call())
        if legal.can_raise:
            choices.append(raise_to(legal.min_raise_to + amount % (legal.max_raise_to - legal.min_raise_to + 1)))
        if not choices:  # a correct referee never asks when nothing is legal
            return check() if legal.can_check else fold()
        if self.mixed:
            return mixed({choice: 1.0 for choice in choices})
        return choices[pick % len(choices)]  # uniform to within 2**-58 (at most 4 choices of 2**64 draws)


_LOW = (1 << 64) - 1


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
