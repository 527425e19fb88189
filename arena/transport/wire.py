"""The bytes the referee sends: the one place outgoing messages are encoded.

Requests, hand starts, hand ends and batches are joined from their fields' encodings, in field-number order (a
message's encoding is the concatenation of its fields', and in that order it is the one protobuf writes), so what
recurs (seats, pots, legal actions, history events, cards, payoffs) is encoded once and reused across requests, seats
and tables. Every field key comes from the message's descriptor (``key``). The bounded memos are ``lru_cache``s of
pure functions; ``tests/transport/test_golden.py`` and ``tests/referee/test_perf_equivalence.py`` pin the bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import cache, lru_cache

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from arena.cards import format_card
from arena.cards.evaluator import hand_names_by_top_bits
from arena.engine import Event, EventKind, LegalActions, Pot, TableConfig
from arena.engine.view import public_history
from arena.referee import Decision, HandRecord, HandStart, WireRequest
from arena.transport import convert
from arena_sdk.pb import arena_pb2, bot_pb2, poker_pb2

BATCH_BYTES = 1 << 20  # the most a RefereeBatch holds; more goes in the next one
KEPT = 1 << 15  # entries of each memo of encodings: full, the seats of 6-max tables take ~40 MB, the rest less

_LENGTH_DELIMITED = (FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BYTES, FieldDescriptor.TYPE_MESSAGE)
_VARINT = (FieldDescriptor.TYPE_INT32, FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_UINT32,
           FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_ENUM, FieldDescriptor.TYPE_BOOL)


def key(message: type[Message], name: str) -> int:
    """The one-byte key of field ``name`` of ``message``, from its descriptor: its number shifted left by 3, or-ed
    with its wire type (2 for strings, bytes and messages, repeated or not; 0 for a single integer, enum or bool)."""
    field = message.DESCRIPTOR.fields_by_name[name]
    if field.type in _LENGTH_DELIMITED:
        wire_type = 2
    elif field.type in _VARINT and not field.is_repeated:
        wire_type = 0
    else:
        raise ValueError(f"{message.DESCRIPTOR.full_name}.{name}: only strings, messages and single integers are "
                         "encoded here")
    if field.number > 15:
        raise ValueError(f"{message.DESCRIPTOR.full_name}.{name}: field numbers above 15 take a two-byte key")
    return (field.number << 3) | wire_type


def keys(message: type[Message], *names: str) -> tuple[int, ...]:
    """``key`` of each of ``names``."""
    return tuple(key(message, name) for name in names)


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


_SMALL: dict[int, bytes] = {}  # the one- and two-byte varints, each made the first time it is asked for


def varint(value: int) -> bytes:
    """A non-negative integer as protobuf's base-128 varint (the small ones, nearly all, looked up)."""
    found = _SMALL.get(value)
    if found is None:
        found = _varint(value)  # a negative value raises ValueError here
        if value < 1 << 14:
            _SMALL[value] = found
    return found


_KEYED: dict[tuple[int, int], bytes] = {}  # int_field's small fields, made once each (bounded: keys x 128 values)


def int_field(tag: int, value: int) -> bytes:
    """A non-negative integer or enum field as protobuf encodes it: nothing when the value is 0."""
    if not value:
        return b""
    if value < 0x80:
        field = _KEYED.get((tag, value))
        if field is None:
            field = _KEYED[(tag, value)] = bytes((tag, value))
        return field
    return bytes((tag,)) + varint(value)


def field_bytes(tag: int, data: bytes) -> bytes:
    """A length-delimited field (``tag`` as ``key`` gives it) holding ``data``."""
    size = len(data)
    if size < 0x80:  # most fields: the length is one byte
        return bytes((tag, size)) + data
    return bytes((tag,)) + varint(size) + data


def text_field(tag: int, text: str) -> bytes:
    """A string field as protobuf encodes it: nothing when the string is empty."""
    return field_bytes(tag, text.encode()) if text else b""


def serialized(message: Message | bytes) -> bytes:
    """A message serialized, or bytes already serialized as they are."""
    return message if isinstance(message, bytes) else message.SerializeToString()


# ------------------------------------------------------------------------------------ fields remembered


@cache
def _card_fields(tag: int) -> dict[int, bytes]:
    """Each card's string field ``tag``, by card."""
    return {c: text_field(tag, format_card(c)) for c in range(52)}


def cards_field(tag: int, values: Sequence[int]) -> bytes:
    """Cards as a repeated string field ``tag`` (their text, R1.2), from each card's field made once per tag."""
    fields = _card_fields(tag)
    try:
        return b"".join([fields[c] for c in values])
    except KeyError:
        for c in values:
            format_card(c)  # names the value that is no card (R1.1)
        raise


@lru_cache(maxsize=KEPT)
def event_field(tag: int, event: Event, amount: int, by_timeout: bool) -> bytes:
    """``convert.event_message(event, amount, by_timeout)`` as the length-delimited field ``tag`` (a history),
    remembered: the same event is sent to every seat of its hand and again in the hand's end, and most events
    (a call of the big blind, a check on the flop, the flop itself) recur from hand to hand and table to table."""
    return field_bytes(tag, convert.event_message(event, amount, by_timeout).SerializeToString())


_SEAT_STATE = poker_pb2.SeatState


@lru_cache(maxsize=KEPT)
def seats_field(tag: int, names: tuple[str, ...], stacks: tuple[int, ...], bets: tuple[int, ...],
                committed: tuple[int, ...], folded: tuple[bool, ...]) -> bytes:
    """Every seat's SeatState (folded, else all-in with an empty stack, else active) as the repeated field ``tag``,
    remembered: in the reset game most decisions see stacks and bets seen before."""
    states = []
    for seat, name in enumerate(names):
        status = (poker_pb2.SEAT_STATUS_FOLDED if folded[seat] else
                  poker_pb2.SEAT_STATUS_ALL_IN if stacks[seat] == 0 else poker_pb2.SEAT_STATUS_ACTIVE)
        state = _SEAT_STATE(seat=seat, name=name, stack=stacks[seat], bet=bets[seat], committed=committed[seat],
                            status=status)
        states.append(field_bytes(tag, state.SerializeToString()))
    return b"".join(states)


@lru_cache(maxsize=KEPT)
def payoffs_field(tag: int, payoffs: tuple[int, ...], final_stacks: tuple[int, ...]) -> bytes:
    """Every seat's SeatPayoff as the repeated field ``tag``, remembered: in the reset game a few results recur."""
    return b"".join([
        field_bytes(tag, poker_pb2.SeatPayoff(seat=seat, net=net, final_stack=final_stacks[seat]).SerializeToString())
        for seat, net in enumerate(payoffs)])


@lru_cache(maxsize=KEPT)
def pots_field(pots: tuple[Pot, ...]) -> bytes:
    """ActionRequest's ``pots``, remembered by the pots."""
    request = bot_pb2.ActionRequest()
    add_pot = request.pots.add
    for pot in pots:
        add_pot(amount=pot.amount, eligible_seats=pot.eligible)
    return request.SerializeToString()


def legal_clock_fields(legal: LegalActions, action_ms_left: int, bank_ms_left: int) -> bytes:
    """ActionRequest's ``legal`` and ``clock``, remembered: both are always present, even with every value 0."""
    return _legal_clock(legal.can_fold, legal.can_check, legal.call_amount, legal.min_raise_to, legal.max_raise_to,
                        action_ms_left, bank_ms_left)


@lru_cache(maxsize=KEPT)
def _legal_clock(can_fold: bool, can_check: bool, call_amount: int, min_raise_to: int, max_raise_to: int,
                 action_ms_left: int, bank_ms_left: int) -> bytes:
    request = bot_pb2.ActionRequest()
    pb_legal = request.legal
    pb_legal.SetInParent()
    pb_legal.can_fold = can_fold
    pb_legal.can_check = can_check
    pb_legal.can_call = call_amount > 0
    pb_legal.call_amount = call_amount
    pb_legal.can_raise = max_raise_to > 0
    pb_legal.min_raise_to = min_raise_to
    pb_legal.max_raise_to = max_raise_to
    clock = request.clock
    clock.SetInParent()
    clock.action_ms_left = action_ms_left
    clock.bank_ms_left = bank_ms_left
    return request.SerializeToString()


# ------------------------------------------------------------------------------------ batches

_BATCH = key(bot_pb2.RefereeMessage, "batch")
_BATCH_MESSAGES = key(bot_pb2.RefereeBatch, "messages")


def batches(messages: Sequence[Message | bytes]) -> Iterator[tuple[bytes, int]]:
    """The messages in order, serialized and packed into RefereeBatches of at most ``BATCH_BYTES`` of messages
    (every gRPC library reads 4 MiB messages by default): each batch as one serialized RefereeMessage, with how many
    of the messages it holds. A batch of one message is that message as it is (a lone bigger one included)."""
    pending: list[bytes] = []
    size = 0
    for message in messages:
        data = serialized(message)
        if pending and size + len(data) > BATCH_BYTES:
            yield packed(pending), len(pending)
            pending, size = [], 0
        pending.append(data)
        size += len(data)
    if pending:
        yield packed(pending), len(pending)


def packed(messages: list[bytes]) -> bytes:
    """Serialized RefereeMessages as one serialized RefereeMessage holding a RefereeBatch of them (one message: as
    it is), written into one buffer: nothing is parsed, and each message is copied once (by the compiled engine's
    ``pack_batch`` when there is one, else by ``packed_here``)."""
    if len(messages) == 1:
        return messages[0]
    if _PACK_BATCH is not None:
        return _PACK_BATCH(messages)
    return packed_here(messages)


def packed_here(messages: Sequence[bytes]) -> bytes:
    """``packed``, in Python: the reference."""
    body = bytearray()
    for data in messages:
        size = len(data)
        body.append(_BATCH_MESSAGES)
        if size < 0x80:
            body.append(size)
        else:
            body += varint(size)
        body += data
    return bytes((_BATCH,)) + varint(len(body)) + body


# ------------------------------------------------------------------------------------ requests

_REQUEST = key(bot_pb2.RefereeMessage, "action_request")
_TABLE_ID, _HAND_ID, _REQUEST_ID, _SEAT, _HOLE_CARDS, _BOARD, _BUTTON, _STREET, _SEATS, _HISTORY, _CONFIG = keys(
    bot_pb2.ActionRequest, "table_id", "hand_id", "request_id", "seat", "hole_cards", "board", "button", "street",
    "seats", "history", "config")
_STREETS = tuple(convert.street(value) for value in range(5))  # the engine's streets (Street) as the protocol's


class PublicEvents:
    """``convert.public_events`` for one viewer, encoded as ActionRequest's ``history`` field and remembered: a
    hand's events only grow, so each call encodes just the events added since the last one (from ``event_field``'s
    shared encodings) and fixes ``by_timeout`` of earlier ones if ``timeouts`` changed. Events that do not extend
    the last ones (a new hand) start it afresh, so the result always equals the encoding of ``public_events``.
    """

    __slots__ = ("_amounts", "_bets", "_source", "_timeouts", "_wire")

    def __init__(self) -> None:
        self._source: tuple[Event, ...] = ()
        self._amounts: list[int] = []  # each event's wire_amount
        self._wire: list[bytes] = []
        self._bets: dict[int, int] = {}
        self._timeouts: frozenset[int] = frozenset()

    def wire(self, events: Sequence[Event], timeouts: frozenset[int] = frozenset()) -> bytes:
        """``public_events(events, timeouts)`` as the bytes of ActionRequest's repeated ``history`` field."""
        self._follow(events, timeouts)
        source, amounts, wire = self._source, self._amounts, self._wire
        for index in range(len(wire), len(source)):
            wire.append(event_field(_HISTORY, source[index], amounts[index], index in timeouts))
        return b"".join(wire)

    def _follow(self, events: Sequence[Event], timeouts: frozenset[int]) -> None:
        """Take in the events added since the last call (or start afresh), and time-out flags that changed."""
        events = tuple(events)
        done = len(self._source)
        if done > len(events) or events[:done] != self._source:
            self._amounts = []
            self._wire = []
            self._bets = {}
            self._timeouts = frozenset()
            done = 0
        if timeouts != self._timeouts:
            wire = self._wire
            for index in timeouts ^ self._timeouts:
                if index < len(wire):
                    wire[index] = event_field(_HISTORY, events[index], self._amounts[index], index in timeouts)
            self._timeouts = timeouts
        bets, amounts = self._bets, self._amounts
        for index in range(done, len(events)):
            amounts.append(convert.wire_amount(events[index], bets))
        self._source = events


_last_ids: tuple[tuple[str, str], bytes] = (("", ""), b"")  # the ids encoded last, by any seat's builder


class RequestBuilder:
    """Builds one seat's requests, the one place an ActionRequest is made. Kept per seat, it is cheap: the hand's
    history is converted only as far as it grew since the seat's last request (see ``PublicEvents``), the table's
    config is kept encoded while it stays the same, and the rest is joined from remembered encodings.
    """

    __slots__ = ("_config_key", "_config_wire", "_history", "_ids", "_ids_wire")

    def __init__(self) -> None:
        self._history = PublicEvents()
        self._config_key: tuple[TableConfig, int, int] | None = None
        self._config_wire = b""
        self._ids: tuple[str, str] | None = None  # the table and hand of the last request
        self._ids_wire = b""

    def _ids_fields(self, table_id: str, hand_id: str) -> bytes:
        """ActionRequest's ``table_id`` and ``hand_id``, encoded again only when the hand changes (and then once for
        all the hand's seats: the last encoding is kept beside the builders, ``_last_ids``)."""
        ids = (table_id, hand_id)
        if self._ids != ids:
            global _last_ids
            if _last_ids[0] != ids:
                _last_ids = (ids, text_field(_TABLE_ID, table_id) + text_field(_HAND_ID, hand_id))
            self._ids, self._ids_wire = _last_ids
        return self._ids_wire

    def _config_field(self, config: TableConfig, num_seats: int, starting_stack: int) -> bytes:
        """``convert.table_config(config, num_seats, starting_stack)`` as ActionRequest's ``config`` field, encoded
        again only when one of them changes."""
        config_key = (config, num_seats, starting_stack)
        if config_key != self._config_key:
            self._config_wire = field_bytes(
                _CONFIG, convert.table_config(config, num_seats, starting_stack).SerializeToString())
            self._config_key = config_key
        return self._config_wire

    def lane_parts(self, table_id: str, hand_id: str, config: TableConfig, num_seats: int,
                   starting_stack: int) -> tuple[bytes, bytes]:
        """What a lane's requests to this seat are built with beside the hand (arena.transport.lanes): the ids'
        fields and the config field, as ``request_wire`` has them."""
        return self._ids_fields(table_id, hand_id), self._config_field(config, num_seats, starting_stack)

    def message(self, decision: Decision, timeouts: frozenset[int] = frozenset()) -> bot_pb2.RefereeMessage:
        """The RefereeMessage that asks for ``decision``."""
        return bot_pb2.RefereeMessage.FromString(self.serialized(decision, timeouts))

    def request_wire(self, request: WireRequest) -> bytes:
        """The serialized RefereeMessage that asks for ``request`` (the table's fast path), encoded whole by the
        compiled engine from the hand (``Hand.request_wire``) with the ids and config remembered here: the same
        bytes as ``serialized`` gives for the request's Decision (tests/transport/test_view_wire.py)."""
        hand = request.hand
        return hand.request_wire(request.seat, request.names, request.timeouts, request.action_ms_left,
                                 request.bank_ms_left, self._ids_fields(request.table_id, request.hand_id),
                                 request.request_id,
                                 self._config_field(hand.config, hand.num_seats, request.starting_stack))

    def serialized(self, decision: Decision, timeouts: frozenset[int] = frozenset()) -> bytes:
        """The serialized RefereeMessage that asks for ``decision``: the history's events, the config, the seats,
        pots, legal actions and clock are kept encoded and reused; only ids and cards are encoded anew. When the
        compiled engine encoded the fields that come from the hand (``Decision.view_wire``), those are taken as
        they are: the same bytes (tests/transport/test_view_wire.py)."""
        view = decision.view
        legal = view.legal
        assert legal is not None, "a request is only built for the seat to act"
        if decision.view_wire and timeouts == decision.timeouts:
            return field_bytes(_REQUEST, b"".join((
                self._ids_fields(decision.table_id, decision.hand_id),
                int_field(_REQUEST_ID, decision.request_id),
                int_field(_SEAT, view.seat),
                decision.view_wire,
                self._config_field(view.config, view.num_seats, decision.starting_stack),
            )))
        body = b"".join((
            text_field(_TABLE_ID, decision.table_id),
            text_field(_HAND_ID, decision.hand_id),
            int_field(_REQUEST_ID, decision.request_id),
            int_field(_SEAT, view.seat),
            cards_field(_HOLE_CARDS, view.hole_cards),
            cards_field(_BOARD, view.board),
            int_field(_BUTTON, view.button),
            int_field(_STREET, _STREETS[view.street]),
            seats_field(_SEATS, decision.names, view.stacks, view.bets, view.committed, view.folded),
            pots_field(view.pots),
            legal_clock_fields(legal, decision.action_ms_left, decision.bank_ms_left),
            self._history.wire(view.history, timeouts),
            self._config_field(view.config, view.num_seats, decision.starting_stack),
        ))
        return field_bytes(_REQUEST, body)


def packed_key(message: type[Message], name: str) -> int:
    """The one-byte key of a packed repeated integer field ``name`` (length-delimited: wire type 2)."""
    field = message.DESCRIPTOR.fields_by_name[name]
    if not field.is_repeated or field.type not in _VARINT or field.number > 15:
        raise ValueError(f"{message.DESCRIPTOR.full_name}.{name}: not a packed integer field with a one-byte key")
    return (field.number << 3) | 2


_PACK_BATCH: Callable[[list[bytes]], bytes] | None = None  # the compiled engine's, once its format is set


def set_view_wire_format() -> None:
    """Tell the compiled engine how ``Hand.view_wire`` and ``Hand.end_wire`` encode: the protocol's field keys and
    enum values, from the descriptors (as every key here comes), and the cards' texts."""
    try:
        from arena.engine import _core
    except ImportError:  # installed without the compiled engine: every request is built here
        return
    _core.set_wire_format(
        (*keys(bot_pb2.ActionRequest, "hole_cards", "board", "button", "street", "seats", "pots", "legal", "clock",
               "history"),
         *keys(poker_pb2.SeatState, "seat", "name", "stack", "bet", "committed", "status"),
         key(poker_pb2.Pot, "amount"), packed_key(poker_pb2.Pot, "eligible_seats"),
         *keys(poker_pb2.LegalActions, "can_fold", "can_check", "can_call", "call_amount", "can_raise",
               "min_raise_to", "max_raise_to"),
         *keys(poker_pb2.Clock, "action_ms_left", "bank_ms_left"),
         *keys(poker_pb2.PublicEvent, "kind", "seat", "street", "amount", "cards", "by_timeout", "pot_index"),
         key(bot_pb2.HandEnd, "history"),
         _REQUEST, _REQUEST_ID, _SEAT,
         key(bot_pb2.RefereeMessage, "hand_end"),
         *keys(bot_pb2.HandEnd, "table_id", "hand_id", "board", "shown", "payoffs"),
         *keys(poker_pb2.ShownHand, "seat", "cards", "category"),
         *keys(poker_pb2.SeatPayoff, "seat", "net", "final_stack"),
         key(bot_pb2.RefereeMessage, "hand_start"),
         *keys(bot_pb2.HandStart, "table_id", "hand_id", "hand_number", "button", "seat", "hole_cards", "seats"),
         _BATCH, _BATCH_MESSAGES),
        (poker_pb2.SEAT_STATUS_ACTIVE, poker_pb2.SEAT_STATUS_FOLDED, poker_pb2.SEAT_STATUS_ALL_IN),
        (0, *(convert._EVENT[EventKind(value)] for value in range(1, 16))),
        poker_pb2.EVENT_KIND_ALL_IN,
        _STREETS,
        [format_card(c) for c in range(52)],
        convert.wire_hand_number(0),
    )
    _core.set_hand_names(hand_names_by_top_bits())  # HandEnds' category names, encoded without calling Python
    global _PACK_BATCH
    _PACK_BATCH = _core.pack_batch


set_view_wire_format()


def action_request(decision: Decision, timeouts: frozenset[int] = frozenset()) -> bot_pb2.ActionRequest:
    """The self-contained request a bot answers (see proto ActionRequest), built from scratch."""
    return RequestBuilder().message(decision, timeouts).action_request


# ------------------------------------------------------------------------------------ hand starts and ends

_HAND_START = key(bot_pb2.RefereeMessage, "hand_start")
_START_TABLE_ID, _START_HAND_ID, _START_NUMBER, _START_BUTTON, _START_SEAT, _START_HOLE, _START_SEATS = keys(
    bot_pb2.HandStart, "table_id", "hand_id", "hand_number", "button", "seat", "hole_cards", "seats")


def hand_start_bytes(start: HandStart) -> bytes:
    """The serialized RefereeMessage holding the HandStart of ``start``: every seat active, or all-in when the
    posts took its whole stack; joined from remembered encodings (``seats_field``, ``cards_field``)."""
    body = b"".join((
        text_field(_START_TABLE_ID, start.table_id),
        text_field(_START_HAND_ID, start.hand_id),
        int_field(_START_NUMBER, convert.wire_hand_number(start.hand_number)),
        int_field(_START_BUTTON, start.button),
        int_field(_START_SEAT, start.seat),
        cards_field(_START_HOLE, start.hole_cards),
        seats_field(_START_SEATS, start.names, start.stacks, start.bets, start.committed,
                    (False,) * len(start.names)),
    ))
    return field_bytes(_HAND_START, body)


_HAND_END = key(bot_pb2.RefereeMessage, "hand_end")
_END_TABLE_ID, _END_HAND_ID, _END_BOARD, _END_SHOWN, _END_PAYOFFS, _END_HISTORY = keys(
    bot_pb2.HandEnd, "table_id", "hand_id", "board", "shown", "payoffs", "history")


class HandEndParts:
    """What the HandEnd of every seat and the spectators' summary of one hand have in common, converted once:
    all but the seat's own hole cards, which only its DEAL_HOLE events show. The fields before the history are
    encoded at once; the history's bytes when a seat's HandEnd is asked for, from ``event_field``'s shared
    encodings; the messages only when asked for (spectators, tests). A record of the compiled engine carries its
    seats' HandEnds already (``HandRecord.end_wire``): for it these parts are built only for the spectators.
    """

    __slots__ = ("_amounts", "_history", "_own_deals", "_own_wire", "_record", "_timeouts", "_wire", "head", "shown")

    def __init__(self, record: HandRecord) -> None:
        self._record = record
        self._timeouts = frozenset(d.event_index for d in record.decisions if d.how != "ok")
        self.shown = convert.shown_hands(convert.shown_at_showdown(record), record.board)
        self.head = b"".join((  # HandEnd's fields before the history, in field order
            text_field(_END_TABLE_ID, record.table_id),
            text_field(_END_HAND_ID, record.hand_id),
            cards_field(_END_BOARD, record.board),
            b"".join([field_bytes(_END_SHOWN, shown.SerializeToString()) for shown in self.shown]),
            payoffs_field(_END_PAYOFFS, record.payoffs, record.final_stacks),
        ))
        self._amounts: list[int] | None = None
        self._wire: list[bytes] | None = None
        self._own_wire: dict[int, list[tuple[int, bytes]]] = {}
        self._history: list[poker_pb2.PublicEvent] | None = None
        self._own_deals: dict[int, list[tuple[int, poker_pb2.PublicEvent]]] | None = None

    @property
    def amounts(self) -> list[int]:
        """Each event's amount as the protocol states it (``convert.wire_amount``)."""
        if self._amounts is None:
            bets: dict[int, int] = {}
            self._amounts = [convert.wire_amount(event, bets) for event in self._record.events]
        return self._amounts

    def seat_wire(self, seat: int) -> bytes:
        """``seat``'s HandEnd serialized, without the field key and length around it."""
        if self._wire is None:
            self._history_wire()
        assert self._wire is not None
        own = self._own_wire.get(seat)
        if not own:
            return self.head + b"".join(self._wire)
        wire = list(self._wire)
        for index, data in own:
            wire[index] = data
        return self.head + b"".join(wire)

    def _history_wire(self) -> None:
        """Every history field's bytes as a spectator sees them, and each seat's own DEAL_HOLE fields'."""
        timeouts, amounts = self._timeouts, self.amounts
        wire = []
        own_wire: dict[int, list[tuple[int, bytes]]] = {}  # seat: its own DEAL_HOLE fields' bytes (index in wire)
        for index, event in enumerate(self._record.events):
            flag = index in timeouts
            if event.kind is EventKind.DEAL_HOLE and event.cards:
                own_wire.setdefault(event.seat, []).append(
                    (index, event_field(_END_HISTORY, event, amounts[index], flag)))
                event = event._replace(cards=())
            wire.append(event_field(_END_HISTORY, event, amounts[index], flag))
        self._wire = wire
        self._own_wire = own_wire

    @property
    def board(self) -> list[str]:
        """The board's cards (R1.2)."""
        return convert.cards(self._record.board)

    @property
    def payoffs(self) -> list[poker_pb2.SeatPayoff]:
        """Every seat's net and final stack."""
        record = self._record
        return [poker_pb2.SeatPayoff(seat=s, net=record.payoffs[s], final_stack=record.final_stacks[s])
                for s in range(len(record.payoffs))]

    @property
    def history(self) -> list[poker_pb2.PublicEvent]:
        """The history as a spectator sees it: no hole cards but those shown (R8.4)."""
        if self._history is None:
            events = public_history(list(self._record.events), -1)
            amounts = self.amounts
            self._history = [convert.event_message(e, amounts[i], i in self._timeouts)
                             for i, e in enumerate(events)]
        return self._history

    @property
    def own_deals(self) -> dict[int, list[tuple[int, poker_pb2.PublicEvent]]]:
        """Seat: (index in ``history``, its DEAL_HOLE event with its cards)."""
        if self._own_deals is None:
            own: dict[int, list[tuple[int, poker_pb2.PublicEvent]]] = {}
            for index, event in enumerate(self._record.events):
                if event.kind is EventKind.DEAL_HOLE and event.cards:
                    own.setdefault(event.seat, []).append(
                        (index, convert.event_message(event, self.amounts[index], index in self._timeouts)))
            self._own_deals = own
        return self._own_deals


_PARTS: dict[int, tuple[HandRecord, HandEndParts]] = {}  # id(record): its parts, for the last few records
_PARTS_KEPT = 64  # a hand's HandEnds are built one after the other; more than enough for many tables at once


def hand_end_parts(record: HandRecord) -> HandEndParts:
    """The parts of ``record``'s HandEnds that do not depend on the seat. They are remembered for the last few
    records (the table builds one HandEnd per seat and the spectators' summary in a row), so a record must not
    change once they are built.
    """
    cached = _PARTS.get(id(record))
    if cached is not None and cached[0] is record:
        return cached[1]
    parts = HandEndParts(record)
    _PARTS[id(record)] = (record, parts)
    while len(_PARTS) > _PARTS_KEPT:
        del _PARTS[next(iter(_PARTS))]
    return parts


def hand_end_bytes(record: HandRecord, seat: int) -> bytes:
    """The serialized RefereeMessage holding ``hand_end(record, seat)``: the compiled engine's, when the record
    carries them (``HandRecord.end_wire``), else joined from bytes made once per hand."""
    if record.end_wire:
        return record.end_wire[seat]
    return field_bytes(_HAND_END, hand_end_parts(record).seat_wire(seat))


def hand_end(record: HandRecord, seat: int) -> bot_pb2.HandEnd:
    """The end of a hand as ``seat`` may see it (spectators pass -1: no hole cards but those shown)."""
    parts = hand_end_parts(record)
    end = bot_pb2.HandEnd(table_id=record.table_id, hand_id=record.hand_id, board=parts.board, shown=parts.shown,
                          payoffs=parts.payoffs, history=parts.history)
    history = end.history
    for index, event in parts.own_deals.get(seat, ()):
        history[index].CopyFrom(event)
    return end


def hand_summary(match_id: str, record: HandRecord) -> arena_pb2.MatchEvent:
    """The spectators' public summary of a finished hand (its parts shared with the HandEnds the bots get)."""
    parts = hand_end_parts(record)
    event = arena_pb2.MatchEvent(match_id=match_id)
    summary = event.hand_finished
    summary.SetInParent()
    summary.table_id = record.table_id
    summary.hand_id = record.hand_id
    summary.hand_number = convert.wire_hand_number(record.hand_number)
    summary.button = record.button
    summary.board.extend(parts.board)
    summary.shown.extend(parts.shown)
    summary.payoffs.extend(parts.payoffs)
    summary.history.extend(parts.history)
    summary.seat_names.extend(record.names)
    return event
