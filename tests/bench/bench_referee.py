"""The referee's own work per decision, in-process, on the compiled engine and on the Python reference in the same run:
the engine, the table runner and, with remote seats, the requests as bytes, the sessions and the hand starts and ends,
without gRPC or bot processes.

A heads-up no-limit match (``Match``, no records) of two seats that answer at once with the random policy of
tests/bench/bench_engine.py (raise 20%, fold 15% facing a bet, else check or call), at 1 and 64 tables:

* function seats (``FunctionSeat``): the engine and the table runner alone;
* remote seats (``RemoteSeat``) on a connection that costs nothing: every message is queued as it would be for a gRPC
  stream and dropped, and the answer to a request is delivered on the next loop turn, as an ``Action`` message made
  from the legal actions of the pending decision (a couple of µs of "bot" work in this process, the same for both
  engines).

Figures are this process's CPU time (``time.process_time``) per decision. The Python engine's rows are what
``ARENA_ENGINE=python`` plays: the table runner with the Python ``Hand`` and without ``Hand.view_wire``. Prints a
table; never asserts. Run with ``python -c "from tests.bench.bench_referee import main; main()"``.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from arena.engine import Action, ActionKind, TableConfig, hand_class
from arena.referee import ClockPolicy, Decision, FunctionSeat, Match, MatchSpec, WireRequest
from arena.referee import table as table_module
from arena.referee.seat import Seat
from arena.transport import convert
from arena.transport.endpoint import Endpoint
from arena.transport.remote import RemoteSeat
from arena.transport.session import Connection, Outgoing
from arena_sdk.pb import bot_pb2, poker_pb2
from tests.bench.bench_grpc import print_speed

SEED = "bench-referee-20241204"
HANDS = 6_000
TABLES = (1, 64)
RAISE, FOLD = 0.20, 0.15
POLICY = ClockPolicy(per_action_ms=60_000, time_bank_ms=0)
_PB_KIND = {ActionKind.FOLD: poker_pb2.ACTION_KIND_FOLD, ActionKind.CHECK: poker_pb2.ACTION_KIND_CHECK,
            ActionKind.CALL: poker_pb2.ACTION_KIND_CALL, ActionKind.RAISE: poker_pb2.ACTION_KIND_RAISE}


def choose(rng: random.Random, decision: Decision | WireRequest) -> Action:
    """bench_engine's random policy."""
    legal = decision.hand.legal_actions() if isinstance(decision, WireRequest) else decision.view.legal
    assert legal is not None
    r = rng.random()
    if r < RAISE and legal.max_raise_to:
        return Action(ActionKind.RAISE, rng.randint(legal.min_raise_to, legal.max_raise_to))
    if r >= 1 - FOLD and legal.can_fold:
        return Action(ActionKind.FOLD)
    return Action(ActionKind.CALL if legal.call_amount else ActionKind.CHECK)


class FreeConnection(Connection):
    """A stream that costs nothing: messages are dropped; a request is answered on the next loop turn."""

    def __init__(self, seat: RemoteSeat, rng: random.Random) -> None:
        super().__init__("free")
        self.seat = seat
        self.rng = rng
        self.loop = asyncio.get_running_loop()

    def send(self, message: Outgoing, on_sent: Callable[[], None] | None = None) -> None:
        if on_sent is not None:
            on_sent()  # as the stream's writer does: an ActionRequest starts the bot's clock
            self.loop.call_soon(self._answer)

    def _answer(self) -> None:
        session = self.seat.session
        assert session is not None
        decision = next(d for d, answer in session.pending.values() if not answer.done())
        assert isinstance(decision, Decision | WireRequest)
        action = choose(self.rng, decision)
        session.deliver(poker_pb2.Action(table_id=decision.table_id, hand_id=decision.hand_id,
                                         request_id=decision.request_id, kind=_PB_KIND[action.kind],
                                         amount=action.amount))


@contextmanager
def engine(name: str) -> Iterator[None]:
    """The table runner on engine ``name``, as ARENA_ENGINE sets it at import."""
    saved = table_module.Hand, table_module._VIEW_WIRE
    hand = hand_class(name)
    table_module.Hand = hand  # type: ignore[misc]
    table_module._VIEW_WIRE = getattr(hand, "view_wire", None)
    try:
        yield
    finally:
        table_module.Hand, table_module._VIEW_WIRE = saved  # type: ignore[misc]


async def play(seats: str, tables: int) -> tuple[int, float, float]:
    """One match; (decisions, CPU seconds, wall seconds)."""
    spec = MatchSpec(f"{seats}-{tables}", SEED, HANDS, config=TableConfig(), policy=POLICY, tables=tables)
    rng = random.Random(SEED)
    players: list[tuple[str, Seat]] = []
    if seats == "function":
        players = [(f"f{i}", FunctionSeat(f"f{i}", lambda d: choose(rng, d))) for i in range(2)]
    else:
        pb_config = convert.table_config(spec.config, 2, spec.starting_stack)
        pb_policy = bot_pb2.ActionClockPolicy(per_action_ms=POLICY.per_action_ms)
        for i in range(2):
            remote = RemoteSeat(Endpoint(f"r{i}", token=f"t{i}"), spec.match_id, "table-1", pb_config, pb_policy,
                                HANDS, tables)
            remote.endpoint.add(remote)
            remote.endpoint.attach(FreeConnection(remote, rng), bot_pb2.Join(bot_name=remote.name, max_tables=tables))
            players.append((remote.name, remote))
    match = Match(spec, players)
    cpu, wall = time.process_time(), time.perf_counter()
    result = await match.run()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    decisions = sum(r.decisions for r in result.results)
    return decisions, cpu, wall


def main() -> None:
    """Every row: seats × tables × engine, CPU µs per decision side by side."""
    print_speed("at start")
    print(f"Referee in-process, heads-up no-limit, {HANDS:,} hands a row, random policy; CPU µs per decision")
    print("{:<17} {:>6} {:<9} {:>10} {:>8} {:>12} {:>11}".format(
        "seats", "tables", "engine", "decisions", "CPU s", "decisions/s", "µs/decision"))
    for seats in ("function", "remote"):
        for tables in TABLES:
            figures = {}
            for name in ("python", "compiled"):
                with engine(name):
                    decisions, cpu, wall = asyncio.run(play(seats, tables))
                figures[name] = cpu / decisions * 1e6
                print(f"{seats + ' seats':<17} {tables:>6} {name:<9} {decisions:>10,} {cpu:>8.2f} "
                      f"{decisions / wall:>12,.0f} {figures[name]:>11.1f}")
            print(f"{'':<17} {'':>6} python ÷ compiled: {figures['python'] / figures['compiled']:.2f}×")


if __name__ == "__main__":
    main()
