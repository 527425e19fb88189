"""The golden transcript: a seeded four-hand heads-up match over a real referee server, seen from one seat.

Participant 0 ("golden-bot") is a scripted bot speaking the protocol over gRPC, exactly as any bot would;
participant 1 ("station") is a deterministic in-process opponent (checks when free, calls pre-flop, folds to any bet
after the flop). Every message the scripted bot receives and sends is written, in order, as protobuf text format
(``transcript``), and checked into ``tests/transport/golden/`` (``GOLDEN``). The first hand of it is the example
exchange of ``proto/README.md`` (``readme_example``), so the README shows what the referee really sends.

Regenerate both after a deliberate protocol change, and read the diff:

    ARENA_UPDATE_GOLDEN=1 .venv/bin/pytest tests/transport/test_golden.py     # or: python -m tests.transport.golden

Only the clock is normalised (``normalise``): ``Clock.action_ms_left`` and ``bank_ms_left`` are written as the full
per-action time and bank of the policy, which they are unless the machine is so slow that the bank gets used. In
the batch transcript, a MatchEnd packed with the last HandEnds (ready before their write went out: a loaded
machine) is written apart after them (``ends_apart``), as it goes on an idle one.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import grpc
from google.protobuf import text_encoding, text_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from arena.engine import Action as EngineAction
from arena.engine import ActionKind as EngineKind
from arena.engine import Street as EngineStreet
from arena.referee import ClockPolicy, Decision, FunctionSeat, Match, MatchSpec
from arena.transport import convert
from arena.transport.endpoint import Endpoint
from arena.transport.remote import RemoteSeat
from arena.transport.server import RefereeServer
from arena_sdk.pb import bot_pb2, bot_pb2_grpc, poker_pb2

REPO = Path(__file__).resolve().parents[2]
GOLDEN = REPO / "tests" / "transport" / "golden" / "heads_up_4_hands.txtpb"
GOLDEN_BATCHES = REPO / "tests" / "transport" / "golden" / "two_tables_batches.txtpb"
README = REPO / "proto" / "README.md"
BEGIN = "<!-- BEGIN GENERATED EXAMPLE: tests/transport/golden.py; do not edit by hand -->"
END = "<!-- END GENERATED EXAMPLE -->"
BEGIN_BATCHES = "<!-- BEGIN GENERATED BATCH EXAMPLE: tests/transport/golden.py; do not edit by hand -->"
END_BATCHES = "<!-- END GENERATED BATCH EXAMPLE -->"

TOKEN = "tok-7f3a"
POLICY = ClockPolicy(per_action_ms=2000, time_bank_ms=30000, max_retries=2, max_violations=3,
                     connect_timeout_ms=20000)
SPEC = MatchSpec("m1", "golden-seed-1", 4, starting_stack=10000, policy=POLICY, table_id="t0")
JOIN = bot_pb2.Join(token=TOKEN, bot_name="my-bot", bot_version="1.0.0", protocol_version=1, language="python")
# The batch example: one deal in both rotations, on two tables at once, for a bot that takes two and asks for batches
SPEC_BATCHES = MatchSpec("m2", "golden-seed-2", 2, starting_stack=10000, policy=POLICY, table_id="t0", tables=2)
JOIN_BATCHES = bot_pb2.Join(token=TOKEN, bot_name="my-bot", bot_version="1.0.0", protocol_version=1,
                            language="python", max_tables=2, batches=True)
BOT, OPPONENT = "golden-bot", "station"

_F = poker_pb2.ACTION_KIND_FOLD
_C = poker_pb2.ACTION_KIND_CHECK
_CALL = poker_pb2.ACTION_KIND_CALL
_R = poker_pb2.ACTION_KIND_RAISE
_A = poker_pb2.ACTION_KIND_ALL_IN


@dataclass(frozen=True, slots=True)
class Move:
    """One Action the scripted bot sends, with why; ``hand_id``/``table_id`` override the echoed ids (a mistake)."""

    kind: int
    amount: int = 0
    why: str = ""
    hand_id: str | None = None
    table_id: str | None = None


# (hand number on the wire, n-th request of that hand): the Actions to send, one list per try (after each
# ActionRejected, the next list). Requests not listed are answered with CHECK if free, else CALL.
SCRIPT: dict[tuple[int, int], list[list[Move]]] = {
    (1, 1): [
        [Move(_R, 150, "a mistake: 150 is the increment, but amounts are raise-to totals")],
        [Move(_R, 300, "second try, same request_id: raise to 300")],
    ],
    (1, 2): [
        [Move(_F, 0, "fold although the check is free: refused (R6.1a)")],
        [Move(_C, 0, "an Action with an empty hand_id: ignored, the request stays open", hand_id=""),
         Move(_R, 400, "the same request, ids echoed: bet 400 (a bet is a RAISE)")],
    ],
    (3, 1): [[Move(_A, 0, "all-in")]],
    (4, 1): [[Move(_F, 0, "fold the small blind")]],
}


def station(decision: Decision) -> EngineAction:
    """The opponent: check when free, call pre-flop, fold to any bet after the flop."""
    legal = decision.view.legal
    assert legal is not None
    if legal.can_check:
        return EngineAction(EngineKind.CHECK)
    if decision.view.street is EngineStreet.PREFLOP:
        return EngineAction(EngineKind.CALL)
    return EngineAction(EngineKind.FOLD)


@dataclass(frozen=True, slots=True)
class Entry:
    """One message of the transcript: ``sent`` by the bot (a BotMessage) or received (a RefereeMessage)."""

    sent: bool
    message: Message
    note: str


def normalise(message: bot_pb2.RefereeMessage) -> bot_pb2.RefereeMessage:
    """The message with its clock written as the policy's full allowance (the one field that depends on time)."""
    for inner in message.batch.messages:
        normalise(inner)
    if message.WhichOneof("msg") == "action_request":
        clock = message.action_request.clock
        assert 0 < clock.action_ms_left <= POLICY.per_action_ms and 0 <= clock.bank_ms_left <= POLICY.time_bank_ms
        clock.action_ms_left = POLICY.per_action_ms
        clock.bank_ms_left = POLICY.time_bank_ms
    return message


def ends_apart(message: bot_pb2.RefereeMessage) -> list[bot_pb2.RefereeMessage]:
    """The message, with a MatchEnd that came in the same batch as the last HandEnd written apart after it: the
    referee packs what is ready at once, and whether the MatchEnd is ready before the last HandEnd's write has gone
    out depends on the machine's load (written apart as it goes on an idle one; the one packing that depends on
    time, as the clock is the one field)."""
    inner = message.batch.messages
    if message.WhichOneof("msg") != "batch" or len(inner) < 2 or inner[-1].WhichOneof("msg") != "match_end":
        return [message]
    end = bot_pb2.RefereeMessage()
    end.CopyFrom(inner[-1])
    rest = bot_pb2.RefereeMessage()
    rest.CopyFrom(message)
    del rest.batch.messages[-1]
    if len(rest.batch.messages) == 1:  # a batch of one is not sent: its message is
        only = bot_pb2.RefereeMessage()
        only.CopyFrom(rest.batch.messages[0])
        rest = only
    return [rest, end]


def _street(request: bot_pb2.ActionRequest) -> str:
    return poker_pb2.Street.Name(request.street).removeprefix("STREET_").lower().replace("preflop", "pre-flop")


def describe(message: bot_pb2.RefereeMessage) -> str:
    """A one-line comment for a received message, made from its content."""
    which = message.WhichOneof("msg")
    if which == "action_request":
        r = message.action_request
        owed = "the check is free" if r.legal.can_check else f"{r.legal.call_amount} to call"
        raises = f", raise to {r.legal.min_raise_to}..{r.legal.max_raise_to}" if r.legal.can_raise else ""
        return f"our turn {_street(r)}: {owed}{raises}"
    if which == "hand_start":
        h = message.hand_start
        return (f"hand {h.hand_number} begins (blinds posted, cards dealt): we are seat {h.seat}, "
                f"the button is seat {h.button}")
    if which == "action_rejected":
        return f"rejected ({message.action_rejected.rule}): the state is unchanged and the request is still open"
    if which == "error":
        e = message.error
        return f"{bot_pb2.ErrorCode.Name(e.code)}{' (fatal)' if e.fatal else ''}"
    if which == "hand_end":
        return "the hand is over"
    if which == "match_end":
        return "the match is over; the stream ends after this"
    if which == "batch":
        parts = [m.WhichOneof("msg") or "?" for m in message.batch.messages]
        return "a batch: " + ", ".join(f"{p} ({m.action_request.table_id if p == 'action_request' else _table(m)})"
                                       for p, m in zip(parts, message.batch.messages, strict=True))
    if which == "welcome":
        w = message.welcome
        return f"seated: {w.tables} table(s) at once" + (", in batches" if w.batches else "")
    return which or "?"


def _table(message: bot_pb2.RefereeMessage) -> str:
    body = getattr(message, message.WhichOneof("msg") or "error")
    return str(getattr(body, "table_id", "")) or "-"


async def play_transcript(batches: bool = False) -> list[Entry]:
    """Play the golden match (``batches``: the two-table batch example) and return what the scripted bot received
    and sent."""
    spec = SPEC_BATCHES if batches else SPEC
    server = RefereeServer(local=True, tcp=False)
    await server.start()
    config = convert.table_config(spec.config, 2, spec.starting_stack)
    policy = bot_pb2.ActionClockPolicy(per_action_ms=POLICY.per_action_ms, time_bank_ms=POLICY.time_bank_ms,
                                       max_retries=POLICY.max_retries, max_violations=POLICY.max_violations)
    table_id = f"{spec.table_id}.1" if spec.tables > 1 else spec.table_id
    seat = RemoteSeat(Endpoint(BOT, token=TOKEN), spec.match_id, table_id, config, policy, len(spec.plan(2)),
                      spec.tables)
    server.add_seat(seat)
    match = Match(spec, [(BOT, seat), (OPPONENT, FunctionSeat(OPPONENT, station))])
    entries: list[Entry] = []
    try:
        playing = asyncio.ensure_future(match.run())
        async with grpc.aio.insecure_channel(server.local_address) as channel:
            bot = _batch_bot if batches else _bot
            await asyncio.wait_for(bot(bot_pb2_grpc.BotServiceStub(channel), entries), 60)
        await asyncio.wait_for(playing, 30)
    finally:
        await server.stop()
    return entries


async def _batch_bot(stub: bot_pb2_grpc.BotServiceStub, entries: list[Entry]) -> None:
    """The batch example's bot: answers every request of a batch at once, in one ActionBatch (check, else call)."""
    call = stub.Play()
    message = bot_pb2.BotMessage(join=JOIN_BATCHES)
    entries.append(Entry(True, message, "join: two tables at once, in batches"))
    await call.write(message)
    while True:
        received = await call.read()
        if received is grpc.aio.EOF:
            break
        assert isinstance(received, bot_pb2.RefereeMessage)
        inner = list(received.batch.messages) if received.WhichOneof("msg") == "batch" else [received]
        for message in ends_apart(received):
            entries.append(Entry(False, normalise(message), describe(message)))
        requests = [m.action_request for m in inner if m.WhichOneof("msg") == "action_request"]
        answers = [poker_pb2.Action(table_id=r.table_id, hand_id=r.hand_id, request_id=r.request_id,
                                    kind=_C if r.legal.can_check else _CALL) for r in requests]
        if len(answers) == 1:
            out = bot_pb2.BotMessage(action=answers[0])
        elif answers:
            out = bot_pb2.BotMessage()
            out.actions.actions.extend(answers)
        if answers:
            tables = ", ".join(a.table_id for a in answers)
            entries.append(Entry(True, out, f"{'one answer' if len(answers) == 1 else 'the answers'}: {tables}"))
            await call.write(out)
        if any(m.WhichOneof("msg") == "match_end" for m in inner):
            await call.done_writing()
    assert await call.code() == grpc.StatusCode.OK, await call.details()


async def _bot(stub: bot_pb2_grpc.BotServiceStub, entries: list[Entry]) -> None:
    """The scripted bot: echo every request's ids, follow ``SCRIPT``, record everything."""
    call = stub.Play()
    numbers: dict[str, int] = {}  # hand_id -> hand number
    asked: dict[str, int] = {}  # hand_id -> requests so far
    tries: list[list[Move]] = []
    request = bot_pb2.ActionRequest()

    async def send(message: bot_pb2.BotMessage, note: str) -> None:
        entries.append(Entry(True, message, note))
        await call.write(message)

    async def answer(moves: Sequence[Move]) -> None:
        for move in moves:
            action = poker_pb2.Action(
                table_id=request.table_id if move.table_id is None else move.table_id,
                hand_id=request.hand_id if move.hand_id is None else move.hand_id,
                request_id=request.request_id, kind=move.kind, amount=move.amount,  # type: ignore[arg-type]
            )
            kind = poker_pb2.ActionKind.Name(move.kind).removeprefix("ACTION_KIND_").lower()
            await send(bot_pb2.BotMessage(action=action), move.why or kind)

    await send(bot_pb2.BotMessage(join=JOIN), "join: the first message")
    while True:
        message = await call.read()
        if message is grpc.aio.EOF:
            break
        assert isinstance(message, bot_pb2.RefereeMessage)
        entries.append(Entry(False, normalise(message), describe(message)))
        which = message.WhichOneof("msg")
        if which == "hand_start":
            numbers[message.hand_start.hand_id] = message.hand_start.hand_number
        elif which == "action_request":
            request = message.action_request
            asked[request.hand_id] = asked.get(request.hand_id, 0) + 1
            key = (numbers[request.hand_id], asked[request.hand_id])
            default = [Move(_C if request.legal.can_check else _CALL)]
            tries = list(SCRIPT.get(key, [default]))
            await answer(tries.pop(0))
        elif which == "action_rejected":
            await answer(tries.pop(0) if tries else [Move(_C if request.legal.can_check else _CALL)])
        elif which == "match_end":
            await call.done_writing()
    assert await call.code() == grpc.StatusCode.OK, await call.details()


# ----------------------------------------------------------------------------------------------- text format


SHOWN_WHEN_ZERO = frozenset({"seat", "button", "bet", "committed"})  # proto3 sends no zeros; written out for readers


def _escape(char: str) -> str:
    if char in '\\"':
        return "\\" + char
    return char if char.isprintable() else text_encoding.CEscape(char, as_utf8=False)


def _scalar(field: FieldDescriptor, value: object) -> str:
    if field.type == FieldDescriptor.TYPE_ENUM:
        return field.enum_type.values_by_number[value].name  # type: ignore[index]
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + "".join(_escape(c) for c in value) + '"'
    return str(value)


def _one_line(message: Message) -> str:
    fields = _fields(message, "", one_line=True)
    return "{ " + " ".join(fields) + " }" if fields else "{ }"


def _fields(message: Message, indent: str, one_line: bool = False) -> list[str]:
    """The set fields of ``message`` in protobuf text format: scalars and short messages on one line each,
    repeated scalars as ``[a, b]`` lists, longer messages spread over lines."""
    out = []
    present = dict(message.ListFields())
    for field in message.DESCRIPTOR.fields:
        if field in present:
            value = present[field]
        elif field.name in SHOWN_WHEN_ZERO and not field.is_repeated and field.type != FieldDescriptor.TYPE_MESSAGE:
            value = field.default_value
        else:
            continue
        repeated = field.is_repeated
        if field.type != FieldDescriptor.TYPE_MESSAGE:
            text = "[" + ", ".join(_scalar(field, v) for v in value) + "]" if repeated else _scalar(field, value)
            out.append(f"{indent}{field.name}: {text}")
            continue
        for sub in value if repeated else [value]:
            line = f"{indent}{field.name} {_one_line(sub)}"
            if one_line or len(line) <= 116:
                out.append(line)
            else:
                out.append(f"{indent}{field.name} {{")
                out.extend(_fields(sub, indent + "  "))
                out.append(f"{indent}}}")
    return out


def block(entry: Entry) -> str:
    """One message as a commented text-format block, e.g. ``# << referee: our turn ...`` then ``action_request {``."""
    who = ">> bot" if entry.sent else "<< referee"
    return "\n".join([f"# {who}: {entry.note}", *_fields(entry.message, "")])


HEADER_BATCHES = """\
# Golden transcript of a seeded two-hand heads-up match (one deal in both rotations) played on two tables at once
# by a bot that takes two tables and asks for batches (Join.max_tables = 2, Join.batches), as it saw it: every
# RefereeMessage it received (<<) and every BotMessage it sent (>>), in order, in protobuf text format.
# Generated by tests/transport/golden.py (ARENA_UPDATE_GOLDEN=1 regenerates it); compared in test_golden.py.
# Normalised as heads_up_4_hands.txtpb: the clocks are the policy's full allowance; zeros written out.
"""

HEADER = """\
# Golden transcript of a seeded four-hand heads-up match, as participant 0 ("golden-bot") saw it: every
# RefereeMessage it received (<<) and every BotMessage it sent (>>), in order, in protobuf text format.
# Generated by tests/transport/golden.py (ARENA_UPDATE_GOLDEN=1 regenerates it); compared in test_golden.py.
# Normalised: Clock.action_ms_left and bank_ms_left are written as the policy's per_action_ms and time_bank_ms.
# Zeros of seat, button, bet and committed are written out for the reader; proto3 does not send zeros (a missing
# field reads as 0), so the messages are the same.
"""


def transcript(entries: Sequence[Entry], batches: bool = False) -> str:
    """The golden file's text."""
    return (HEADER_BATCHES if batches else HEADER) + "".join(f"\n{block(e)}\n" for e in entries)


def blocks(text: str) -> list[str]:
    """The message blocks of a golden file (each starts with its ``# >>`` or ``# <<`` comment)."""
    return [b.strip("\n") for b in text.split("\n\n") if b.startswith(("# >>", "# <<"))]


def parse(block_text: str) -> Message:
    """A block as the message it shows (a BotMessage for ``>>``, a RefereeMessage for ``<<``)."""
    message: Message = bot_pb2.BotMessage() if block_text.startswith("# >>") else bot_pb2.RefereeMessage()
    return text_format.Parse(block_text, message)


def readme_example(text: str) -> str:
    """The README's example exchange: the Join, the Welcome, the whole first hand, and the MatchEnd."""
    found = blocks(text)
    first_end = next(i for i, b in enumerate(found) if "\nhand_end {" in b)
    fenced = [f"```protobuf\n{b}\n```" for b in found[: first_end + 1]]
    between = ("The other three hands, a check-down to a showdown, an all-in and a folded small blind, are in\n"
               "[the golden transcript](../tests/transport/golden/heads_up_4_hands.txtpb). At the end:")
    return "\n\n".join([*fenced, between, f"```protobuf\n{found[-1]}\n```"]) + "\n"


def readme_batch_example(text: str) -> str:
    """The README's batch example: the Join, the Welcome, the first two batches and their answers."""
    found = blocks(text)
    second_answer = [i for i, b in enumerate(found) if b.startswith("# >>")][2]
    fenced = [f"```protobuf\n{b}\n```" for b in found[: second_answer + 1]]
    rest = ("The rest of both hands, and the MatchEnd, are in\n"
            "[the batch transcript](../tests/transport/golden/two_tables_batches.txtpb).")
    return "\n\n".join([*fenced, rest]) + "\n"


def readme_section(readme: str, batches: bool = False) -> str:
    """What stands between the README's BEGIN and END markers (of the batch example, with ``batches``)."""
    begin, end = (BEGIN_BATCHES, END_BATCHES) if batches else (BEGIN, END)
    start = readme.index(begin) + len(begin)
    return readme[start : readme.index(end)].strip("\n") + "\n"


def write(text: str, batches: bool = False) -> None:
    """Write the golden file, and the README's example from it."""
    golden, begin, end = (GOLDEN_BATCHES, BEGIN_BATCHES, END_BATCHES) if batches else (GOLDEN, BEGIN, END)
    example = readme_batch_example(text) if batches else readme_example(text)
    golden.parent.mkdir(parents=True, exist_ok=True)
    golden.write_text(text)
    readme = README.read_text()
    start = readme.index(begin) + len(begin)
    README.write_text(readme[:start] + "\n" + example + readme[readme.index(end):])


def main(argv: Sequence[str]) -> int:
    """``--write``: play the match and rewrite the golden file and the README's example; otherwise print the
    README's example made from the golden file as it is."""
    if "--write" in argv:
        write(transcript(asyncio.run(play_transcript())))
        write(transcript(asyncio.run(play_transcript(batches=True)), batches=True), batches=True)
        return 0
    sys.stdout.write(readme_example(GOLDEN.read_text()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
