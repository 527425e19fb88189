"""Rows and records: a finished hand (``HandRecord``) as the rows it is stored in, and back.

``hand_rows`` gives the values written, column by column, exactly as SQLite returns them (REAL columns as floats,
booleans as integers), so that the digests the hash chain is made of (arena.records.evidence) are the same whether
taken from a hand as it is written or from its rows read back. ``hand_record`` turns rows back into a record and
checks their shape on the way: a row that does not decode (a card that is no card, an event out of sequence, a seat
that is not at the table) is ``RecordsDamaged`` naming the table and the hand, never a crash further on.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from arena.cards import format_cards, parse_cards
from arena.engine import Action, ActionKind, AnteMode, Event, EventKind, RuleError, Structure, TableConfig
from arena.records.errors import RecordsDamaged
from arena.referee import DecisionHow, DecisionRecord, HandRecord, MatchSpec
from arena.referee.game import GameRules

HAND_COLUMNS = ("hand_number", "deal", "rotation", "table_id", "button", "deck", "board", "started_at", "finished_at",
                "config")
SEAT_COLUMNS = ("seat", "participant", "hole", "starting_stack", "payoff", "final_stack")
ACTION_COLUMNS = ("seq", "street", "seat", "kind", "amount", "cards", "all_in", "pot", "how", "elapsed_ms",
                  "request_id", "rejected", "policy", "comment")
VIOLATION_COLUMNS = ("participant", "kind", "detail")
DECISION_KINDS = {EventKind.FOLD: ActionKind.FOLD, EventKind.CHECK: ActionKind.CHECK, EventKind.CALL: ActionKind.CALL,
                  EventKind.BET: ActionKind.RAISE, EventKind.RAISE: ActionKind.RAISE}
VIOLATIONS = (DecisionHow.TIMEOUT, DecisionHow.ILLEGAL)  # and ABSENT when the bot's clock ran (a lost connection)

Row = tuple[Any, ...]
_KIND_NAMES = {kind: kind.name for kind in EventKind}  # an enum's .name is a descriptor call: hands have many events
_HOW_VALUES: dict[str, str] = {how: how.value for how in DecisionHow}
UNDECODABLE = (KeyError, ValueError, TypeError, IndexError, AttributeError, OverflowError, RuleError)
"""What decoding a damaged value raises (a rule the engine refuses included: a table config no table can have)."""


@dataclass(frozen=True, slots=True)
class HandRows:
    """One hand as stored: its ``hands`` row, its ``hand_seats`` rows by seat, its ``actions`` rows by seq and its
    ``violations`` rows, each a tuple of the columns above (without the match id)."""

    hand: Row
    seats: tuple[Row, ...]
    actions: tuple[Row, ...]
    violations: tuple[Row, ...]

    @property
    def number(self) -> int:
        """The hand's number."""
        number = self.hand[0]
        if not isinstance(number, int):
            raise RecordsDamaged(f"a hand's number is {number!r}", table="hands")
        return number

    @property
    def final_stacks(self) -> tuple[int, ...]:
        """Each seat's stack after the hand (a resumed game starts from them)."""
        stacks: tuple[int, ...] = decode("the final stacks", "hand_seats", None,
                                         lambda: tuple(int(s[5]) for s in self.seats))
        return stacks


# ---------------------------------------------------------------------------------------------- settings as JSON


def config_to_json(config: TableConfig) -> str:
    """A table config as JSON (enums by value)."""
    data = asdict(config)
    data["structure"] = config.structure.value
    data["ante_mode"] = config.ante_mode.value
    return json.dumps(data, sort_keys=True)


def config_from_json(text: str) -> TableConfig:
    """The inverse of ``config_to_json``."""
    data = json.loads(text)
    data["structure"] = Structure(data["structure"])
    data["ante_mode"] = AnteMode(data["ante_mode"])
    return TableConfig(**data)


def game_json(spec: MatchSpec) -> str:
    """A match's game as stored in ``matches.game``: its rules and its ``hands`` (a cash game's length); '' for the
    reset game."""
    if not spec.game.is_game:
        return ""
    data = json.loads(spec.game.to_json())
    data["match_hands"] = spec.hands
    return json.dumps(data, sort_keys=True)


def game_from(text: str) -> tuple[GameRules, int]:
    """The inverse of ``game_json``: the rules and the match's ``hands`` (0 for the reset game)."""
    if not text:
        return GameRules(), 0
    data = json.loads(text)
    hands = int(data.pop("match_hands"))
    return GameRules.from_json(json.dumps(data)), hands


def policy_json(policy: Sequence[tuple[Action, float]]) -> str:
    """A mixed action as stored: ``[["RAISE", 300, 0.25], ...]``."""
    return json.dumps([[a.kind.name, a.amount, p] for a, p in policy])


def policy_from_json(text: str | None) -> tuple[tuple[Action, float], ...]:
    """A stored mixed action (none: empty)."""
    if not text:
        return ()
    return tuple((Action(ActionKind[kind], int(amount)), float(p)) for kind, amount, p in json.loads(text))


# ---------------------------------------------------------------------------------------------- a hand as rows


def hand_rows(record: HandRecord, own_config: str | None) -> HandRows:
    """The rows a hand is written as (``own_config``: its table as JSON when it differs from the match's)."""
    by_event = {d.event_index: d for d in record.decisions}
    hand = (record.hand_number, record.deal, record.rotation, record.table_id, record.button,
            format_cards(record.deck), format_cards(record.board), float(record.started_at),
            float(record.finished_at), own_config)
    seats = tuple((seat, record.seating[seat], format_cards(record.hole[seat]), record.starting_stacks[seat],
                   record.payoffs[seat], record.final_stacks[seat]) for seat in range(len(record.seating)))
    actions = []
    for seq, event in enumerate(record.events):
        d = by_event.get(seq)
        actions.append((seq, event.street, event.seat, _KIND_NAMES[event.kind], event.amount,
                        format_cards(event.cards) if event.cards else "", int(event.all_in), event.pot,
                        _HOW_VALUES[d.how] if d else None,
                        float(d.elapsed_ms) if d else None, d.request_id if d else None,
                        json.dumps(list(d.rejected)) if d and d.rejected else None,
                        policy_json(d.policy) if d and d.policy else None, (d.comment or None) if d else None))
    violations = tuple((d.participant, _HOW_VALUES[d.how], "; ".join(d.rejected)) for d in record.decisions
                       if d.how in VIOLATIONS or (d.how == DecisionHow.ABSENT and d.elapsed_ms > 0))
    return HandRows(hand, seats, tuple(actions), violations)


def hand_record(match_id: str, rows: HandRows, default: TableConfig, configs: dict[str, TableConfig],
                names: Sequence[str], cards: Callable[[str], tuple[int, ...]]) -> HandRecord:
    """One stored hand as a HandRecord, from its rows (``configs``: the hands' own tables parsed so far, e.g. a
    freezeout's blind levels; ``cards``: how card text is parsed); ``RecordsDamaged`` when a row does not decode."""
    number = rows.number
    damaged = _Damage(match_id, number)
    with damaged("hand_seats"):
        seats = rows.seats
        if [s[0] for s in seats] != list(range(len(seats))) or len(seats) < 2:
            raise ValueError(f"the seats recorded are {[s[0] for s in seats]}, not 0 to n-1 of a table")
        seating = tuple(int(s[1]) for s in seats)
        if sorted(seating) != sorted(set(seating)) or not all(0 <= p < len(names) for p in seating):
            raise ValueError(f"the participants seated, {seating}, are not {len(names)} different participants")
        hole = tuple(cards(s[2]) for s in seats)
        starting, payoffs, final = (tuple(int(s[i]) for s in seats) for i in (3, 4, 5))
    with damaged("actions"):
        events, decisions = _events(rows.actions, seating)
    with damaged("hands"):
        _, deal, rotation, table_id, button, deck, board, started_at, finished_at, own = rows.hand
        if own and own not in configs:
            configs[own] = config_from_json(own)
        config = configs[own] if own else default
        if not 0 <= int(button) < len(seats):
            raise ValueError(f"the button is at seat {button}, not at the table")
        record = HandRecord(
            match_id=match_id, table_id=str(table_id), hand_id=f"{match_id}-{number}", hand_number=number,
            deal=int(deal), rotation=int(rotation), seating=seating, button=int(button), config=config,
            starting_stacks=starting, deck=cards(deck), hole=hole, board=cards(board), events=events, payoffs=payoffs,
            final_stacks=final, decisions=decisions, names=tuple(names[p] for p in seating),
            started_at=stamp(started_at), finished_at=stamp(finished_at),
        )
    return record


def _events(actions: Sequence[Row], seating: Sequence[int]) -> tuple[tuple[Event, ...], list[DecisionRecord]]:
    """A hand's events and decisions from its ``actions`` rows (in seq order, each seq once)."""
    if [a[0] for a in actions] != list(range(len(actions))):
        missing = next((i for i, a in enumerate(actions) if a[0] != i), len(actions))
        raise ValueError(f"event {missing} of the hand is missing (the events are numbered "
                         f"{[a[0] for a in actions][:12]}...)")
    events = []
    decisions = []
    for seq, street, seat, kind, amount, text, all_in, pot, how, elapsed, request_id, rejected, policy, said in actions:
        event = Event(EventKind[kind], int(seat), int(street), int(amount), _parse(text), bool(all_in), int(pot))
        if not -1 <= event.seat < len(seating):
            raise ValueError(f"event {seq} is by seat {seat}, not at the table")
        events.append(event)
        if how is None:
            continue
        action_kind = DECISION_KINDS.get(event.kind)
        if action_kind is None or event.seat < 0:
            raise ValueError(f"event {seq} ({kind}) is recorded as a decision ({how}) but is no action of a seat")
        refused = json.loads(rejected) if rejected else []
        if not isinstance(refused, list):
            raise ValueError(f"the rejections of event {seq} are not a list")
        decisions.append(DecisionRecord(
            seat=event.seat, participant=seating[event.seat], request_id=int(request_id or 0),
            action=Action(action_kind, event.amount if action_kind is ActionKind.RAISE else 0),
            elapsed_ms=float(elapsed or 0.0), how=DecisionHow(how), event_index=seq,
            rejected=tuple(str(r) for r in refused), policy=policy_from_json(policy), comment=str(said or "")))
    return tuple(events), decisions


_PARSED: dict[str, tuple[int, ...]] = {}


def _parse(text: str) -> tuple[int, ...]:
    found = _PARSED.get(text)
    if found is None:
        found = tuple(parse_cards(text))
        if len(_PARSED) < 100_000:
            _PARSED[text] = found
    return found


def stamp(value: Any) -> float:
    """A time as recorded (seconds since 1970): a value no clock gives (beyond the year 5000) does not decode."""
    seconds = float(value)
    if not -1e11 < seconds < 1e11:
        raise ValueError(f"{value!r} is no time")
    return seconds


def card_parser() -> Callable[[str], tuple[int, ...]]:
    """How card text is parsed when many hands are read (the same cards come up again and again)."""
    return _parse


class _Damage:
    """``with damaged(table):`` turns a row that does not decode into ``RecordsDamaged`` naming table and hand."""

    def __init__(self, match_id: str, hand: int) -> None:
        self.match_id = match_id
        self.hand = hand
        self.table = ""

    def __call__(self, table: str) -> _Damage:
        self.table = table
        return self

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, value: Any, traceback: Any) -> None:
        if isinstance(value, UNDECODABLE):
            raise RecordsDamaged(f"a row does not decode ({_words(value)})", table=self.table,
                                 match_id=self.match_id, hand=self.hand) from None


def _words(exc: BaseException) -> str:
    return str(exc) if not isinstance(exc, KeyError) else f"unknown value {exc.args[0]!r}"


def decode(what: str, table: str, match_id: str | None, convert: Callable[[], Any]) -> Any:
    """``convert()``, a row's values decoded; a value that does not decode is ``RecordsDamaged`` naming ``what``."""
    try:
        return convert()
    except UNDECODABLE as exc:
        raise RecordsDamaged(f"{what} does not decode ({_words(exc)})", table=table, match_id=match_id) from None

