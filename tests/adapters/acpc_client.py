"""An ACPC client as a third party writes one from the ACPC server's protocol.md (version 2.0.0), knowing nothing of
the arena: ``acpc_client.py [options] GAMEFILE HOST PORT``, as the reference ``example_player`` is started.

It connects, sends ``VERSION:2.0.0`` with a bare ``\\n`` (as the reference client does), then reads states; it works
out from each state's betting whether it must act (the rules of protocol.md: who acts next, when a round ends, what a
valid raise is) and answers only then, ignoring every other state. ``--strategy``:

* ``random`` (default): a valid action drawn at random (folds, calls, raises of every size, all-ins);
* ``call``: always ``c``;
* ``invalid``: like random, but now and then an action the ACPC dealer calls invalid (a fold when checking is free,
  a raise past the cap, garbage, ``r`` without a size) or a raise out of range;
* ``garbage``: like random, with junk lines, comments and answers to old states before each answer;
* ``slow``: like call, but sleeps ``--sleep-s`` before answering in every hand number divisible by 5;
* ``quit``: like call, then closes the connection after ``--hands`` hands.

``--log FILE`` appends every line received and sent.
"""

from __future__ import annotations

import argparse
import random
import socket
import sys
import time


class Game:
    """The settings of a game definition file this client needs."""

    def __init__(self, path: str) -> None:
        self.limit = True
        values: dict[str, list[int]] = {}
        with open(path) as f:
            for raw in f:
                line = raw.strip()
                low = line.lower()
                if not line or line.startswith("#") or low.startswith(("gamedef", "end gamedef")):
                    continue
                if low in ("limit", "nolimit"):
                    self.limit = low == "limit"
                    continue
                key, _, rest = line.partition("=")
                values[key.strip().lower()] = [int(v) for v in rest.split()]
        self.players = values["numplayers"][0]
        self.stack = values.get("stack", [2**31 - 1] * self.players)
        self.blind = values["blind"]
        self.raise_size = values.get("raisesize", [])
        self.max_raises = values.get("maxraises", [255] * 4)
        self.first = [f - 1 for f in values.get("firstplayer", [1] * 4)]


class State:
    """A state's betting replayed: who has folded, who spent what, whose turn it is."""

    def __init__(self, game: Game, betting: str) -> None:
        self.game = game
        n = game.players
        self.spent = list(game.blind)
        self.folded = [False] * n
        self.round = 0
        self.max_spent = max(game.blind)
        self.min_raise_to = 2 * self.max_spent if self.max_spent else 1
        self.actions: list[tuple[int, str]] = []  # this round's (player, f/c/r)
        self.finished = False
        i = 0
        while i < len(betting):
            ch = betting[i]
            i += 1
            if ch == "/":
                continue
            size = 0
            if ch == "r" and not game.limit:
                j = i
                while j < len(betting) and betting[j].isdigit():
                    j += 1
                size, i = int(betting[i:j]), j
            self.apply(ch, size)

    def all_in(self, p: int) -> bool:
        return self.spent[p] >= self.game.stack[p]

    def acting(self) -> list[int]:
        return [p for p in range(self.game.players) if not self.folded[p] and not self.all_in(p)]

    def next_after(self, p: int) -> int:
        n = self.game.players
        for _ in range(n):
            p = (p + 1) % n
            if not self.folded[p] and not self.all_in(p):
                return p
        return -1

    def to_act(self) -> int:
        if self.finished:
            return -1
        if self.actions:
            return self.next_after(self.actions[-1][0])
        return self.next_after(self.game.first[self.round] - 1)

    def raises_this_round(self) -> int:
        return sum(1 for _, a in self.actions if a == "r")

    def raise_range(self) -> tuple[int, int] | None:
        """(min, max) raise-to in chips for the whole hand (limit: the one size), None if no raise is valid."""
        p = self.to_act()
        if self.raises_this_round() >= self.game.max_raises[self.round] or len(self.acting()) <= 1:
            return None
        stack = self.game.stack[p]
        if self.game.limit:
            return (min(stack, self.max_spent + self.game.raise_size[self.round]),) * 2
        low = self.min_raise_to
        if low > stack:
            return None if self.max_spent >= stack else (stack, stack)
        return low, stack

    def can_fold(self) -> bool:
        p = self.to_act()
        return self.spent[p] < self.max_spent

    def apply(self, action: str, size: int) -> None:
        p = self.to_act()
        g = self.game
        if action == "f":
            self.folded[p] = True
        elif action == "c":
            self.spent[p] = min(self.max_spent, g.stack[p])
        else:
            if g.limit:
                size = min(self.max_spent + g.raise_size[self.round], g.stack[p])
            self.min_raise_to = max(self.min_raise_to, 2 * size - self.max_spent)
            self.max_spent = size
            self.spent[p] = size
        self.actions.append((p, action))
        left = [q for q in range(g.players) if not self.folded[q]]
        if len(left) == 1:
            self.finished = True
            return
        acting = self.acting()
        # the round is over when every acting player has called the last raise (or made it)
        called = 0
        for q, a in reversed(self.actions):
            if a == "f":
                continue
            if not self.all_in(q):
                called += 1
            if a == "r":
                break
        if called < len(acting):
            return
        if len(acting) > 1 and self.round < 3:
            self.round += 1
            self.actions = []
            self.min_raise_to = self.max_spent + max(max(g.blind), 1)
        else:
            self.finished = True


def choose(state: State, strategy: str, rng: random.Random) -> str:
    """A valid action (or, with ``invalid``, now and then an invalid one)."""
    if strategy in ("call", "slow", "quit"):
        return "c"
    if strategy == "invalid" and rng.random() < 0.15:
        return rng.choice(["f", "x", "r", "r-5", "r99999999", "", "k", "B"])
    span = state.raise_range()
    roll = rng.random()
    if state.can_fold() and roll < 0.2:
        return "f"
    if span is not None and roll > 0.6:
        if state.game.limit:
            return "r"
        low, high = span
        size = high if rng.random() < 0.15 else rng.randint(low, min(high, low + 4 * (high - low) // 10 + 1))
        return f"r{size}"
    return "c"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--strategy", default="random")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sleep-s", type=float, default=2.0)
    parser.add_argument("--hands", type=int, default=3)
    parser.add_argument("--log")
    parser.add_argument("game")
    parser.add_argument("host")
    parser.add_argument("port", type=int)
    args = parser.parse_args()
    game = Game(args.game)
    rng = random.Random(args.seed)
    log = open(args.log, "a", buffering=1) if args.log else None  # noqa: SIM115 -- open until the process ends
    sock = socket.create_connection((args.host, args.port))
    sock.sendall(b"VERSION:2.0.0\n")
    reader = sock.makefile("rb")
    last = ""
    hands: set[str] = set()
    for raw in reader:
        line = raw.decode().rstrip("\r\n")
        if log:
            log.write(f"S-> {line}\n")
        if line.startswith(("#", ";")) or not line.startswith("MATCHSTATE:"):
            continue
        _, position, hand, betting, _cards = line.split(":", 4)
        hands.add(hand)
        if args.strategy == "quit" and len(hands) > args.hands:
            sock.close()
            return
        state = State(game, betting)
        if state.to_act() != int(position):
            continue
        action = choose(state, args.strategy, rng)
        if args.strategy == "slow" and int(hand) % 5 == 0:
            time.sleep(args.sleep_s)
        out = b""
        if args.strategy == "garbage":
            out += b"# a comment\r\n;another\r\nnot a state at all\r\n"
            if last:
                out += f"{last}:r\r\n".encode()
        out += f"{line}:{action}\r\n".encode()
        sock.sendall(out)
        if log:
            log.write(f"<-C {line}:{action}\n")
        last = line
    sys.exit(0)


if __name__ == "__main__":
    main()
