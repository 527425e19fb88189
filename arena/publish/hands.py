"""The hand viewer's data: a recorded hand turned, at publish time, into the states a person steps through (who
acted, the pot, every stack and bet, the board, the cards shown), and its PHH text.

Every state is computed here in Python from the referee's record (its events, in order), and the last one is
checked against the record's final stacks; the page embeds them as JSON and its script only displays them, so
what the browser shows can be checked against the record and the engine (tests/publish/test_browser.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from arena.cards import format_cards
from arena.engine import EventKind
from arena.engine.pots import build_pots
from arena.publish import formatting
from arena.records.errors import RecordsDamaged
from arena.records.phh import dumps, format_action
from arena.records.phh_sink import decision_comments, rebuild_hand
from arena.records.replay import MUCKED_NOTE, hand_to_phh
from arena.referee import HandRecord

STREETS = ("pre-flop", "flop", "turn", "river", "showdown")
_POSTS = {
    EventKind.POST_ANTE: "posts an ante of",
    EventKind.POST_SMALL_BLIND: "posts the small blind",
    EventKind.POST_BIG_BLIND: "posts the big blind",
    EventKind.POST_ENTRY_BLIND: "posts an entry blind of",
}
_LIVE_POSTS = {EventKind.POST_SMALL_BLIND, EventKind.POST_BIG_BLIND, EventKind.POST_ENTRY_BLIND}
_BOARD_NAMES = {3: "Flop", 4: "Turn", 5: "River"}


class HandStateError(RecordsDamaged):
    """A record whose events do not add up to its own final stacks (R10.5): the hand cannot be shown truthfully
    (records damaged: every command ends on it with status 5)."""


@dataclass(frozen=True, slots=True)
class Step:
    """The hand after one event (or, for the hole cards, after all of them): what happened and how things stand."""

    text: str
    street: str
    actor: int  # the seat that acted, -1 for the dealer
    pot: int  # chips in the middle: every bet so far, less what was returned or paid out
    stacks: tuple[int, ...]
    bets: tuple[int, ...]  # each seat's chips put in on this street
    board: str  # board cards so far (``AsKd7h``)
    folded: tuple[bool, ...]
    shown: tuple[int, ...]  # seats whose cards have been shown so far
    event: int  # index of the last event this step includes
    brief: bool = False  # a player's action, show or win: what the short summary of a hand lists
    pots: tuple[int, ...] = ()  # main pot then side pots (R10.1), when there is more than one and none is paid yet

    def to_json(self) -> dict[str, Any]:
        """The compact form the page embeds."""
        data = {"t": self.text, "s": self.street, "a": self.actor, "pot": self.pot, "stacks": list(self.stacks),
                "bets": list(self.bets), "board": self.board, "folded": [int(f) for f in self.folded],
                "shown": list(self.shown), "e": self.event}
        if self.pots:
            data["pots"] = list(self.pots)
        return data


def _shown(cards: tuple[int, ...]) -> str:
    """Cards as the step texts read them (``A♠ K♦``)."""
    return " ".join(str(c) for c in formatting.cards(format_cards(cards)))


def positions(button: int, n: int) -> list[str]:
    """Each seat's position label: BTN, SB, BB (heads-up the button is the small blind, R2.3)."""
    labels = [""] * n
    if n == 2:
        labels[button], labels[(button + 1) % n] = "BTN/SB", "BB"
    else:
        labels[button] = "BTN"
        labels[(button + 1) % n], labels[(button + 2) % n] = "SB", "BB"
    return labels


def _amount(n: int) -> str:
    return f"{n:,}"


def hand_steps(record: HandRecord, names: list[str] | None = None) -> list[Step]:
    """Every state of the hand, from the deal to the payoffs; raises ``HandStateError`` if the record's events
    do not end at its final stacks."""
    n = len(record.seating)
    who = names or list(record.names) or [f"seat {s + 1}" for s in range(n)]
    stacks = list(record.starting_stacks)
    bets = [0] * n
    folded = [False] * n
    shown: list[int] = []
    board: list[int] = []
    pot = 0
    street = 0
    steps: list[Step] = []
    committed = [0] * n
    dead = [0] * n
    paying = False

    board_text = ""

    def add(text: str, actor: int, index: int, brief: bool = False) -> None:
        pots: tuple[int, ...] = ()
        if not paying and any(committed):
            split = build_pots([c - d for c, d in zip(committed, dead, strict=True)], folded, sum(dead))
            pots = tuple(p.amount for p in split) if len(split) > 1 else ()
        steps.append(Step(text, STREETS[min(street, 4)], actor, pot, tuple(stacks), tuple(bets),
                          board_text, tuple(folded), tuple(shown), index, brief, pots))

    add("The hand begins", -1, -1)
    events = record.events
    for index, event in enumerate(events):
        kind, seat, amount = event.kind, event.seat, event.amount
        name = who[seat] if 0 <= seat < n else "dealer"
        all_in = " (all-in)" if event.all_in else ""
        if kind in _POSTS:
            stacks[seat] -= amount
            pot += amount
            committed[seat] += amount
            if kind in _LIVE_POSTS:
                bets[seat] += amount
            else:
                dead[seat] += amount
            add(f"{name} {_POSTS[kind]} {_amount(amount)}{all_in}", seat, index)
        elif kind is EventKind.DEAL_HOLE:
            following = events[index + 1] if index + 1 < len(events) else None
            if following is None or following.kind is not EventKind.DEAL_HOLE:
                add("Hole cards are dealt", -1, index)
        elif kind is EventKind.DEAL_BOARD:
            street = max(street, event.street)
            board.extend(event.cards)
            board_text = format_cards(board)
            bets = [0] * n
            title = _BOARD_NAMES.get(len(board), "Board")
            add(f"{title}: {_shown(event.cards)}", -1, index)
        elif kind is EventKind.FOLD:
            folded[seat] = True
            add(f"{name} folds", seat, index, True)
        elif kind is EventKind.CHECK:
            add(f"{name} checks", seat, index, True)
        elif kind is EventKind.CALL:
            stacks[seat] -= amount
            bets[seat] += amount
            pot += amount
            committed[seat] += amount
            add(f"{name} calls {_amount(amount)}{all_in}", seat, index, True)
        elif kind in (EventKind.BET, EventKind.RAISE):
            put = amount - bets[seat]
            stacks[seat] -= put
            bets[seat] = amount
            pot += put
            committed[seat] += put
            verb = "bets" if kind is EventKind.BET else "raises to"
            add(f"{name} {verb} {_amount(amount)}{all_in}", seat, index, True)
        elif kind is EventKind.UNCALLED_RETURN:
            stacks[seat] += amount
            bets[seat] = max(0, bets[seat] - amount)
            pot -= amount
            committed[seat] -= amount
            add(f"{_amount(amount)} uncalled returned to {name}", seat, index, True)
        elif kind in (EventKind.SHOW, EventKind.MUCK):
            street = 4
            bets = [0] * n
            if kind is EventKind.SHOW:
                shown.append(seat)
                add(f"{name} shows {_shown(event.cards)}", seat, index, True)
            else:
                add(f"{name} mucks", seat, index, True)
        elif kind is EventKind.WIN_POT:
            paying = True
            bets = [0] * n
            stacks[seat] += amount
            pot -= amount
            which = "the main pot" if event.pot <= 0 else f"side pot {event.pot}"
            add(f"{name} wins {_amount(amount)} from {which}", seat, index, True)
    if tuple(stacks) != tuple(record.final_stacks) or pot != 0:
        raise HandStateError(f"its events end at stacks {stacks} and pot {pot}, the record says "
                             f"{list(record.final_stacks)} (R10.5)", table="actions", match_id=record.match_id,
                             hand=record.hand_number)
    return steps


@dataclass(slots=True)
class SeatView:
    """One seat of a hand as the viewer shows it."""

    seat: int
    participant: int
    name: str
    position: str
    start: int
    hole: str | None  # None: not shown (a running match reveals only what the table showed)
    payoff: int
    final: int


@dataclass(slots=True)
class StreetLog:
    """The actions of one street, for the page's text log (the viewer highlights the current one)."""

    name: str
    board: str
    lines: list[tuple[int, str]] = field(default_factory=list)  # (step index, text)
    brief: list[str] = field(default_factory=list)  # the players' actions only, for the side-by-side summary


@dataclass(slots=True)
class HandView:
    """Everything a hand page shows."""

    number: int
    deal: int
    rotation: int
    table_id: str
    seats: list[SeatView]
    board: str
    steps: list[Step]
    streets: list[StreetLog]
    revealed: bool  # every hole card is shown (the referee's record of a finished match)
    phh: str
    summary: str = ""  # its short form beside the other hands of its deal (HTML, rendered once per hand)
    comments: dict[int, str] = field(default_factory=dict)  # step index -> the bot's decision comment on that action

    @property
    def payoffs_by_participant(self) -> dict[int, int]:
        """Chips won or lost by each participant."""
        return {s.participant: s.payoff for s in self.seats}

    def data(self) -> dict[str, Any]:
        """The JSON the page embeds for its viewer."""
        return {
            "hand": self.number,
            "seats": [{"name": s.name, "pos": s.position, "start": s.start,
                       "hole": s.hole} for s in self.seats],
            "record": self.revealed,
            "steps": [step.to_json() for step in self.steps],
        }


def _phh_text(record: HandRecord, names: list[str], hidden: set[int], comments: bool) -> str:
    """The hand's PHH; the hole cards of ``hidden`` seats written as unknown (``????``); the bots' decision
    comments on their actions with ``comments``."""
    hand = rebuild_hand(record)
    extra = {"hand": record.hand_number, "event": f"arena match {record.match_id}", "table": record.table_id}
    phh = hand_to_phh(hand, players=names, extra=extra, comments=decision_comments(record) if comments else None)
    if hidden:
        n = len(record.seating)
        order = [(record.button + 1 + k) % n for k in range(n)]
        lines = []
        for line in phh.actions:
            for k, seat in enumerate(order):
                if seat not in hidden:
                    continue
                if line.startswith(f"d dh p{k + 1} "):
                    line = format_action(k, "dh", None)
                elif line.startswith(f"p{k + 1} sm ") and MUCKED_NOTE in line:
                    line = f"p{k + 1} sm ????"
            lines.append(line)
        phh.actions = lines
    return dumps(phh)


def hand_view(record: HandRecord, names: list[str], reveal_all: bool) -> HandView:
    """A hand's page data; ``names``: each participant's name. Without ``reveal_all`` (a match still running) only
    the cards shown at the table are visible, in the page and in its PHH, and no decision comment: a bot that read
    the page of a running match learns nothing another bot said (comments are never a channel between bots)."""
    n = len(record.seating)
    seat_names = [names[p] for p in record.seating]
    steps = hand_steps(record, seat_names)
    shown = set(steps[-1].shown)
    labels = positions(record.button, n)
    seats = [
        SeatView(s, record.seating[s], seat_names[s], labels[s], record.starting_stacks[s],
                 format_cards(record.hole[s]) if reveal_all or s in shown else None,
                 record.payoffs[s], record.final_stacks[s])
        for s in range(n)
    ]
    streets: list[StreetLog] = []
    for index, step in enumerate(steps):
        if not streets or streets[-1].name != step.street:
            streets.append(StreetLog(step.street, step.board))
        streets[-1].lines.append((index, step.text))
        if step.brief:
            streets[-1].brief.append(step.text)
    hidden = set() if reveal_all else set(range(n)) - shown
    said = decision_comments(record) if reveal_all else {}
    comments = {index: said[step.event] for index, step in enumerate(steps) if step.event in said}
    return HandView(record.hand_number, record.deal, record.rotation, record.table_id, seats,
                    format_cards(record.board), steps, streets, reveal_all,
                    _phh_text(record, seat_names, hidden, reveal_all), comments=comments)
