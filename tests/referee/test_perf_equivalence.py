"""The referee's remembered conversions send bots exactly what building every message from scratch would.

The remote seats below answer through a fake connection (no gRPC): at random, with a legal action, an illegal
one, a malformed one, or not at all (a time-out), so hands have retries, referee-made actions (``by_timeout``)
and forfeits. Every ActionRequest, HandEnd and spectator HandSummary is checked, field by field and byte by
byte, against the straightforward construction below, a copy of the code before the caches were added.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Sequence

import pytest

from arena.cards import format_card
from arena.cards.evaluator import describe
from arena.engine import AnteMode, Event, EventKind, Structure, TableConfig, public_history
from arena.referee import ClockPolicy, Decision, HandRecord, HandStart, Match, MatchSpec, Waiter
from arena.transport import convert, wire
from arena.transport.endpoint import Endpoint
from arena.transport.remote import RemoteSeat
from arena.transport.server import MatchDirectory
from arena.transport.session import Connection
from arena_sdk.pb import arena_pb2, bot_pb2, poker_pb2

# ----------------------------------------------------------------------------------- the uncached construction

_WAGERS = (EventKind.BET, EventKind.RAISE, EventKind.CALL)
_ADDS_TO_BET = (EventKind.POST_SMALL_BLIND, EventKind.POST_BIG_BLIND, EventKind.POST_ENTRY_BLIND, EventKind.CALL)


def plain_cards(values: Sequence[int]) -> list[str]:
    return [format_card(c) for c in values]


def plain_public_events(events: Sequence[Event], timeouts: frozenset[int]) -> list[poker_pb2.PublicEvent]:
    out = []
    bets: dict[int, int] = {}
    for index, event in enumerate(events):
        kind = event.kind
        amount = event.amount
        if kind is EventKind.DEAL_BOARD:
            bets.clear()
        elif kind in _ADDS_TO_BET:
            bets[event.seat] = bets.get(event.seat, 0) + amount
        elif kind in (EventKind.BET, EventKind.RAISE):
            bets[event.seat] = amount
        pb_kind = convert._EVENT[kind]
        if event.all_in and kind in _WAGERS:
            pb_kind = poker_pb2.EVENT_KIND_ALL_IN
            amount = bets[event.seat]
        out.append(
            poker_pb2.PublicEvent(
                kind=pb_kind,
                seat=event.seat,
                street=convert.street(event.street),
                amount=amount,
                cards=plain_cards(event.cards),
                by_timeout=index in timeouts,
                pot_index=max(event.pot, 0),
            )
        )
    return out


def plain_action_request(decision: Decision, timeouts: frozenset[int]) -> bot_pb2.ActionRequest:
    view = decision.view
    assert view.legal is not None
    states = []
    for seat in range(view.num_seats):
        if view.folded[seat]:
            status = poker_pb2.SEAT_STATUS_FOLDED
        elif view.stacks[seat] == 0:
            status = poker_pb2.SEAT_STATUS_ALL_IN
        else:
            status = poker_pb2.SEAT_STATUS_ACTIVE
        states.append(poker_pb2.SeatState(
            seat=seat, name=decision.names[seat], stack=view.stacks[seat], bet=view.bets[seat],
            committed=view.committed[seat], status=status,
        ))
    legal = view.legal
    return bot_pb2.ActionRequest(
        table_id=decision.table_id,
        hand_id=decision.hand_id,
        request_id=decision.request_id,
        seat=view.seat,
        hole_cards=plain_cards(view.hole_cards),
        board=plain_cards(view.board),
        button=view.button,
        street=convert.street(view.street),
        seats=states,
        pots=[poker_pb2.Pot(amount=p.amount, eligible_seats=p.eligible) for p in view.pots],
        legal=poker_pb2.LegalActions(
            can_fold=legal.can_fold, can_check=legal.can_check, can_call=legal.can_call,
            call_amount=legal.call_amount, can_raise=legal.can_raise, min_raise_to=legal.min_raise_to,
            max_raise_to=legal.max_raise_to,
        ),
        clock=poker_pb2.Clock(action_ms_left=decision.action_ms_left, bank_ms_left=decision.bank_ms_left),
        history=plain_public_events(view.history, timeouts),
        config=convert.table_config(view.config, view.num_seats, decision.starting_stack),
    )


def plain_hand_end(record: HandRecord, seat: int) -> bot_pb2.HandEnd:
    timeouts = frozenset(d.event_index for d in record.decisions if d.how != "ok")
    shown = {e.seat: e.cards for e in record.events if e.kind is EventKind.SHOW}
    return bot_pb2.HandEnd(
        table_id=record.table_id,
        hand_id=record.hand_id,
        board=plain_cards(record.board),
        shown=[
            poker_pb2.ShownHand(
                seat=s, cards=plain_cards(hole),
                category=describe([*hole, *record.board]).text if len(record.board) >= 3 else "",
            )
            for s, hole in shown.items()
        ],
        payoffs=[
            poker_pb2.SeatPayoff(seat=s, net=record.payoffs[s], final_stack=record.final_stacks[s])
            for s in range(len(record.payoffs))
        ],
        history=plain_public_events(public_history(list(record.events), seat), timeouts),
    )


def plain_summary(record: HandRecord) -> arena_pb2.HandSummary:
    end = plain_hand_end(record, -1)
    return arena_pb2.HandSummary(
        table_id=record.table_id, hand_id=record.hand_id, hand_number=record.hand_number + 1, button=record.button,
        board=end.board, shown=end.shown, payoffs=end.payoffs, history=end.history, seat_names=record.names,
    )


def plain_hand_start(start: HandStart) -> bot_pb2.HandStart:
    return bot_pb2.HandStart(
        table_id=start.table_id, hand_id=start.hand_id, hand_number=start.hand_number + 1, button=start.button,
        seat=start.seat, hole_cards=plain_cards(start.hole_cards),
        seats=[
            poker_pb2.SeatState(
                seat=s, name=start.names[s], stack=start.stacks[s], bet=start.bets[s], committed=start.committed[s],
                status=poker_pb2.SEAT_STATUS_ALL_IN if start.stacks[s] == 0 else poker_pb2.SEAT_STATUS_ACTIVE,
            )
            for s in range(len(start.names))
        ],
    )


def same(a: object, b: object) -> bool:
    """Equal messages with the same bytes (deterministic serialization)."""
    assert isinstance(a, type(b))
    return a == b and a.SerializeToString(deterministic=True) == b.SerializeToString(deterministic=True)  # type: ignore[attr-defined]


# ----------------------------------------------------------------------------------- seats on fake connections


class FakeBot(Connection):
    """A connection whose bot answers on the next loop turn: usually legally, sometimes not, sometimes never."""

    def __init__(self, seat: RemoteSeat, rng: random.Random) -> None:
        super().__init__("fake")
        self.seat = seat
        self.rng = rng
        self.sent: list[bot_pb2.RefereeMessage] = []

    def send(self, message: bot_pb2.RefereeMessage | bytes, on_sent: Callable[[], None] | None = None) -> None:
        if on_sent is not None:
            on_sent()  # as the stream's writer does, just before it hands the message to gRPC
        if isinstance(message, bytes):  # requests are built serialized: what the bot gets is what it parses
            data = message
            message = bot_pb2.RefereeMessage.FromString(data)
            assert message.SerializeToString() == data  # joined in field order: the bytes protobuf itself writes
        message.SerializeToString()  # as the stream's writer would
        self.sent.append(message)
        if message.WhichOneof("msg") == "action_request":
            self.answer(message.action_request)
        elif message.WhichOneof("msg") == "action_rejected":
            self.answer(None)

    def answer(self, request: bot_pb2.ActionRequest | None) -> None:
        asyncio.get_running_loop().call_soon(self._answer, request)

    def _answer(self, request: bot_pb2.ActionRequest | None) -> None:
        """Runs once the referee waits for the answer (on a retry, after it told the bot about the rejection)."""
        rng = self.rng
        roll = rng.random()
        session = self.seat.session
        pending = next(iter(session.pending.values()), None) if session is not None else None
        if roll < 0.02 or pending is None or session is None:
            return  # silence: the referee's clock runs out
        decision = pending[0]
        ids = {"table_id": decision.table_id, "hand_id": decision.hand_id, "request_id": decision.request_id}
        if roll < 0.04:
            action = poker_pb2.Action(**ids, kind=poker_pb2.ACTION_KIND_RAISE, amount=1)
        elif roll < 0.045:
            action = poker_pb2.Action(**ids)  # no kind: malformed
        else:
            legal = request.legal if request is not None else None
            choices = [(poker_pb2.ACTION_KIND_CHECK, 0), (poker_pb2.ACTION_KIND_CALL, 0)]
            if legal is not None:
                choices = [(poker_pb2.ACTION_KIND_FOLD, 0)] if legal.can_fold and rng.random() < 0.2 else []
                choices.append((poker_pb2.ACTION_KIND_CHECK, 0) if legal.can_check else (poker_pb2.ACTION_KIND_CALL, 0))
                if legal.can_raise:
                    choices.append((poker_pb2.ACTION_KIND_RAISE, rng.randint(legal.min_raise_to, legal.max_raise_to)))
                    choices.append((poker_pb2.ACTION_KIND_ALL_IN, 0))
            kind, amount = rng.choice(choices)
            action = poker_pb2.Action(**ids, kind=kind, amount=amount)
        session.deliver(action)


class CapturingSeat(RemoteSeat):
    """A remote seat that keeps every Decision it was asked and every HandStart it was told."""

    reads_view = True  # the test compares each request with the one built from the decision's whole view

    def __init__(self, *args: object) -> None:
        super().__init__(*args)  # type: ignore[arg-type]
        self.decisions: list[Decision] = []
        self.starts: list[HandStart] = []

    async def hand_started(self, start: HandStart) -> None:
        self.starts.append(start)
        await super().hand_started(start)

    async def decide(self, decision: Decision, retry: bool) -> object:  # type: ignore[override]
        if not retry:
            self.decisions.append(decision)
        return await super().decide(decision, retry)

    def open_request(self, decision: Decision, waiter: Waiter) -> Callable[[], None] | None:  # arena.referee.fast
        withdraw = super().open_request(decision, waiter)
        if withdraw is not None:
            self.decisions.append(decision)
        return withdraw


CONFIGS = [  # seats, hands, table
    (2, 200, TableConfig()),
    (3, 120, TableConfig(structure=Structure.POT_LIMIT, ante=10, ante_mode=AnteMode.EACH, reveal_all=False)),
    (6, 90, TableConfig(structure=Structure.FIXED_LIMIT, ante=100, ante_mode=AnteMode.BIG_BLIND)),
]


@pytest.mark.parametrize(("num_seats", "hands", "config"), CONFIGS)
def test_cached_messages_equal_plain_construction(num_seats: int, hands: int, config: TableConfig) -> None:
    policy = ClockPolicy(per_action_ms=4, time_bank_ms=0, max_retries=1, max_violations=30)
    spec = MatchSpec("eq", f"seed-{num_seats}", hands, config=config, starting_stack=3000, policy=policy)
    pb_config = convert.table_config(config, num_seats, spec.starting_stack)
    pb_policy = bot_pb2.ActionClockPolicy(per_action_ms=4)
    seats = [CapturingSeat(Endpoint(f"bot{i}", token=f"token{i}"), "eq", "table-1", pb_config, pb_policy, hands)
             for i in range(num_seats)]
    directory = MatchDirectory()
    records: list[HandRecord] = []

    class Keep:
        def hand_finished(self, record: HandRecord) -> None:
            records.append(record)

    match = Match(spec, [(s.name, s) for s in seats], [Keep(), directory.sink("eq")])
    directory.add(match, seats)
    rng = random.Random(num_seats)
    bots = []
    for seat in seats:
        bot = FakeBot(seat, rng)
        seat.endpoint.add(seat)
        seat.endpoint.attach(bot, bot_pb2.Join(bot_name=seat.name))
        bots.append(bot)
    result = asyncio.run(match.run())
    assert result.hands_played == len(records) >= hands

    # The hands must have had what the caches have to get right
    hows = {d.how for r in records for d in r.decisions}
    assert {"ok", "timeout", "illegal"} <= hows
    assert any(r.decisions[-1].how != "ok" and len(r.decisions) > 1 for r in records)

    by_hand = {r.hand_id: r for r in records}
    requests = 0
    for participant, (seat, bot) in enumerate(zip(seats, bots, strict=True)):
        sent = [m.action_request for m in bot.sent if m.WhichOneof("msg") == "action_request"]
        assert len(sent) == len(seat.decisions)
        for decision, request in zip(seat.decisions, sent, strict=True):
            record = by_hand[decision.hand_id]
            seen = len(decision.view.history)
            assert decision.view.history == public_history(list(record.events[:seen]), decision.view.seat)
            # Actions the referee made for a seat, as the finished record has them, up to this request
            expected = frozenset(d.event_index for d in record.decisions if d.how != "ok" and d.event_index < seen)
            assert decision.timeouts == expected
            assert same(request, plain_action_request(decision, expected))
            assert same(request, convert.action_request(decision, decision.timeouts))
            requests += 1
        starts = [m.hand_start for m in bot.sent if m.WhichOneof("msg") == "hand_start"]
        assert len(starts) == len(seat.starts) == len(records)
        for start, message in zip(seat.starts, starts, strict=True):
            assert same(message, plain_hand_start(start))
        ends = [m.hand_end for m in bot.sent if m.WhichOneof("msg") == "hand_end"]
        assert len(ends) == len(records)
        for end in ends:
            record = by_hand[end.hand_id]
            assert same(end, plain_hand_end(record, record.seating.index(participant)))
    assert requests > 300
    assert any(e.by_timeout for bot in bots for m in bot.sent if m.WhichOneof("msg") == "action_request"
               for e in m.action_request.history)

    events = [arena_pb2.MatchEvent.FromString(data) for data in directory.matches["eq"].events()]
    summaries = [e.hand_finished for e in events if e.WhichOneof("event") == "hand_finished"]
    assert len(summaries) == len(records)
    for summary, record in zip(summaries, records, strict=True):
        assert same(summary, plain_summary(record))


def test_hand_end_for_any_seat_in_any_order_equals_plain_construction() -> None:
    records: list[HandRecord] = []

    class Keep:
        def hand_finished(self, record: HandRecord) -> None:
            records.append(record)

    from arena.referee import FunctionSeat
    from tests.referee.test_table import caller

    spec = MatchSpec("any", "seed-any", 30, config=TableConfig(reveal_all=False))
    match = Match(spec, [(f"b{i}", FunctionSeat(f"b{i}", caller)) for i in range(4)], [Keep()])
    asyncio.run(match.run())
    rng = random.Random(3)
    asks = [(r, s) for r in records for s in range(-1, 4)]
    rng.shuffle(asks)
    for record, seat in asks:
        assert same(wire.hand_end(record, seat), plain_hand_end(record, seat))


def test_public_events_memo_equals_plain_conversion() -> None:
    """Growing, restarting and unrelated event lists, with time-out flags added late, in any order."""
    records: list[HandRecord] = []

    class Keep:
        def hand_finished(self, record: HandRecord) -> None:
            records.append(record)

    from arena.referee import FunctionSeat
    from tests.referee.test_table import caller

    spec = MatchSpec("memo", "seed-memo", 40, config=TableConfig(structure=Structure.POT_LIMIT))
    asyncio.run(Match(spec, [(f"b{i}", FunctionSeat(f"b{i}", caller)) for i in range(3)], [Keep()]).run())
    rng = random.Random(5)
    memo = wire.PublicEvents()
    checked = 0
    for _ in range(300):
        record = rng.choice(records)
        seat = rng.randrange(-1, 3)
        events = public_history(list(record.events), seat)
        timeouts: frozenset[int] = frozenset()
        length = rng.randrange(len(events) // 2)
        while length <= len(events):
            if rng.random() < 0.2:  # a flag for an event seen already, or one not yet seen
                timeouts = timeouts | {rng.randrange(len(events))}
            encoded = memo.wire(events[:length], timeouts)
            want = plain_public_events(events[:length], timeouts)
            assert encoded == bot_pb2.ActionRequest(history=want).SerializeToString()
            got = bot_pb2.ActionRequest.FromString(encoded).history
            assert len(got) == len(want)
            assert all(same(a, b) for a, b in zip(got, want, strict=True))
            checked += 1
            length += rng.randrange(1, 4)
    assert checked > 1000


def test_hand_start_bytes_equal_plain_construction_for_any_seat_and_an_all_in_post() -> None:

    starts = [
        HandStart("m", "t-1", "m-0", 0, 0, 0, (12, 25), (2950, 0), ("a", "b"), (50, 100), (50, 100)),
        HandStart("m", "t-2.3", "m-41", 41, 1, 0, (0, 51), (0, 2900, 3000), ("a", "é", ""), (50, 100, 0),
                  (60, 110, 10)),
        HandStart("m", "t-1", "m-7", 7, 2, 2, (3, 4), (1, 2, 3), ("x", "y", "z"), (0, 0, 0), (0, 0, 0)),
    ]
    for start in starts:
        data = wire.hand_start_bytes(start)
        message = bot_pb2.RefereeMessage.FromString(data)
        assert message.SerializeToString() == data
        assert same(message.hand_start, plain_hand_start(start))
        assert message.hand_start.seats[0].status == (poker_pb2.SEAT_STATUS_ALL_IN if start.stacks[0] == 0 else
                                                      poker_pb2.SEAT_STATUS_ACTIVE)
