"""Hand lanes (arena.transport.lanes): the C++ bot server plays a hand's plain, legal, timely answers on gRPC's
threads, and hands everything else back to the referee's Python. Played against lanes switched off (the same server,
``ARENA_LANES=off``) and the grpc.aio server, the same seed records the same hands, to the chip, with the same
request ids and decision records, and every bot gets the same messages, byte for byte but for the clock's readings.

The bots are scripted gRPC clients in the test's loop that answer each request as a function of its ids and how
often it was asked: legal actions mostly (alone, in an ActionBatch, with a comment now and then), illegal and
malformed ones (rejected and asked again), mixed actions, a stray Action before the answer, and silence (a time-out).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from typing import Any

import grpc
import pytest

from arena.engine import TableConfig
from arena.referee import ClockPolicy, HandRecord, Match, MatchSpec, fast
from arena.referee.lane import LaneResult
from arena.runner.remote_match import remote_seats
from arena.transport import native_server
from arena.transport.server import RefereeServer
from arena_sdk.pb import bot_pb2, bot_pb2_grpc, poker_pb2
from tests.referee.test_fast_path import by_hand, recorded, scripted_action

pytestmark = pytest.mark.timeout(180)

K = poker_pb2


class ScriptedBot:
    """A bot over a real stream whose answers depend only on each request's ids and attempt."""

    def __init__(self, token: str, tables: int, silence: float, batches: bool) -> None:
        self.token = token
        self.tables = tables
        self.batches = batches  # the referee packs what it has for the bot into RefereeBatches
        self.silence = silence
        self.received: dict[str, list[bytes]] = {}  # by table: every message, its clock's readings zeroed
        self.asked: dict[tuple[str, int], int] = {}
        self.legal: dict[tuple[str, int], Any] = {}
        self.packed = 0  # RefereeBatches received

    async def play(self, address: str) -> None:
        async with grpc.aio.insecure_channel(address) as channel:
            call: Any = bot_pb2_grpc.BotServiceStub(channel).Play()  # type: ignore[call-arg]
            await call.write(bot_pb2.BotMessage(join=bot_pb2.Join(
                token=self.token, protocol_version=1, max_tables=self.tables, bot_name="scripted",
                batches=self.batches)))
            async for received in call:
                if received.WhichOneof("msg") == "batch":
                    self.packed += 1
                    messages = list(received.batch.messages)
                else:
                    messages = [received]
                if not await self._handle(call, messages):
                    break
            await call.done_writing()

    async def _handle(self, call: Any, messages: list[bot_pb2.RefereeMessage]) -> bool:
        """Take what the referee sent in one message and answer it: a bot that takes batches answers it all in one
        ActionBatch (answers for several tables, a stray among them now and then); False at the match's end."""
        answers: list[poker_pb2.Action] = []
        for message in messages:
            kind = message.WhichOneof("msg")
            assert kind is not None
            if kind == "match_end":
                return False
            inner = getattr(message, kind)
            if kind == "action_request":
                inner.clock.Clear()  # the bank's reading depends on how long answers took
            self.received.setdefault(getattr(inner, "table_id", ""), []).append(message.SerializeToString())
            if kind == "action_request":
                self.legal[(inner.table_id, inner.request_id)] = inner.legal
            if kind in ("action_request", "action_rejected"):
                answers += self._answer(inner.table_id, inner.hand_id, inner.request_id)
        if self.batches and len(answers) > 1:
            await call.write(bot_pb2.BotMessage(actions=bot_pb2.ActionBatch(actions=answers)))
            return True
        for action in answers:
            single = random.Random(f"{action.hand_id}:{action.request_id}").random() < 0.2
            await call.write(bot_pb2.BotMessage(actions=bot_pb2.ActionBatch(actions=[action])) if single
                             else bot_pb2.BotMessage(action=action))
        return True

    def _answer(self, table: str, hand: str, request_id: int) -> list[poker_pb2.Action]:
        """The answer to a request (none: silence), a stray before it now and then."""
        key = (table, request_id)
        attempt = self.asked[key] = self.asked.get(key, 0) + 1
        legal = self.legal[key]
        rng = random.Random(f"{hand}:{request_id}:{attempt}")  # the hand, not the table: the same on any table
        roll = rng.random()
        ids: dict[str, Any] = {"table_id": table, "hand_id": hand, "request_id": request_id}
        if roll < self.silence:
            return []  # its clock runs out
        # asked again after a rejection: wrong again, now and then
        action = scripted_action(rng, roll, ids, legal, illegal=0.05 if attempt == 1 else 0.3, mixed=0.08, fold=0.15,
                                 comment=0.2, all_in=True)
        if rng.random() < 0.03:  # a stray first: ids that name no open request
            stray = K.Action(table_id=table, hand_id=hand + "x", request_id=request_id, kind=K.ACTION_KIND_FOLD)
            return [stray, action]
        return [action]


def play(tables: int, hands: int, silence: float = 0.006, bot_class: type[ScriptedBot] | None = None,
         durable: bool = False, stop_after: int = 0) -> tuple[list[HandRecord], list[ScriptedBot], int, int]:
    """One heads-up match of two scripted bots on ``tables`` tables, over the bots' local socket, its hands kept by a
    sink that is ``durable`` or not; also how many lanes the C++ server opened (0 on grpc.aio) and how many decisions
    they played (``play.chained``: how many hands a lane went on from)."""
    policy = ClockPolicy(per_action_ms=400, time_bank_ms=1000, max_retries=1, max_violations=0)
    spec = MatchSpec("ln", "seed-lanes", hands, config=TableConfig(), starting_stack=2000, policy=policy,
                     tables=tables)
    [seats] = remote_seats(spec, ["bot0", "bot1"])
    records: list[HandRecord] = []
    matches: list[Match] = []
    opened = []
    laned = []

    class Keep:
        def hand_finished(self, record: HandRecord) -> None:
            records.append(record)
            if len(records) == stop_after:
                matches[0].stop()  # (as Ctrl-C does: the hands in play are finished)

    async def main() -> None:
        server = RefereeServer(local=True, tcp=False)
        await server.start()
        for seat in seats:
            server.add_seat(seat)
        lanes = next((s.lanes for s in server._servers if isinstance(s, native_server.NativeBotServer)), None)
        if lanes is not None:
            open_lane = lanes.open

            def counted(*args: Any) -> Any:
                end = open_lane(*args)
                opened.append(end is not None)
                return end

            lanes.open = counted  # type: ignore[method-assign,assignment]
        try:
            keep = Keep()
            keep.durable = durable  # type: ignore[attr-defined]  # (not durable: a lane may go on to the next hand)
            match = Match(spec, [(s.name, s) for s in seats], [keep])
            matches.append(match)
            bots = [(bot_class or ScriptedBot)(s.token, tables, silence, batches=i == 0) for i, s in enumerate(seats)]
            await asyncio.gather(match.run(), *(bot.play(server.local_address) for bot in bots))
            result.extend(bots)
        finally:
            await server.stop()

    told, done = fast.FastRun.laned, fast.FastRun.hand_done

    def count(run: fast.FastRun, lane: LaneResult) -> None:
        laned.append(len(lane.records))
        told(run, lane)

    def count_done(run: fast.FastRun, lane: LaneResult) -> None:
        laned.append(len(lane.records))
        chained.append(1)
        done(run, lane)

    result: list[ScriptedBot] = []
    chained: list[int] = []
    fast.FastRun.laned = count  # type: ignore[method-assign]
    fast.FastRun.hand_done = count_done  # type: ignore[method-assign]
    try:
        asyncio.run(main())
    finally:
        fast.FastRun.laned = told  # type: ignore[method-assign]
        fast.FastRun.hand_done = done  # type: ignore[method-assign]
    play.chained = len(chained)  # type: ignore[attr-defined]
    return records, result, sum(opened), sum(laned)


@pytest.mark.parametrize("chain", ["on", "off"])
def test_lanes_record_and_send_what_the_referee_does_without_them(chain: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the hand chain too (a lane that goes on to the table's next hand: its HandEnds, the next HandStarts and
    first request written by the lane), and without."""
    monkeypatch.setenv("ARENA_BOT_SERVER", "native")
    monkeypatch.setenv("ARENA_LANES", "off")
    reference, reference_bots, none, _ = play(1, 100)
    assert none == 0
    monkeypatch.setenv("ARENA_LANES", "on")
    monkeypatch.setenv("ARENA_HAND_CHAIN", chain)
    records, bots, opened, laned = play(1, 100)
    chained: int = play.chained  # type: ignore[attr-defined]
    print(f"chain {chain}: {chained} hands chained, {opened} lanes opened")
    assert (chained > 20) if chain == "on" else chained == 0
    assert opened + chained >= 100  # every hand, and again after a hand-back
    decisions = sum(len(r.decisions) for r in records)
    assert decisions / 2 < laned < decisions  # most decisions, not those the referee's Python took over
    assert recorded(records) == recorded(reference)
    for bot, reference_bot in zip(bots, reference_bots, strict=True):
        assert bot.received == reference_bot.received
    assert bots[0].packed > 0  # the bot that takes batches got a hand's end, the next start and request in one
    hows = {d.how for r in records for d in r.decisions}
    assert {"ok", "timeout", "illegal"} <= hows
    assert any(d.rejected for r in records for d in r.decisions if d.how == "ok")
    assert any(d.policy for r in records for d in r.decisions)
    assert any(d.comment for r in records for d in r.decisions)
    # the clocks: every decision timed, within its allowance
    assert all(0 <= d.elapsed_ms < 60_000 for r in records for d in r.decisions)


def test_no_lane_goes_on_to_the_next_hand_before_a_durable_sink_has_the_hand(monkeypatch: pytest.MonkeyPatch) -> None:
    """The records' rule: where a sink stores hands, each is stored before any bot hears its result, so the hand
    chain (whose lanes write the HandEnds themselves) is off; the same match with nothing stored chains most hands."""
    monkeypatch.setenv("ARENA_BOT_SERVER", "native")
    records, _, _, _ = play(1, 40, silence=0.0, durable=True)
    assert len(records) == 40 and play.chained == 0  # type: ignore[attr-defined]
    records, _, _, _ = play(1, 40, silence=0.0)
    assert len(records) == 40 and play.chained > 10  # type: ignore[attr-defined]


def test_a_match_stopped_while_a_lane_deals_the_next_hand_records_every_hand_a_bot_saw_end(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A stop (Ctrl-C) while the lanes go on from hand to hand: the hand a lane went on to before the stop was seen
    starting by the bots, so it is played to its end and recorded; no hand is recorded that a bot did not see end,
    and none ended for a bot that is not recorded."""
    monkeypatch.setenv("ARENA_BOT_SERVER", "native")
    for tables in (1, 4):
        records, bots, _, _ = play(tables, 200, silence=0.0, stop_after=25)
        assert play.chained > 5  # type: ignore[attr-defined]
        recorded_ids = {r.hand_id for r in records}
        assert 25 <= len(records) < 200
        for bot in bots:
            ended = {hand for hand, messages in by_hand(bot).items()  # type: ignore[arg-type]
                     if any(m.WhichOneof("msg") == "hand_end" for m in messages)}
            assert ended == recorded_ids


@pytest.mark.parametrize(("silence", "chain"), [(0.0, "on"), (0.01, "on"), (0.0, "off")])
def test_lanes_of_a_bot_of_several_tables_are_played_at_the_loops_turn(silence: float, chain: str,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A bot that plays several tables answers in ActionBatches (a stray, an illegal or a mixed action among the
    answers now and then): the lanes play what they can of each batch at the loop's turn and leave the rest to
    Python; the records are grpc.aio's and lanes-off's, every bot gets the same messages for each hand, and the
    requests of its tables go out together (RefereeBatches), not one message a decision. With the hand chain, a
    lane goes on to its table's next hand (which hand a table plays next then differs: they are compared by hand)."""
    monkeypatch.setenv("ARENA_BOT_SERVER", "grpcio")
    reference, reference_bots, _, _ = play(6, 36, silence=silence)
    monkeypatch.setenv("ARENA_BOT_SERVER", "native")
    monkeypatch.setenv("ARENA_LANES", "off")
    unlaned, unlaned_bots, none, _ = play(6, 36, silence=silence)
    assert none == 0
    monkeypatch.setenv("ARENA_LANES", "on")
    monkeypatch.setenv("ARENA_HAND_CHAIN", chain)
    records, bots, opened, laned = play(6, 36, silence=silence)
    chained: int = play.chained  # type: ignore[attr-defined]
    print(f"chain {chain}: {chained} hands chained, {opened} lanes opened")
    # (a lane goes on only while no other table waits for a seat's place: under load, with six tables, few do; a
    # clean-clone CI run saw five or fewer of the 20 or so seen here)
    assert (chained > 0) if chain == "on" else chained == 0
    assert opened + chained >= 36
    decisions = sum(len(r.decisions) for r in records)
    assert decisions / 10 < laned < decisions  # (fewer on a loaded machine: more messages meet in a turn, and a
    # stream whose message went to Python has its lanes recalled for the rest of the turn)
    assert recorded(records, with_table=False) == recorded(reference, with_table=False)
    assert recorded(records, with_table=False) == recorded(unlaned, with_table=False)
    for bot, reference_bot, unlaned_bot in zip(bots, reference_bots, unlaned_bots, strict=True):
        assert by_hand(bot) == by_hand(reference_bot)  # type: ignore[arg-type]
        assert by_hand(bot) == by_hand(unlaned_bot)  # type: ignore[arg-type]
    assert bots[0].packed > 0


class AfterBot(ScriptedBot):
    """Answers in a batch with, now and then, the same request answered twice or a stray after the answer; with
    ``FLOOD``, that request is answered after 230 strays, past the stream's rate limit."""

    FLOOD: int | None = None

    async def play(self, address: str) -> None:
        with contextlib.suppress(grpc.aio.AioRpcError):  # the stream the referee closes at the rate limit
            await super().play(address)

    def _answer(self, table: str, hand: str, request_id: int) -> list[poker_pb2.Action]:
        answers = super()._answer(table, hand, request_id)
        if not answers or not self.batches:
            return answers
        if request_id == self.FLOOD:
            stray = K.Action(table_id="nowhere", hand_id=hand, request_id=request_id, kind=K.ACTION_KIND_FOLD)
            return [stray] * 230 + answers
        roll = random.Random(f"after:{hand}:{request_id}").random()
        if roll < 0.08:
            return [*answers, answers[-1]]  # answered twice
        if roll < 0.16:
            return [*answers, K.Action(table_id=table, hand_id=hand + "x", request_id=request_id,
                                       kind=K.ACTION_KIND_FOLD)]
        return answers


class FloodBot(AfterBot):
    FLOOD = 4001  # hand 4's first request, bot0's


class SplitFloodBot(FloodBot):
    """FloodBot with the strays in one message and the answer right after them in another: whether the two meet in
    one turn of the referee's loop (the lanes then take nothing more from that stream in the turn: ``behind``) or
    not (the stream is closed by then), the answer is never played. (Here they rarely meet: a test that forced it
    would have to hold the referee's loop.)"""

    async def _handle(self, call: Any, messages: list[bot_pb2.RefereeMessage]) -> bool:
        return await super()._handle(_Splitting(call), messages)


class _Splitting:
    """A stream whose ActionBatch of strays and answers is written as two messages, back to back."""

    def __init__(self, call: Any) -> None:
        self.call = call

    async def write(self, message: bot_pb2.BotMessage) -> None:
        actions = list(message.actions.actions)
        if len(actions) > 230:
            await self.call.write(bot_pb2.BotMessage(actions=bot_pb2.ActionBatch(actions=actions[:230])))
            message = bot_pb2.BotMessage(actions=bot_pb2.ActionBatch(actions=actions[230:]))
        await self.call.write(message)


def errors_as_codes(bot: ScriptedBot) -> dict[str, list[bot_pb2.RefereeMessage]]:
    """``by_hand``, an Error kept as its code (its text lists every table's open requests: timing)."""
    out = by_hand(bot)
    for messages in out.values():
        for message in messages:
            if message.WhichOneof("msg") == "error":
                message.error.message = ""
    return out


def test_an_answer_twice_or_a_stray_after_it_in_a_batch_is_told_as_without_lanes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch that answers a request twice is read by Python whole ("answered already" the second time, as without
    lanes); a stray after the lanes' answers is Python's, after them."""
    monkeypatch.setenv("ARENA_BOT_SERVER", "native")
    monkeypatch.setenv("ARENA_LANES", "off")
    reference, reference_bots, _, _ = play(3, 30, silence=0.0, bot_class=AfterBot)
    monkeypatch.setenv("ARENA_LANES", "on")
    records, bots, opened, laned = play(3, 30, silence=0.0, bot_class=AfterBot)
    assert opened > 0 and laned > 0
    assert recorded(records, with_table=False) == recorded(reference, with_table=False)
    for bot, reference_bot in zip(bots, reference_bots, strict=True):
        assert errors_as_codes(bot) == errors_as_codes(reference_bot)
    codes = [m.error.code for ms in errors_as_codes(bots[0]).values() for m in ms if m.WhichOneof("msg") == "error"]
    assert bot_pb2.ERROR_CODE_OUT_OF_ORDER in codes  # "answered already"


@pytest.mark.parametrize("bot_class", [FloodBot, SplitFloodBot])
def test_no_answer_after_one_python_reads_is_played(bot_class: type[ScriptedBot],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A lane plays a batch's answers up to the first it cannot take; that one and the rest are Python's, in order,
    and so is every later message of that stream in the same turn: an answer after 230 strays, in their batch or in
    the next message, is never played (the strays close the stream at the rate limit, and Python reads no further),
    with lanes as without."""
    monkeypatch.setenv("ARENA_BOT_SERVER", "native")
    for lanes in ("off", "on"):
        monkeypatch.setenv("ARENA_LANES", lanes)
        records, _, _, _ = play(2, 6, silence=0.0, bot_class=bot_class)
        [flooded] = [d for r in records for d in r.decisions if d.request_id == FloodBot.FLOOD]
        assert flooded.participant == 0 and flooded.how != "ok", lanes


def test_ARENA_LANES_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_LANES", "maybe")
    with pytest.raises(ValueError, match="ARENA_LANES must be one of on, off; got 'maybe'"):
        native_server.lanes_selected()


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field, by hand."""
    out = bytearray([number << 3 | 2])
    size = len(payload)
    while size > 0x7F:
        out.append((size & 0x7F) | 0x80)
        size >>= 7
    out.append(size)
    return bytes(out) + payload


def crafted(mode: str, request: Any) -> bytes:
    """An answer to ``request`` written by hand, in a form the lanes must leave to Python's parser: it reads them
    otherwise than a field-by-field reader would (merging repeated fields, a oneof's last field winning), or
    refuses them whole."""
    kind = K.ACTION_KIND_CHECK if request.legal.can_check else K.ACTION_KIND_CALL
    action = K.Action(table_id=request.table_id, hand_id=request.hand_id, request_id=request.request_id, kind=kind)
    answer = action.SerializeToString()
    if mode == "two_action_fields":  # merged: a mixed action (fold, where it may, with probability 1)
        fold = K.ACTION_KIND_FOLD if request.legal.can_fold else kind
        return _field(2, K.Action(policy=[K.ActionChoice(kind=fold, probability=1.0)]).SerializeToString()) + \
            _field(2, answer)
    if mode == "a_join_after":  # a oneof: the Join read last is the message ("Join only once"), no answer
        return _field(2, answer) + _field(1, bot_pb2.Join(token="nope").SerializeToString())
    if mode == "a_join_not_utf8":  # the whole message refused: the stream closed
        return _field(1, _field(1, b"\xff")) + _field(2, answer)
    if mode == "table_id_twice":  # the first one not UTF-8: refused whole
        return _field(2, _field(1, b"\xfe") + answer)
    if mode == "a_tag_of_six_bytes":  # refused whole ("wire format was corrupt")
        rest = K.Action(table_id=action.table_id, hand_id=action.hand_id, kind=kind).SerializeToString()
        return _field(2, rest + bytes([0x98, 0x80, 0x80, 0x80, 0x80, 0x00, action.request_id & 0x7F | 0x80,
                                       action.request_id >> 7]))
    if mode == "two_batches_answering":  # concatenated: the first answer counts, the second is answered already
        other = K.Action(table_id=action.table_id, hand_id=action.hand_id, request_id=action.request_id,
                         kind=K.ACTION_KIND_FOLD if request.legal.can_fold else K.ACTION_KIND_ALL_IN)
        return _field(3, bot_pb2.ActionBatch(actions=[action]).SerializeToString()) + \
            _field(3, bot_pb2.ActionBatch(actions=[other]).SerializeToString())
    if mode == "a_batch_with_a_broken_policy":  # refused whole: nothing in it is played
        broken = K.Action(table_id=action.table_id, hand_id=action.hand_id,
                          request_id=action.request_id).SerializeToString() + _field(6, b"\x08")
        return _field(3, _field(1, answer) + _field(1, broken))
    if mode == "a_long_comment":  # 40 KB: gRPC hands it over in several slices; the first 280 characters are kept
        return _field(2, K.Action(table_id=action.table_id, hand_id=action.hand_id, request_id=action.request_id,
                                  kind=kind, comment="é" * 20_000).SerializeToString())
    assert mode == "an_unknown_group"  # kept as an unknown field: the answer counts
    return _field(2, answer + bytes([0x4B, 0x4C]))


CRAFTED = ("two_action_fields", "a_join_after", "a_join_not_utf8", "table_id_twice", "a_tag_of_six_bytes",
           "two_batches_answering", "a_batch_with_a_broken_policy", "an_unknown_group", "a_long_comment")


class CraftedBot:
    """bot1 of ``play_crafted``: answers every request with ``crafted(mode)``, a rejection with a fold."""

    def __init__(self, token: str, mode: str) -> None:
        self.token = token
        self.mode = mode
        self.received: list[bytes] = []

    async def play(self, address: str) -> None:
        async with grpc.aio.insecure_channel(address) as channel:
            call = channel.stream_stream("/arena.v1.BotService/Play", request_serializer=lambda data: data,
                                         response_deserializer=bot_pb2.RefereeMessage.FromString)()
            await call.write(bot_pb2.BotMessage(join=bot_pb2.Join(token=self.token, protocol_version=1,
                                                                  bot_name="crafted")).SerializeToString())
            with contextlib.suppress(grpc.aio.AioRpcError):  # a stream the referee closed
                async for message in call:
                    kind = message.WhichOneof("msg")
                    if kind == "match_end":
                        break
                    inner = getattr(message, str(kind))
                    if kind == "action_request":
                        inner.clock.Clear()
                        await call.write(crafted(self.mode, inner))
                    elif kind == "action_rejected":
                        await call.write(_field(2, K.Action(table_id=inner.table_id, hand_id=inner.hand_id,
                                                            request_id=inner.request_id,
                                                            kind=K.ACTION_KIND_FOLD).SerializeToString()))
                    self.received.append(message.SerializeToString())
                await call.done_writing()


class Kept:
    """A sink that keeps the hands (``durable``: whether it counts as storing them, which keeps the hand chain off)."""

    def __init__(self, durable: bool = True) -> None:
        self.records: list[HandRecord] = []
        self.durable = durable

    def hand_finished(self, record: HandRecord) -> None:
        self.records.append(record)


def serve_match(spec: MatchSpec, seats: list[Any], bots: list[Any], sink: Kept) -> None:
    """One match of ``seats`` on the local socket, played by ``bots`` (each with ``play(address)``), its hands to
    ``sink``."""

    async def main() -> None:
        server = RefereeServer(local=True, tcp=False)
        await server.start()
        for seat in seats:
            server.add_seat(seat)
        try:
            match = Match(spec, [(s.name, s) for s in seats], [sink])
            await asyncio.gather(match.run(), *(bot.play(server.local_address) for bot in bots))
        finally:
            await server.stop()

    asyncio.run(main())


def play_crafted(mode: str, hands: int = 4) -> tuple[list[HandRecord], list[bytes]]:
    """bot0 answers plainly, through a lane; bot1 with ``crafted(mode)``."""
    # a bot that answers gets time to spare on a loaded machine (at 150 ms a suite run once timed one out, and the
    # records differed); one that never answers (a Join read last) is timed out sooner
    per_action_ms = 150 if mode == "a_join_after" else 600
    policy = ClockPolicy(per_action_ms=per_action_ms, time_bank_ms=0, max_retries=1, max_violations=0,
                         reconnect_grace_ms=50)
    spec = MatchSpec("cr", "seed-crafted", hands, config=TableConfig(), starting_stack=2000, policy=policy)
    [seats] = remote_seats(spec, ["bot0", "bot1"])
    kept = Kept()
    bot1 = CraftedBot(seats[1].token, mode)
    serve_match(spec, seats, [ScriptedBot(seats[0].token, 1, 0.0, batches=False), bot1], kept)
    records = kept.records
    return records, bot1.received


@pytest.mark.parametrize("mode", CRAFTED)
def test_what_only_pythons_parser_reads_right_is_left_to_it(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Repeated fields, a oneof with two fields, strings that are not UTF-8, a tag too long, a broken policy in a
    batch, an unknown group, a message in several slices: with lanes, the same records and the same messages to the
    bot as without."""
    monkeypatch.setenv("ARENA_BOT_SERVER", "native")
    monkeypatch.setenv("ARENA_LANES", "off")
    reference = play_crafted(mode)
    monkeypatch.setenv("ARENA_LANES", "on")
    records, received = play_crafted(mode)
    assert recorded(records) == recorded(reference[0])
    assert received == reference[1]


class PacedBot:
    """Checks or calls every request, after ``delays[k]`` seconds for its k-th request (the last one for the rest)."""

    def __init__(self, token: str, delays: tuple[float, ...]) -> None:
        self.token = token
        self.delays = delays
        self.asked = 0

    async def play(self, address: str) -> None:
        async with grpc.aio.insecure_channel(address) as channel:
            call: Any = bot_pb2_grpc.BotServiceStub(channel).Play()  # type: ignore[call-arg]
            await call.write(bot_pb2.BotMessage(join=bot_pb2.Join(token=self.token, protocol_version=1, max_tables=1,
                                                                  bot_name="paced")))
            async for received in call:
                messages = list(received.batch.messages) if received.WhichOneof("msg") == "batch" else [received]
                for message in messages:
                    kind = message.WhichOneof("msg")
                    if kind == "match_end":
                        return
                    if kind != "action_request":
                        continue
                    request = message.action_request
                    await asyncio.sleep(self.delays[min(self.asked, len(self.delays) - 1)])
                    self.asked += 1
                    with contextlib.suppress(grpc.RpcError, asyncio.InvalidStateError):  # (the match may be over)
                        await call.write(bot_pb2.BotMessage(action=K.Action(
                            table_id=request.table_id, hand_id=request.hand_id, request_id=request.request_id,
                            kind=K.ACTION_KIND_CHECK if request.legal.can_check else K.ACTION_KIND_CALL)))


@pytest.mark.foreground  # (it measures time)
@pytest.mark.parametrize("chain", ["on", "off"])
def test_a_lane_lets_no_answer_in_after_its_clock_ran_out(chain: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """One bot thinks 0.08 s a request (its bank pays for it, so its requests' deadlines are far off); the other
    spends its bank on its first request (1.9 s of its 1.55), then has 0.05 s a request (the per-action limit) and
    answers in 0.01 s, but every third time in 0.3 s: each of those answers is late and times out, whether a lane or
    the referee's Python asked. (The lanes' alarm was set for the soonest deadline when it rang: a request that a lane
    asked after the first bot's answer, due before the first bot's deadline, ran on past its own until then, and its
    late answer was played. It now rings at least once per per-action limit while lanes run.)"""
    monkeypatch.setenv("ARENA_BOT_SERVER", "native")
    monkeypatch.setenv("ARENA_LANES", "on")
    monkeypatch.setenv("ARENA_HAND_CHAIN", chain)
    policy = ClockPolicy(per_action_ms=50, time_bank_ms=1500, max_retries=0, max_violations=0)
    spec = MatchSpec("late", "seed-late", 8, config=TableConfig(), starting_stack=2000, policy=policy)
    [seats] = remote_seats(spec, ["thinker", "late"])
    kept = Kept(durable=False)
    serve_match(spec, seats, [PacedBot(seats[0].token, (0.08,)),
                              PacedBot(seats[1].token, (1.9, *(0.01, 0.01, 0.3) * 20))], kept)
    records = kept.records
    late = [d for r in records for d in r.decisions if d.participant == 1]
    thinker = [d for r in records for d in r.decisions if d.participant == 0]
    assert len(records) == 8 and len(late) >= 9 and len(thinker) >= 8
    assert all(d.how == "ok" for d in thinker)
    timed_out = [d for d in late[1:] if d.how == "timeout"]
    assert len(timed_out) >= 2  # its late answers
    # none of its answers at 0.3 s let in (an answer in time may come in late by the referee's own delay on a loaded
    # machine, given back once; its first, spending its bank, may count or not: the bank is gone either way)
    assert [d for d in late[1:] if d.how == "ok" and d.elapsed_ms > 200] == []
