"""The protocol does what its documents say (proto/README.md, proto/arena/v1/*.proto), point by point."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import grpc
import pytest

from arena.engine import Action, ActionKind, AnteMode, TableConfig
from arena.records import queries
from arena.records.db import Database
from arena.records.ledger import Ledger
from arena.referee import ClockPolicy, Decision, FunctionSeat, Introduction, Match, MatchResult, MatchSpec
from arena.referee.table import posted
from arena.runner.bots import BotSpec
from arena.transport import convert
from arena.transport.endpoint import Endpoint
from arena.transport.remote import RemoteSeat
from arena.transport.server import MatchDirectory, RefereeServer
from arena.transport.session import Connection
from arena_sdk.pb import arena_pb2, bot_pb2, poker_pb2

pytestmark = pytest.mark.timeout(60)

POLICY = ClockPolicy(per_action_ms=300, time_bank_ms=0, max_retries=1, max_violations=0)


def caller(decision: Decision) -> Action:
    legal = decision.view.legal
    assert legal is not None
    return Action(ActionKind.CHECK) if legal.can_check else Action(ActionKind.CALL)


Answer = Callable[[bot_pb2.ActionRequest], list[poker_pb2.Action]]


def echo(request: bot_pb2.ActionRequest) -> list[poker_pb2.Action]:
    kind = poker_pb2.ACTION_KIND_CHECK if request.legal.can_check else poker_pb2.ACTION_KIND_CALL
    return [poker_pb2.Action(table_id=request.table_id, hand_id=request.hand_id, request_id=request.request_id,
                             kind=kind)]


class Bot(Connection):
    """A connection whose bot answers every request on the next loop turn with ``answer``'s Actions."""

    def __init__(self, seat: RemoteSeat, answer: Answer = echo) -> None:
        super().__init__("test")
        self.seat = seat
        self.answer = answer
        self.got: list[bot_pb2.RefereeMessage] = []

    def send(self, message: bot_pb2.RefereeMessage | bytes, on_sent: Callable[[], None] | None = None) -> None:
        if on_sent is not None:
            on_sent()
        if isinstance(message, bytes):  # requests are built serialized
            message = bot_pb2.RefereeMessage.FromString(message)
        self.got.append(message)
        if message.WhichOneof("msg") == "action_request":
            loop = asyncio.get_running_loop()
            for action in self.answer(message.action_request):
                loop.call_soon(self.deliver, action)

    def deliver(self, action: poker_pb2.Action) -> None:
        """As the bot service does: the Action goes to the seat's session (the stream that plays it now)."""
        session = self.seat.session
        if session is not None:
            session.deliver(action)

    def of(self, kind: str) -> list[bot_pb2.RefereeMessage]:
        return [m for m in self.got if m.WhichOneof("msg") == kind]


def remote(spec: MatchSpec, name: str, token: str) -> RemoteSeat:
    config = convert.table_config(spec.config, 2, spec.starting_stack)
    seat = RemoteSeat(Endpoint(name, token=token), spec.match_id, spec.table_id, config, bot_pb2.ActionClockPolicy(),
                      spec.hands)
    seat.endpoint.add(seat)
    return seat


def play(spec: MatchSpec, answer: Answer = echo,
         join: bot_pb2.Join | None = None) -> tuple[MatchResult, Bot, MatchDirectory]:
    """A match of a remote seat (participant 0, answering with ``answer``) against an in-process caller."""
    seat = remote(spec, "registered", "tok")
    directory = MatchDirectory()
    match = Match(spec, [("registered", seat), ("caller", FunctionSeat("caller", caller))],
                  [directory.sink(spec.match_id)])
    directory.add(match, [seat])
    bot = Bot(seat, answer)

    async def run() -> MatchResult:
        seat.endpoint.attach(bot, join or bot_pb2.Join(token="tok", bot_name="me", protocol_version=1))
        return await match.run()

    return asyncio.run(run()), bot, directory


def test_an_action_that_does_not_echo_every_id_is_refused_and_never_applied() -> None:
    def sloppy(request: bot_pb2.ActionRequest) -> list[poker_pb2.Action]:
        right = echo(request)[0]
        wrong = []
        for change in ({"hand_id": ""}, {"table_id": ""}, {"table_id": "other-table"},
                       {"hand_id": "other-hand"}, {"request_id": request.request_id + 1}):
            action = poker_pb2.Action()
            action.CopyFrom(right)
            action.kind = poker_pb2.ACTION_KIND_FOLD  # would be carried out if accepted: the hand would end
            for field, value in change.items():
                setattr(action, field, value)
            wrong.append(action)
        return [*wrong, right]

    result, bot, _ = play(MatchSpec("ids", "seed", 2, policy=POLICY), sloppy)
    errors = [m.error for m in bot.of("error")]
    requests = bot.of("action_request")
    assert requests and len(errors) == 5 * len(requests)
    assert {e.code for e in errors} == {bot_pb2.ERROR_CODE_UNKNOWN_REQUEST}
    assert not any(e.fatal for e in errors)
    texts = [e.message for e in errors[:5]]
    assert "hand_id '' is not 'ids-0'" in texts[0] and "table_id '' is not 'table-1'" in texts[1]
    assert "table_id 'other-table'" in texts[2] and "hand_id 'other-hand'" in texts[3] and "request_id" in texts[4]
    # each error names the ids of the Action it ignores
    first = requests[0].action_request
    assert (errors[0].table_id, errors[0].hand_id, errors[0].request_id) == (first.table_id, "", first.request_id)
    # none of the folds was carried out: every request was answered by its echoed check or call, in time
    assert result.results[0].violations == 0 and result.results[0].decisions == len(requests)
    assert all(e.kind != poker_pb2.EVENT_KIND_FOLD for m in bot.of("hand_end") for e in m.hand_end.history)


def test_a_timeout_error_names_the_table_hand_and_request() -> None:
    result, bot, _ = play(MatchSpec("slow", "seed", 2, policy=POLICY), lambda request: [])
    timeouts = [m.error for m in bot.of("error") if m.error.code == bot_pb2.ERROR_CODE_TIMEOUT]
    requests = [m.action_request for m in bot.of("action_request")]
    assert timeouts and len(timeouts) == len(requests)
    for error, request in zip(timeouts, requests, strict=True):
        assert (error.table_id, error.hand_id, error.request_id) == (request.table_id, request.hand_id,
                                                                       request.request_id)
    assert result.results[0].timeouts == len(requests)


def test_hand_numbers_on_the_wire_count_from_one_for_bots_and_spectators() -> None:
    _, bot, directory = play(MatchSpec("numbers", "seed", 4, policy=POLICY))
    assert [m.hand_start.hand_number for m in bot.of("hand_start")] == [1, 2, 3, 4]
    events = [arena_pb2.MatchEvent.FromString(data) for data in directory.matches["numbers"].events()]
    summaries = [e.hand_finished for e in events if e.WhichOneof("event") == "hand_finished"]
    assert [s.hand_number for s in summaries] == [1, 2, 3, 4]
    assert [s.hand_id for s in summaries] == [m.hand_start.hand_id for m in bot.of("hand_start")]


@pytest.mark.parametrize("mode", [AnteMode.EACH, AnteMode.BIG_BLIND])
def test_hand_start_shows_the_blinds_and_antes_already_posted(mode: AnteMode) -> None:
    config = TableConfig(small_blind=50, big_blind=100, ante=10, ante_mode=mode)
    _, bot, _ = play(MatchSpec("posts", "seed", 2, config=config, starting_stack=1000, policy=POLICY))
    for message in bot.of("hand_start"):
        start = message.hand_start
        sb, bb = start.button, 1 - start.button  # heads-up: the button posts the small blind (R2.3)
        seats = {s.seat: s for s in start.seats}
        antes = {sb: 10, bb: 10} if mode is AnteMode.EACH else {sb: 0, bb: 10}
        assert (seats[sb].bet, seats[bb].bet) == (50, 100)
        assert seats[sb].committed == 50 + antes[sb] and seats[bb].committed == 100 + antes[bb]
        assert all(s.stack == 1000 - s.committed and s.status == poker_pb2.SEAT_STATUS_ACTIVE for s in start.seats)
        # the same as the first request of the hand says, when it is ours and nobody acted before us
        first = [m.action_request for m in bot.of("action_request") if m.action_request.hand_id == start.hand_id]
        if first and len(first[0].history) == sum(1 for e in first[0].history if e.kind <= 5):
            assert [(s.bet, s.committed, s.stack) for s in first[0].seats] == [
                (s.bet, s.committed, s.stack) for s in start.seats
            ]


def test_posted_reads_the_forced_bets_even_when_they_put_everyone_all_in() -> None:
    from arena.engine import Hand

    hand = Hand(TableConfig(small_blind=50, big_blind=100), [40, 100], list(range(52)))
    assert hand.is_over  # both all-in on the blinds: the hand ran out at once
    assert posted(hand) == ((40, 100), (40, 100))


def test_names_are_the_registered_ones_and_the_join_is_recorded(tmp_path: Path) -> None:
    spec = MatchSpec("names", "seed", 2, policy=POLICY)
    join = bot_pb2.Join(token="tok", bot_name="impostor\x1b[31m", bot_version="2.1", protocol_version=1,
                        language="rust")
    result, bot, _ = play(spec, join=join)
    shown = {s.name for m in bot.of("action_request") for s in m.action_request.seats}
    shown |= {s.name for m in bot.of("hand_start") for s in m.hand_start.seats}
    shown |= {r.name for m in bot.of("match_end") for r in m.match_end.results}
    assert shown == {"registered", "caller"}
    me = Introduction("impostor\x1b[31m", "2.1", "rust")
    assert result.results[0].joined == (me,) and result.results[1].joined == ()
    db = Database(tmp_path / "arena.db")
    entry = Ledger(db).open(spec, [BotSpec("registered", ""), BotSpec("caller", "")])
    entry.finish(result)
    entry.finish(result)  # a second time (a resumed match) records nothing twice
    assert queries.joined(db, "names") == {0: [me]}
    languages = {(b.name, b.language) for b in queries.bot_infos(db)}
    assert languages == {("registered", "rust"), ("caller", "")}


def test_each_welcome_gives_the_seat_of_the_bots_first_hand() -> None:
    spec = MatchSpec("welcome", "seed", 2, policy=POLICY)
    seats = [remote(spec, "a", "ta"), remote(spec, "b", "tb")]
    Match(spec, [("a", seats[0]), ("b", seats[1])])
    bots = [Bot(seat) for seat in seats]

    async def join() -> None:
        for seat, bot in zip(seats, bots, strict=True):
            seat.endpoint.attach(bot, bot_pb2.Join(token=seat.token, protocol_version=1))

    asyncio.run(join())
    assert [b.of("welcome")[0].welcome.seat for b in bots] == [0, 1]


def test_garbage_as_the_first_message_gets_an_error_and_a_non_ok_status() -> None:
    async def scenario() -> tuple[list[bot_pb2.RefereeMessage], grpc.StatusCode]:
        server = RefereeServer(local=True, tcp=False)
        await server.start()
        try:
            async with grpc.aio.insecure_channel(server.local_address) as channel:
                call = channel.stream_stream("/arena.v1.BotService/Play", request_serializer=lambda b: b,
                                             response_deserializer=bot_pb2.RefereeMessage.FromString)
                stream = call(iter([b"\xff\xfe\x00not a protobuf message\x13\x37"]))
                got = []
                try:
                    async for message in stream:
                        got.append(message)
                except grpc.aio.AioRpcError:
                    pass
                return got, await stream.code()
        finally:
            await server.stop()

    got, status = asyncio.run(scenario())
    assert status == grpc.StatusCode.INVALID_ARGUMENT
    assert len(got) == 1 and got[0].error.code == bot_pb2.ERROR_CODE_MALFORMED and got[0].error.fatal


def test_unspecified_kinds_are_refused_citing_r6_1_as_the_proto_says() -> None:
    def unspecified(request: bot_pb2.ActionRequest) -> list[poker_pb2.Action]:
        action = echo(request)[0]
        action.kind = poker_pb2.ACTION_KIND_UNSPECIFIED
        return [action]

    _, bot, _ = play(MatchSpec("kind", "seed", 2, policy=POLICY), unspecified)
    rejections = [m.action_rejected for m in bot.of("action_rejected")]
    assert rejections and {r.rule for r in rejections} == {"R6.1"}
    comment = poker_pb2.DESCRIPTOR.enum_types_by_name["ActionKind"]
    assert comment.values_by_number[0].name == "ACTION_KIND_UNSPECIFIED"
    proto = (Path(__file__).resolve().parents[2] / "proto" / "arena" / "v1" / "poker.proto").read_text()
    unspecified_doc = proto[proto.index("enum ActionKind"): proto.index("ACTION_KIND_UNSPECIFIED = 0")]
    assert "R6.1" in unspecified_doc and "R6.3" not in unspecified_doc


@pytest.mark.parametrize("amount", [0, 7, 300])
def test_an_action_message_reads_as_the_action_it_names_shared_or_not(amount: int) -> None:
    kinds = {poker_pb2.ACTION_KIND_FOLD: ActionKind.FOLD, poker_pb2.ACTION_KIND_CHECK: ActionKind.CHECK,
             poker_pb2.ACTION_KIND_CALL: ActionKind.CALL, poker_pb2.ACTION_KIND_RAISE: ActionKind.RAISE,
             poker_pb2.ACTION_KIND_ALL_IN: ActionKind.ALL_IN}
    for pb_kind, kind in kinds.items():
        read = convert.action_from_pb(poker_pb2.Action(kind=pb_kind, amount=amount))
        assert isinstance(read, Action)
        assert read == Action(kind, amount if kind is ActionKind.RAISE else 0)  # only a raise keeps its amount
    for pb_kind in (poker_pb2.ACTION_KIND_UNSPECIFIED, 9):
        with pytest.raises(convert.MalformedAction, match=r"R6\.1"):
            convert.action_from_pb(poker_pb2.Action(kind=pb_kind, amount=amount))  # type: ignore[arg-type]


def test_a_comment_is_cleaned_the_same_whether_it_was_met_before_or_not() -> None:
    """Repeated notes are remembered (one object each), a long one never is, and the answer is the same either
    way: cleaned, cut to COMMENT_MAX characters, blank ones dropped (arena.text.comment)."""
    from arena.referee import Commented
    from arena.text import COMMENT_MAX

    def read(text: str) -> object:
        return convert.action_from_pb(poker_pb2.Action(kind=poker_pb2.ACTION_KIND_CALL, comment=text))

    first, again = read("  top pair\x1b[2J "), read("  top pair\x1b[2J ")
    assert first == again == Commented(Action(ActionKind.CALL), "top pair\\x1b[2J") and first is again
    assert read("   ") == Action(ActionKind.CALL)
    long = read("x" * (COMMENT_MAX * 3))
    assert isinstance(long, Commented) and len(long.comment) == COMMENT_MAX and long.comment.endswith("…")
    assert long is not read("x" * (COMMENT_MAX * 3))
    for i in range(convert._COMMENTED_KEPT + 5):  # a bot that never repeats itself: the memory stays bounded
        read(f"note {i}")
    assert len(convert._COMMENTED) <= convert._COMMENTED_KEPT
