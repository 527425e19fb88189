"""The table's fast path (arena.referee.fast) against the general path it stands in for (ARENA_TABLE_LOOP=reference):
the same seed records the same hands, to the chip, with the same request ids and decision records, and every bot
gets the same messages at every table, on one table and on several.

The remote seats answer through fake connections (no gRPC) on the loop's next turn, as a function of the request
alone (its ids and how often it was asked), so the answers do not depend on the order the tables are played in:
legal actions, with a comment or not, illegal and malformed ones (rejected and asked again), mixed actions (drawn by
the referee), and silence (a time-out: the clock is long, so that no answer is ever late on a loaded machine, and a
silent bot's clock is made to run out at once). A table that is stopped withdraws the request its fast path opened.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Callable
from typing import Any

import pytest

from arena.engine import TableConfig
from arena.referee import ClockPolicy, HandRecord, Match, MatchSpec
from arena.referee import fast as fast_module
from arena.transport import convert
from arena.transport.endpoint import Endpoint
from arena.transport.remote import RemoteSeat
from arena.transport.session import Connection
from arena_sdk.pb import bot_pb2, poker_pb2

K = poker_pb2


class ScriptedBot(Connection):
    """A connection whose bot answers each request on the loop's next turn, by a rule of the request's own."""

    def __init__(self, seat: RemoteSeat) -> None:
        super().__init__("scripted")
        self.seat = seat
        self.asked: dict[tuple[str, int], int] = {}  # times each request was asked (rejections ask again)
        self.received: dict[str, list[bytes]] = {}  # table: the messages it got there, serialized, in order

    def send(self, message: bot_pb2.RefereeMessage | bytes, on_sent: Callable[[], None] | None = None) -> None:
        if on_sent is not None:
            on_sent()
        data = message if isinstance(message, bytes) else message.SerializeToString()
        parsed = bot_pb2.RefereeMessage.FromString(data)
        kind = parsed.WhichOneof("msg")
        inner = getattr(parsed, kind)
        self.received.setdefault(getattr(inner, "table_id", ""), []).append(data)
        if kind == "action_request":
            self._later(inner.table_id, inner.hand_id, inner.request_id, inner)
        elif kind == "action_rejected":
            self._later(inner.table_id, inner.hand_id, inner.request_id, None)

    def _later(self, table: str, hand: str, request_id: int, request: bot_pb2.ActionRequest | None) -> None:
        key = (table, request_id)
        if request is not None:
            self.legal = getattr(self, "legal", {})
            self.legal[key] = request.legal
        attempt = self.asked[key] = self.asked.get(key, 0) + 1
        asyncio.get_running_loop().call_soon(self._answer, table, hand, request_id, attempt)

    def _answer(self, table: str, hand: str, request_id: int, attempt: int) -> None:
        session = self.seat.session
        if session is None:
            return
        legal = self.legal[(table, request_id)]
        rng = random.Random(f"{hand}:{request_id}:{attempt}")  # the hand, not the table: the same on any table
        roll = rng.random()
        ids: dict[str, Any] = {"table_id": table, "hand_id": hand, "request_id": request_id}
        if roll < 0.015:  # silence: its clock runs out now (a clock that long would not run out in a test)
            decision = session.pending[(table, request_id)][0]
            decision.timer.allowance_s = 0.0
            session._expire()
            return
        session.deliver(scripted_action(rng, roll, ids, legal))


def scripted_action(rng: random.Random, roll: float, ids: dict[str, Any], legal: Any, illegal: float = 0.05,
                    mixed: float = 0.10, fold: float = 0.2, comment: float = 0.3, all_in: bool = False) -> K.Action:
    """A scripted bot's answer, by ``roll``: an illegal raise below ``illegal``, one with no kind (malformed) below
    0.06, a mixed action below ``mixed`` where it may raise, else a legal one (a fold now and then, a check or call,
    a raise, an all-in with ``all_in``), with a comment now and then."""
    if roll < illegal:
        return K.Action(**ids, kind=K.ACTION_KIND_RAISE, amount=1)
    if roll < 0.06:
        return K.Action(**ids)
    if roll < mixed and legal.can_raise:
        return K.Action(**ids, policy=[
            K.ActionChoice(kind=K.ACTION_KIND_CHECK if legal.can_check else K.ACTION_KIND_CALL, probability=0.5),
            K.ActionChoice(kind=K.ACTION_KIND_RAISE, amount=legal.min_raise_to, probability=0.5)])
    choices = [(K.ACTION_KIND_FOLD, 0)] if legal.can_fold and rng.random() < fold else []
    choices.append((K.ACTION_KIND_CHECK, 0) if legal.can_check else (K.ACTION_KIND_CALL, 0))
    if legal.can_raise:
        choices.append((K.ACTION_KIND_RAISE, rng.randint(legal.min_raise_to, legal.max_raise_to)))
        if all_in:
            choices.append((K.ACTION_KIND_ALL_IN, 0))
    kind, amount = rng.choice(choices)
    return K.Action(**ids, kind=kind, amount=amount, comment="because" if rng.random() < comment else "")


def play(tables: int, hands: int, max_violations: int) -> tuple[list[HandRecord], list[ScriptedBot]]:
    """One heads-up match of scripted remote bots on ``tables`` tables."""
    policy = ClockPolicy(per_action_ms=60_000, time_bank_ms=0, max_retries=1, max_violations=max_violations)
    spec = MatchSpec("fp", "seed-fast-path", hands, config=TableConfig(), starting_stack=3000, policy=policy,
                     tables=tables)
    pb_config = convert.table_config(spec.config, 2, spec.starting_stack)
    pb_policy = bot_pb2.ActionClockPolicy(per_action_ms=60_000)
    seats = [RemoteSeat(Endpoint(f"bot{i}", token=f"token{i}"), "fp", "table-1", pb_config, pb_policy, hands, tables)
             for i in range(2)]
    records: list[HandRecord] = []

    class Keep:
        def hand_finished(self, record: HandRecord) -> None:
            records.append(record)

    match = Match(spec, [(s.name, s) for s in seats], [Keep()])
    bots = []
    for seat in seats:
        bot = ScriptedBot(seat)
        seat.endpoint.add(seat)
        seat.endpoint.attach(bot, bot_pb2.Join(bot_name=seat.name, max_tables=tables))
        bots.append(bot)
    asyncio.run(match.run())
    return records, bots


def recorded(records: list[HandRecord], with_table: bool = True) -> dict[str, tuple[object, ...]]:
    """Every hand by its id, all but the clocks' readings (and the table's name, unless ``with_table``)."""
    out = {}
    for r in records:
        decisions = tuple((d.seat, d.participant, d.request_id, d.action, d.how, d.event_index, d.rejected, d.policy,
                           d.comment) for d in r.decisions)
        out[r.hand_id] = (r.table_id if with_table else "", r.hand_number, r.deal, r.rotation, r.seating, r.button,
                          r.starting_stacks, r.deck, tuple(r.hole), r.board, r.events, r.payoffs, r.final_stacks,
                          decisions, r.names)
    return out


def test_fast_path_records_and_sends_what_the_general_path_does(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(fast_module.LOOP_VARIABLE, "reference")
    reference, reference_bots = play(1, 150, 12)
    monkeypatch.setenv(fast_module.LOOP_VARIABLE, "fast")
    records, bots = play(1, 150, 12)
    assert recorded(records) == recorded(reference)
    for bot, reference_bot in zip(bots, reference_bots, strict=True):
        assert bot.received == reference_bot.received  # every message, byte for byte, in order
    # What the general path had to take over: the hands had it all
    hows = {d.how for r in records for d in r.decisions}
    assert {"ok", "timeout", "illegal", "forfeited"} <= hows
    assert any(d.rejected for r in records for d in r.decisions if d.how == "ok")
    assert any(d.policy for r in records for d in r.decisions)
    assert any(d.comment for r in records for d in r.decisions)


def by_hand(bot: ScriptedBot) -> dict[str, list[bot_pb2.RefereeMessage]]:
    """What the bot got about each hand, in order, its table's name left out (it differs with the tables)."""
    out: dict[str, list[bot_pb2.RefereeMessage]] = {}
    for data in (m for ms in bot.received.values() for m in ms):
        message = bot_pb2.RefereeMessage.FromString(data)
        inner = getattr(message, message.WhichOneof("msg"))
        if getattr(inner, "hand_id", ""):
            inner.table_id = ""
            out.setdefault(inner.hand_id, []).append(message)
    return out


def test_fast_path_on_several_tables_records_the_hands_of_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(fast_module.LOOP_VARIABLE, "reference")
    one, one_bots = play(1, 96, 0)
    several_reference, _ = play(8, 96, 0)
    monkeypatch.setenv(fast_module.LOOP_VARIABLE, "fast")
    several, several_bots = play(8, 96, 0)
    assert len(several) == 96
    assert recorded(several, with_table=False) == recorded(one, with_table=False)
    assert recorded(several_reference, with_table=False) == recorded(one, with_table=False)  # which table plays a
    # hand depends on when each is free: on the order of the tables' turns, not on the path
    assert len({r.table_id for r in several}) == 8
    for bot, one_bot in zip(several_bots, one_bots, strict=True):
        assert by_hand(bot) == by_hand(one_bot)


def test_ARENA_TABLE_LOOP_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(fast_module.LOOP_VARIABLE, "quick")
    with pytest.raises(ValueError, match="ARENA_TABLE_LOOP must be one of fast, reference; got 'quick'"):
        fast_module.fast_loop()
    monkeypatch.setenv(fast_module.LOOP_VARIABLE, "")
    assert fast_module.fast_loop()


class SilentBot(Connection):
    """A connection whose bot reads everything and answers nothing."""

    def __init__(self) -> None:
        super().__init__("silent")
        self.received: list[bot_pb2.RefereeMessage] = []

    def send(self, message: bot_pb2.RefereeMessage | bytes, on_sent: Callable[[], None] | None = None) -> None:
        if on_sent is not None:
            on_sent()
        self.received.append(bot_pb2.RefereeMessage.FromString(
            message if isinstance(message, bytes) else message.SerializeToString()))


def test_a_stopped_table_withdraws_the_request_it_opened() -> None:
    async def stopped() -> tuple[list[object], SilentBot, bool]:
        spec = MatchSpec("stop", "seed-stop", 4, config=TableConfig(), starting_stack=3000)
        pb_config = convert.table_config(spec.config, 2, spec.starting_stack)
        seats = [RemoteSeat(Endpoint(f"bot{i}", token=f"token{i}"), "stop", "table-1", pb_config,
                            bot_pb2.ActionClockPolicy(), 4) for i in range(2)]
        bots = []
        for seat in seats:
            bot = SilentBot()
            seat.endpoint.add(seat)
            seat.endpoint.attach(bot, bot_pb2.Join(bot_name=seat.name))
            bots.append(bot)
        task = asyncio.ensure_future(Match(spec, [(s.name, s) for s in seats]).run())
        sessions = [s.session for s in seats]
        for _ in range(500):
            await asyncio.sleep(0.001)
            if any(session is not None and session.pending for session in sessions):
                break
        asked = next(i for i, session in enumerate(sessions) if session is not None and session.pending)
        session = sessions[asked]
        assert session is not None
        (table, request_id), (decision, _) = next(iter(session.pending.items()))
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        left = list(session.pending)
        session.deliver(K.Action(table_id=table, hand_id=decision.hand_id, request_id=request_id,
                                 kind=K.ACTION_KIND_CALL))
        await asyncio.sleep(0.01)
        return left, bots[asked], session.answers(K.Action(table_id=table, hand_id=decision.hand_id,
                                                             request_id=request_id))

    left, bot, still_open = asyncio.run(stopped())
    assert left == [] and not still_open
    last = bot.received[-1]
    assert last.WhichOneof("msg") == "error" and "is not open" in last.error.message  # the late answer, refused
    assert sum(m.WhichOneof("msg") == "action_request" for m in bot.received) == 1  # and nothing asked after it
