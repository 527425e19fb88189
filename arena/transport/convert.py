"""Conversions between engine types and the protocol's messages: the one place where the two meet (layer 5). The
bytes the referee sends are joined in ``arena.transport.wire``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from arena.cards import format_card
from arena.cards.evaluator import hand_name
from arena.engine import Action, ActionKind, AnteMode, Event, EventKind, Structure, TableConfig
from arena.referee import HandRecord
from arena.referee.match import MatchResult
from arena.referee.records import Answer, Commented, Decision, MixedAction
from arena.text import COMMENT_MAX, comment, for_terminal
from arena_sdk.pb import bot_pb2, poker_pb2

PROTOCOL_VERSION = 1

_STRUCTURE = {
    Structure.NO_LIMIT: poker_pb2.STRUCTURE_NO_LIMIT,
    Structure.POT_LIMIT: poker_pb2.STRUCTURE_POT_LIMIT,
    Structure.FIXED_LIMIT: poker_pb2.STRUCTURE_FIXED_LIMIT,
}
_EVENT = {kind: poker_pb2.EventKind.Value(f"EVENT_KIND_{kind.name}") for kind in EventKind}
ACTION_FROM_PB = {
    poker_pb2.ACTION_KIND_FOLD: ActionKind.FOLD,
    poker_pb2.ACTION_KIND_CHECK: ActionKind.CHECK,
    poker_pb2.ACTION_KIND_CALL: ActionKind.CALL,
    poker_pb2.ACTION_KIND_RAISE: ActionKind.RAISE,
    poker_pb2.ACTION_KIND_ALL_IN: ActionKind.ALL_IN,
}
# every answer but a raise is one of four values: built once (a frozen dataclass's __init__ was 2.7% of the referee's
# main thread at 64 tables, one for every decision), shared like any frozen value
_PLAIN_ACTION: dict[int, Action] = {
    int(pb): Action(kind) for pb, kind in ACTION_FROM_PB.items() if kind is not ActionKind.RAISE}
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


def public_events(events: Sequence[Event], timeouts: frozenset[int] = frozenset()) -> list[poker_pb2.PublicEvent]:
    """Events (already filtered for one seat) as protocol messages; ``timeouts`` are indexes of actions the
    referee made for a seat. A wager that puts a seat all-in is ALL_IN with the seat's raise-to total.
    """
    bets: dict[int, int] = {}
    return [public_event(event, index in timeouts, bets) for index, event in enumerate(events)]


def action_request(decision: Decision, timeouts: frozenset[int] = frozenset()) -> bot_pb2.ActionRequest:
    """The self-contained request a bot answers (see proto ActionRequest), built from scratch by the referee's own
    encoder (``arena.transport.wire``)."""
    from arena.transport.wire import action_request  # the encoder builds on this module's conversions

    return action_request(decision, timeouts)


def shown_at_showdown(record: HandRecord) -> dict[int, tuple[int, ...]]:
    """The hole cards the table's policy revealed (R8.4): SHOW events only."""
    return {e.seat: e.cards for e in record.events if e.kind is EventKind.SHOW}


def match_end(result: MatchResult, participant: int) -> bot_pb2.MatchEnd:
    """The end of a match as one participant hears it."""
    reason = {
        "completed": bot_pb2.MATCH_END_REASON_COMPLETED,
        "aborted": bot_pb2.MATCH_END_REASON_ABORTED,
    }.get(result.reason, bot_pb2.MATCH_END_REASON_UNSPECIFIED)
    return bot_pb2.MatchEnd(
        match_id=result.match_id,
        reason=reason,
        message=f"{result.hands_played} of {result.hands_total} hands played",
        results=[
            bot_pb2.BotResult(
                seat=i, name=r.name, net_chips=r.net, hands_played=r.hands, violations=r.violations,
                forfeited=r.forfeited, is_you=(i == participant),
            )
            for i, r in enumerate(result.results)
        ],
    )


def action_from_pb(message: poker_pb2.Action) -> Answer:
    """An Action message as an engine action, or a mixed action when it lists a policy (the referee checks and
    draws it), either ``Commented`` when the bot said why (cleaned: arena.text.comment); raises
    ``MalformedAction`` when an action has no known kind."""
    answer: Action | MixedAction
    if message.policy:
        answer = MixedAction(tuple((_action(c.kind, c.amount), float(c.probability)) for c in message.policy))
    else:
        answer = _action(message.kind, message.amount)
    said = message.comment
    if not said:
        return answer
    if len(said) > COMMENT_MAX or type(answer) is not Action:  # never remembered: a long text is cut, and would
        cleaned = comment(said)  # hold memory as a key; a mixed action is rare
        return Commented(answer, cleaned) if cleaned else answer
    key = (answer.kind._value_, answer.amount, said)  # plain values: hashed in C, where an Action's hash is Python's
    commented = _COMMENTED.get(key)  # a bot's comments are mostly a few notes it repeats
    if commented is None:
        cleaned = comment(said)
        if not cleaned:
            return answer
        if len(_COMMENTED) >= _COMMENTED_KEPT:
            _COMMENTED.clear()
        commented = _COMMENTED[key] = Commented(answer, cleaned)
    return commented


_COMMENTED: dict[tuple[int, int, str], Commented] = {}  # frozen: one object per action and note met
_COMMENTED_KEPT = 1_024


def cleaned_comment(said: str) -> str:
    """A decision comment as the referee keeps it (arena.text.comment), a bot's few repeated notes cleaned once."""
    if len(said) > COMMENT_MAX:
        return comment(said)
    cleaned = _CLEANED.get(said)
    if cleaned is None:
        if len(_CLEANED) >= _COMMENTED_KEPT:
            _CLEANED.clear()
        cleaned = _CLEANED[said] = comment(said)
    return cleaned


_CLEANED: dict[str, str] = {}


def _action(pb_kind: int, amount: int) -> Action:
    plain = _PLAIN_ACTION.get(pb_kind)
    if plain is not None:
        return plain
    kind = ACTION_FROM_PB.get(pb_kind)  # type: ignore[call-overload]
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
