"""Conversions between engine types and the protocol's messages: the one place where the two meet (layer 5)."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from typing import TypeVar

from arena.cards import format_card
from arena.cards.evaluator import hand_name
from arena.engine import Action, ActionKind, AnteMode, Event, EventKind, LegalActions, Pot, Structure, TableConfig
from arena.referee.records import Decision, MixedAction
from arena.text import for_terminal
from arena.transport.pb import bot_pb2, poker_pb2

PROTOCOL_VERSION = 1

_STRUCTURE = {
    Structure.NO_LIMIT: poker_pb2.STRUCTURE_NO_LIMIT,
    Structure.POT_LIMIT: poker_pb2.STRUCTURE_POT_LIMIT,
    Structure.FIXED_LIMIT: poker_pb2.STRUCTURE_FIXED_LIMIT,
}
_EVENT = {kind: poker_pb2.EventKind.Value(f"EVENT_KIND_{kind.name}") for kind in EventKind}
_ACTION_FROM_PB = {
    poker_pb2.ACTION_KIND_FOLD: ActionKind.FOLD,
    poker_pb2.ACTION_KIND_CHECK: ActionKind.CHECK,
    poker_pb2.ACTION_KIND_CALL: ActionKind.CALL,
    poker_pb2.ACTION_KIND_RAISE: ActionKind.RAISE,
    poker_pb2.ACTION_KIND_ALL_IN: ActionKind.ALL_IN,
}
_WAGERS = (EventKind.BET, EventKind.RAISE, EventKind.CALL)
_ADDS_TO_BET = (EventKind.POST_SMALL_BLIND, EventKind.POST_BIG_BLIND, EventKind.POST_ENTRY_BLIND, EventKind.CALL)
_SETS_BET = (EventKind.BET, EventKind.RAISE)


def street(value: int) -> poker_pb2.Street.ValueType:
    """An engine street (0 pre-flop .. 4 showdown) as the protocol's enum (which starts with UNSPECIFIED)."""
    return poker_pb2.Street.ValueType(value + 1)


_STREETS = tuple(street(value) for value in range(5))  # street(), for the engine's streets (Street)


class MalformedAction(ValueError):
    """An Action message the engine cannot even read (no kind); refused like an illegal action (R6.1)."""

    rule = "R6.1"


def wire_hand_number(hand_number: int) -> int:
    """A hand's number as the protocol states it: 1 for the first hand of the match (the referee, its records and
    the deal schedule count from 0)."""
    return hand_number + 1


def cards(values: Iterable[int]) -> list[str]:
    """Cards in their text form (R1.2)."""
    return [format_card(c) for c in values]


def table_config(config: TableConfig, num_seats: int, starting_stack: int) -> poker_pb2.TableConfig:
    """A table's rules as the protocol states them."""
    return poker_pb2.TableConfig(
        num_seats=num_seats,
        structure=_STRUCTURE[config.structure],
        small_blind=config.small_blind,
        big_blind=config.big_blind,
        ante=config.ante if config.antes_posted else 0,
        big_blind_ante=config.ante_mode is AnteMode.BIG_BLIND,
        starting_stack=starting_stack,
        small_bet=config.small_bet,
        big_bet=config.big_bet,
        raise_cap=config.raise_cap if config.structure is Structure.FIXED_LIMIT else 0,
        reveal_all_at_showdown=config.reveal_all,
        uncapped_heads_up=config.uncapped_heads_up,
    )


def wire_amount(event: Event, bets: dict[int, int]) -> int:
    """The amount ``event`` states on the wire: a wager that puts a seat all-in states the seat's raise-to total,
    every other event its own amount. ``bets`` holds each seat's bet on the street so far, as the events before it
    left it (updated here); events that are no wager (deals, shows, wins) do not use it."""
    kind = event.kind
    if kind is EventKind.DEAL_BOARD:
        bets.clear()
    elif kind in _ADDS_TO_BET:
        bets[event.seat] = bets.get(event.seat, 0) + event.amount
    elif kind in _SETS_BET:
        bets[event.seat] = event.amount
    if event.all_in and kind in _WAGERS:
        return bets[event.seat]
    return event.amount


def event_message(event: Event, amount: int, by_timeout: bool) -> poker_pb2.PublicEvent:
    """One event as a protocol message, stating ``amount`` (``wire_amount``)."""
    kind = event.kind
    pb_kind = poker_pb2.EVENT_KIND_ALL_IN if event.all_in and kind in _WAGERS else _EVENT[kind]
    # Only the fields that usually have a value are passed: each keyword costs about as much as a field set later
    message = poker_pb2.PublicEvent(kind=pb_kind, seat=event.seat, street=_STREETS[event.street], amount=amount)
    if event.cards:
        message.cards.extend(cards(event.cards))
    if by_timeout:
        message.by_timeout = True
    if event.pot > 0:
        message.pot_index = event.pot
    return message


def public_event(event: Event, by_timeout: bool, bets: dict[int, int]) -> poker_pb2.PublicEvent:
    """One event of a sequence as a protocol message; ``bets`` as ``wire_amount`` takes it (updated here)."""
    return event_message(event, wire_amount(event, bets), by_timeout)


K = TypeVar("K", bound=Hashable)

_KEPT = 1 << 15  # entries of each memo of encodings below: full, the seats of 6-max tables take ~40 MB, the rest less


def _keep(memo: dict[K, bytes], key: K, data: bytes) -> bytes:
    """Remember ``data`` under ``key`` in one of the bounded memos of encodings (emptied when full) and return it."""
    if len(memo) >= _KEPT:
        memo.clear()
    memo[key] = data
    return data


_EVENT_FIELDS: dict[tuple[int, Event, int, bool], bytes] = {}


def event_field(tag: int, event: Event, amount: int, by_timeout: bool) -> bytes:
    """``event_message(event, amount, by_timeout)`` serialized as the length-delimited field ``tag`` (a history),
    remembered: the same event is sent to every seat of its hand and again in the hand's end, and most events
    (a call of the big blind, a check on the flop, the flop itself) recur from hand to hand and table to table."""
    key = (tag, event, amount, by_timeout)
    data = _EVENT_FIELDS.get(key)
    if data is None:
        data = _keep(_EVENT_FIELDS, key,
                     field_bytes(tag, event_message(event, amount, by_timeout).SerializeToString()))
    return data


def public_events(events: Sequence[Event], timeouts: frozenset[int] = frozenset()) -> list[poker_pb2.PublicEvent]:
    """Events (already filtered for one seat) as protocol messages; ``timeouts`` are indexes of actions the
    referee made for a seat. A wager that puts a seat all-in is ALL_IN with the seat's raise-to total.
    """
    bets: dict[int, int] = {}
    return [public_event(event, index in timeouts, bets) for index, event in enumerate(events)]


def varint(value: int) -> bytes:
    """A non-negative integer as protobuf's base-128 varint."""
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def field_bytes(tag: int, data: bytes) -> bytes:
    """A length-delimited field (``tag``: its number shifted left by 3, or-ed with wire type 2) holding ``data``."""
    size = len(data)
    if size < 0x80:  # most fields: the length is one byte
        return bytes((tag, size)) + data
    return bytes((tag,)) + varint(size) + data


def text_field(tag: int, text: str) -> bytes:
    """A string field (``tag`` as in ``field_bytes``) as protobuf encodes it: nothing when the string is empty."""
    return field_bytes(tag, text.encode()) if text else b""


def int_field(tag: int, value: int) -> bytes:
    """A non-negative integer or enum field (``tag``: its number shifted left by 3, wire type 0) as protobuf encodes
    it: nothing when the value is 0."""
    return bytes((tag,)) + varint(value) if value else b""


_CARD_FIELDS: dict[int, dict[int, bytes]] = {}  # tag: each card's field, by card


def cards_field(tag: int, values: Sequence[int]) -> bytes:
    """Cards as a repeated string field ``tag`` (their text, R1.2), from each card's field made once per tag."""
    fields = _CARD_FIELDS.get(tag)
    if fields is None:
        fields = _CARD_FIELDS[tag] = {c: text_field(tag, format_card(c)) for c in range(52)}
    try:
        return b"".join([fields[c] for c in values])
    except KeyError:
        for c in values:
            format_card(c)  # names the value that is no card (R1.1)
        raise


_SEAT_FIELDS: dict[tuple[int, tuple[str, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...],
                         tuple[bool, ...]], bytes] = {}


def seats_field(tag: int, names: tuple[str, ...], stacks: tuple[int, ...], bets: tuple[int, ...],
                committed: tuple[int, ...], folded: tuple[bool, ...]) -> bytes:
    """Every seat's SeatState (folded, else all-in with an empty stack, else active) as the repeated field ``tag``,
    remembered: in the reset game most decisions see stacks and bets seen before."""
    key = (tag, names, stacks, bets, committed, folded)
    data = _SEAT_FIELDS.get(key)
    if data is None:
        states = []
        for seat, name in enumerate(names):
            status = (poker_pb2.SEAT_STATUS_FOLDED if folded[seat] else
                      poker_pb2.SEAT_STATUS_ALL_IN if stacks[seat] == 0 else poker_pb2.SEAT_STATUS_ACTIVE)
            state = poker_pb2.SeatState(seat=seat, name=name, stack=stacks[seat], bet=bets[seat],
                                        committed=committed[seat], status=status)
            states.append(field_bytes(tag, state.SerializeToString()))
        data = _keep(_SEAT_FIELDS, key, b"".join(states))
    return data


_PAYOFF_FIELDS: dict[tuple[int, tuple[int, ...], tuple[int, ...]], bytes] = {}


def payoffs_field(tag: int, payoffs: tuple[int, ...], final_stacks: tuple[int, ...]) -> bytes:
    """Every seat's SeatPayoff as the repeated field ``tag``, remembered: in the reset game a few results recur."""
    key = (tag, payoffs, final_stacks)
    data = _PAYOFF_FIELDS.get(key)
    if data is None:
        data = _keep(_PAYOFF_FIELDS, key, b"".join([
            field_bytes(tag, poker_pb2.SeatPayoff(seat=seat, net=net, final_stack=final_stacks[seat])
                        .SerializeToString())
            for seat, net in enumerate(payoffs)]))
    return data


_HISTORY_TAG = (13 << 3) | 2  # ActionRequest.history
_CONFIG_TAG = (14 << 3) | 2  # ActionRequest.config
_REQUEST_TAG = (3 << 3) | 2  # RefereeMessage.action_request
_BATCH_TAG = (8 << 3) | 2  # RefereeMessage.batch
_BATCH_MESSAGES_TAG = (1 << 3) | 2  # RefereeBatch.messages
# ActionRequest's other fields, in field-number order (an encoding in that order is the one protobuf writes)
_TABLE_ID, _HAND_ID, _REQUEST_ID, _SEAT = (1 << 3) | 2, (2 << 3) | 2, 3 << 3, 4 << 3
_HOLE_CARDS, _BOARD, _BUTTON, _STREET, _SEATS = (5 << 3) | 2, (6 << 3) | 2, 7 << 3, 8 << 3, (9 << 3) | 2

_POT_FIELDS: dict[tuple[Pot, ...], bytes] = {}
_LEGAL_FIELDS: dict[tuple[bool, bool, int, int, int, int, int], bytes] = {}


def pots_field(pots: tuple[Pot, ...]) -> bytes:
    """ActionRequest's ``pots`` (field 10), remembered by the pots."""
    data = _POT_FIELDS.get(pots)
    if data is None:
        request = bot_pb2.ActionRequest()
        add_pot = request.pots.add
        for pot in pots:
            add_pot(amount=pot.amount, eligible_seats=pot.eligible)
        data = _keep(_POT_FIELDS, pots, request.SerializeToString())
    return data


def legal_clock_fields(legal: LegalActions, action_ms_left: int, bank_ms_left: int) -> bytes:
    """ActionRequest's ``legal`` and ``clock`` (fields 11 and 12), remembered: both are always present, even with
    every value 0."""
    key = (legal.can_fold, legal.can_check, legal.call_amount, legal.min_raise_to, legal.max_raise_to,
           action_ms_left, bank_ms_left)
    data = _LEGAL_FIELDS.get(key)
    if data is None:
        request = bot_pb2.ActionRequest()
        pb_legal = request.legal
        pb_legal.SetInParent()
        pb_legal.can_fold = legal.can_fold
        pb_legal.can_check = legal.can_check
        pb_legal.can_call = legal.can_call
        pb_legal.call_amount = legal.call_amount
        pb_legal.can_raise = legal.can_raise
        pb_legal.min_raise_to = legal.min_raise_to
        pb_legal.max_raise_to = legal.max_raise_to
        clock = request.clock
        clock.SetInParent()
        clock.action_ms_left = action_ms_left
        clock.bank_ms_left = bank_ms_left
        data = _keep(_LEGAL_FIELDS, key, request.SerializeToString())
    return data


def batch_bytes(messages: Iterable[bytes]) -> bytes:
    """Serialized RefereeMessages packed as one serialized RefereeMessage holding a RefereeBatch (protobuf's
    encoding of a message is the concatenation of its fields, so nothing is parsed or copied field by field)."""
    inner = b"".join([field_bytes(_BATCH_MESSAGES_TAG, m) for m in messages])
    return field_bytes(_BATCH_TAG, inner)


class PublicEvents:
    """``public_events`` for one viewer, encoded as ActionRequest's ``history`` field and remembered: a hand's
    events only grow, so each call encodes just the events added since the last one (from ``event_field``'s shared
    encodings) and fixes ``by_timeout`` of earlier ones if ``timeouts`` changed. Events that do not extend the last
    ones (a new hand) start it afresh, so the result always equals the encoding of ``public_events``.
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
            wire.append(event_field(_HISTORY_TAG, source[index], amounts[index], index in timeouts))
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
                    wire[index] = event_field(_HISTORY_TAG, events[index], self._amounts[index], index in timeouts)
            self._timeouts = timeouts
        bets, amounts = self._bets, self._amounts
        for index in range(done, len(events)):
            amounts.append(wire_amount(events[index], bets))
        self._source = events


def action_request(decision: Decision, timeouts: frozenset[int] = frozenset()) -> bot_pb2.ActionRequest:
    """The self-contained request a bot answers (see proto ActionRequest), built from scratch."""
    return RequestBuilder().message(decision, timeouts).action_request


class RequestBuilder:
    """Builds one seat's requests, the one place an ActionRequest is made. Kept per seat, it is cheap: the hand's
    history is converted only as far as it grew since the seat's last request (see ``PublicEvents``), the table's
    config is kept encoded while it stays the same, and the rest is joined from encodings remembered across
    requests, seats and tables (``serialized``).
    """

    __slots__ = ("_config_key", "_config_wire", "_history")

    def __init__(self) -> None:
        self._history = PublicEvents()
        self._config_key: tuple[TableConfig, int, int] | None = None
        self._config_wire = b""

    def _config_field(self, config: TableConfig, num_seats: int, starting_stack: int) -> bytes:
        """``table_config(config, num_seats, starting_stack)`` as ActionRequest's ``config`` field, encoded again
        only when one of them changes."""
        key = (config, num_seats, starting_stack)
        if key != self._config_key:
            self._config_wire = field_bytes(_CONFIG_TAG, table_config(config, num_seats, starting_stack)
                                            .SerializeToString())
            self._config_key = key
        return self._config_wire

    def message(self, decision: Decision, timeouts: frozenset[int] = frozenset()) -> bot_pb2.RefereeMessage:
        """The RefereeMessage that asks for ``decision``."""
        return bot_pb2.RefereeMessage.FromString(self.serialized(decision, timeouts))

    def serialized(self, decision: Decision, timeouts: frozenset[int] = frozenset()) -> bytes:
        """The serialized RefereeMessage that asks for ``decision``, joined from its fields' encodings in field
        order (a message's encoding is the concatenation of its fields'): the history's events, the config, the
        seats, pots, legal actions and clock are kept encoded and reused; only ids and cards are encoded anew."""
        view = decision.view
        legal = view.legal
        assert legal is not None, "a request is only built for the seat to act"
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
        return field_bytes(_REQUEST_TAG, body)


def action_from_pb(message: poker_pb2.Action) -> Action | MixedAction:
    """An Action message as an engine action, or a mixed action when it lists a policy (the referee checks and
    draws it); raises ``MalformedAction`` when an action has no known kind."""
    if message.policy:
        return MixedAction(tuple((_action(c.kind, c.amount), float(c.probability)) for c in message.policy))
    return _action(message.kind, message.amount)


def _action(pb_kind: int, amount: int) -> Action:
    kind = _ACTION_FROM_PB.get(pb_kind)  # type: ignore[call-overload]
    if kind is None:
        raise MalformedAction(f"R6.1: action kind {pb_kind} is not one of FOLD, CHECK, CALL, RAISE, ALL_IN")
    return Action(kind, int(amount) if kind is ActionKind.RAISE else 0)


def shown_hands(shown: dict[int, tuple[int, ...]], board: Sequence[int]) -> list[poker_pb2.ShownHand]:
    """Hands revealed at showdown (R8.4) with the name of their category."""
    out = []
    for seat, hole in shown.items():
        name = hand_name([*hole, *board]) if len(board) >= 3 else ""
        out.append(poker_pb2.ShownHand(seat=seat, cards=cards(hole), category=name))
    return out


def printable(text: str, limit: int = 64) -> str:
    """Text a bot chose (its name, language, version) made safe for a log line: control and direction characters
    escaped (arena.text.for_terminal), so no ANSI sequence or fake log line gets through; cut to ``limit``."""
    return for_terminal(text, limit)
