"""A match's hands in the compact form the one hand viewer reads (``hand.html`` and ``static/hand.js``): a script
per block of ``BLOCK_HANDS`` hand numbers that calls ``arenaHands({...})``, so a plain ``<script>`` loads it from
``file://`` as well as from any host, and a league's host serves the same from its database.

A hand is one line of text: its number, deal and rotation, button, seating, starting stacks (when not the match's),
hole cards, every event as a short token (``r1300!``: seat 1 raises to 300, all-in), and, once the match is over,
each seat's all-in EV and AIVAT figures and the bots' decision comments (``3:pot odds``: on the fourth event, its
``%`` and ``|`` percent-encoded): about a hundred bytes where a page of its own was thirteen thousand. The
viewer replays the events to show the pot, stacks and bets at every step; here they are checked to end at the
record's final stacks (R10.5), so a damaged record is never published as a hand that does not add up.

While a match runs, its data holds only the hands of deals played in every seat, and of those only the hole cards
shown at the table (as its pages do); the estimates wait for its end, since they are computed from every card, and
so do the comments (what a bot said of its cards must not reach the other bots while they play it).

A data file is a script: its JSON has ``<``, ``>`` and ``&`` written as ``\\u003c``, ``\\u003e``, ``\\u0026``, so no
text in it (a bot's name, a comment) can end a ``<script>`` element or start markup wherever it is put.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.cards import format_cards
from arena.engine import EventKind
from arena.publish.hands import HandStateError
from arena.ratings.estimators import Estimator, adjusted_payoffs
from arena.ratings.sessions import bot_key
from arena.records import queries
from arena.records.db import Database
from arena.records.phh_sink import decision_comments
from arena.records.queries import HandResult, MatchInfo
from arena.referee import HandRecord
from arena.text import comment, visible_controls

BLOCK_HANDS = 1_000  # hand numbers a data file holds: about 100 KB, what the viewer loads to show one hand
FORMAT = 2  # the packed form's version (2: decision comments after the estimates): hand.js refuses any other
CALLBACK = "arenaHands"  # the function a data file calls (defined by hand.js)
HIDDEN = "????"  # a seat's hole cards not shown at the table while the match runs
DATA_PATH = "matches/{slug}/data-{block}.js"  # a block's file; the viewer fills it in the same way (data-source)

_TOKENS = {
    EventKind.POST_ANTE: "A", EventKind.POST_SMALL_BLIND: "S", EventKind.POST_BIG_BLIND: "B",
    EventKind.POST_ENTRY_BLIND: "E", EventKind.DEAL_BOARD: "D", EventKind.FOLD: "f", EventKind.CHECK: "x",
    EventKind.CALL: "c", EventKind.BET: "b", EventKind.RAISE: "r", EventKind.UNCALLED_RETURN: "u",
    EventKind.SHOW: "w", EventKind.MUCK: "m", EventKind.WIN_POT: "p",
}
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"  # a seat as one character (R2.1: at most 22 seats)
_MOVES = {EventKind.POST_ANTE, EventKind.POST_SMALL_BLIND, EventKind.POST_BIG_BLIND, EventKind.POST_ENTRY_BLIND,
          EventKind.CALL}
_DECISIONS = {EventKind.FOLD, EventKind.CHECK, EventKind.CALL, EventKind.BET, EventKind.RAISE}  # what a bot plays
_COMMENT_UNSAFE = re.compile(r"[%|]")  # what would end a comment's field or be read as an escape
_SCRIPT_UNSAFE = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"}  # JSON escapes: nothing in a string is markup


def block_of(number: int, size: int = BLOCK_HANDS) -> int:
    """The data file (block) that holds hand ``number``, ``size`` hand numbers a block."""
    return number // size


def shown_results(results: Sequence[HandResult], finished: bool, per_deal: int) -> list[HandResult]:
    """The hands a match's pages and data show: all of them once it is over; while it runs, those of deals played
    in every seat (the same cards are still to come in other seats)."""
    if finished:
        return list(results)
    rotations: dict[int, set[int]] = {}
    for hand in results:
        rotations.setdefault(hand.deal, set()).add(hand.rotation)
    return [hand for hand in results if len(rotations[hand.deal]) >= per_deal]


def _number(x: float) -> str:
    """An estimate as the data carries it: chips to one decimal, no trailing ``.0``."""
    text = f"{x:.1f}"
    return text[:-2] if text.endswith(".0") else text


def pack_events(record: HandRecord) -> str:
    """The hand's events as space-separated tokens: a letter for the kind, a character for the seat (the street
    for a board card), the amount, ``!`` for all-in, ``.k`` for side pot k, ``=cards`` for the cards dealt or
    shown; the hole cards dealt are one ``H`` (they travel apart, hidden or not). Raises ``HandStateError`` if the
    events do not end at the record's final stacks (R10.5)."""
    stacks = list(record.starting_stacks)
    bets = [0] * len(stacks)
    out: list[str] = []
    events = record.events
    for index, event in enumerate(events):
        kind = event.kind
        if kind is EventKind.DEAL_HOLE:
            following = events[index + 1] if index + 1 < len(events) else None
            if following is None or following.kind is not EventKind.DEAL_HOLE:
                out.append("H")
            continue
        if kind is EventKind.DEAL_BOARD:
            out.append(f"D{event.street}={format_cards(event.cards)}")
            bets = [0] * len(stacks)
            continue
        seat = event.seat
        if not 0 <= seat < len(stacks):
            raise HandStateError(f"event {index} ({kind.name}) names seat {seat} of {len(stacks)} (R10.5)",
                                 table="actions", match_id=record.match_id, hand=record.hand_number)
        token = _TOKENS[kind] + _DIGITS[seat]
        if kind in _MOVES:
            stacks[seat] -= event.amount
            bets[seat] += event.amount if kind is not EventKind.POST_ANTE else 0
            token += str(event.amount)
        elif kind in (EventKind.BET, EventKind.RAISE):
            stacks[seat] -= event.amount - bets[seat]
            bets[seat] = event.amount
            token += str(event.amount)
        elif kind is EventKind.UNCALLED_RETURN:
            stacks[seat] += event.amount
            bets[seat] = max(0, bets[seat] - event.amount)
            token += str(event.amount)
        elif kind is EventKind.WIN_POT:
            stacks[seat] += event.amount
            token += str(event.amount) + (f".{event.pot}" if event.pot > 0 else "")
        elif kind is EventKind.SHOW:
            token += "=" + format_cards(event.cards)
        if event.all_in and kind is not EventKind.WIN_POT:
            token += "!"
        if kind in (EventKind.SHOW, EventKind.MUCK):
            bets = [0] * len(stacks)
        out.append(token)
    if tuple(stacks) != tuple(record.final_stacks) or sum(stacks) != sum(record.starting_stacks):
        raise HandStateError(f"its events end at stacks {stacks}, the record says {list(record.final_stacks)} "
                             "(R10.5)", table="actions", match_id=record.match_id, hand=record.hand_number)
    return " ".join(out)


def token_indexes(record: HandRecord) -> dict[int, int]:
    """Each event's index among the packed tokens (``pack_events``) by its index in the record: the hole cards
    dealt, one event a card, are the one token ``H``."""
    out: dict[int, int] = {}
    token = 0
    events = record.events
    for index, event in enumerate(events):
        out[index] = token
        if event.kind is not EventKind.DEAL_HOLE or index + 1 == len(events) \
                or events[index + 1].kind is not EventKind.DEAL_HOLE:
            token += 1
    return out


def escape_comment(text: str) -> str:
    """A comment as its field carries it: ``%`` and ``|`` percent-encoded (``%25``, ``%7C``), which the viewer
    undoes with ``decodeURIComponent``; the text was already one printable line (arena.text.comment)."""
    return _COMMENT_UNSAFE.sub(lambda m: "%25" if m[0] == "%" else "%7C", text)


def pack_comments(record: HandRecord) -> list[str]:
    """The bots' decision comments of a hand as fields ``k:text``, ``k`` the commented action's index among the
    packed tokens, in order; cleaned again (arena.text.comment), so a record edited by hand cannot add a line."""
    tokens = token_indexes(record)
    said = decision_comments(record)
    out = []
    for index in sorted(said):
        text = comment(said[index])
        if text and 0 <= index < len(record.events) and record.events[index].kind in _DECISIONS:
            out.append(f"{tokens[index]}:{escape_comment(text)}")
    return out


def pack_hand(record: HandRecord, reveal: bool, stack: int, estimates: Sequence[Mapping[int, Sequence[float]]] = (),
              ) -> str:
    """One hand as a line: ``number|deal.rotation|button|seating|stacks|holes|events|all-in EV|AIVAT``, then with
    ``reveal`` (a finished match) a field ``k:text`` for each decision comment; ``stacks`` empty when every seat
    started with ``stack``; without ``reveal`` only the hole cards shown at the table, and no comment."""
    shown = {e.seat for e in record.events if e.kind is EventKind.SHOW}
    holes = "".join(format_cards(hole) if reveal or seat in shown else HIDDEN for seat, hole in enumerate(record.hole))
    stacks = "" if all(s == stack for s in record.starting_stacks) else ",".join(map(str, record.starting_stacks))
    figures = [",".join(_number(x) for x in table[record.hand_number]) if record.hand_number in table else ""
               for table in estimates]
    fields = [str(record.hand_number), f"{record.deal}.{record.rotation}", _DIGITS[record.button],
              "".join(_DIGITS[p] for p in record.seating), stacks, holes, pack_events(record), *figures]
    said = pack_comments(record) if reveal else []
    if said:
        fields += [""] * (9 - len(fields)) + said  # the estimates' fields kept, empty or not: comments from the tenth
    return "|".join(fields).rstrip("|")


def game_text(info: MatchInfo) -> str:
    """The game in a few words (``no-limit hold'em, blinds 50/100``)."""
    config = info.config
    structure = config.structure.name.replace("_", "-").lower()
    return (f"{structure} hold'em, blinds {config.small_blind:,}/{config.big_blind:,}"
            + (f", ante {config.ante:,}" if config.ante else ""))


@dataclass(slots=True)
class MatchData:
    """What every data file of a match carries beside its hands, and which hands it may show."""

    match_id: str
    slug: str
    bots: list[str]  # as the leaderboard names them (``name@version``), their control characters made visible
    info: MatchInfo
    finished: bool
    per_deal: int
    shown: list[int] = field(default_factory=list)  # hand numbers, ascending
    size: int = BLOCK_HANDS  # hand numbers a block

    @property
    def blocks(self) -> list[int]:
        """The blocks that hold at least one shown hand."""
        return sorted({block_of(n, self.size) for n in self.shown})

    def header(self, block: int) -> dict[str, Any]:
        """The fields of block ``block`` other than its hands."""
        return {"format": FORMAT, "match": visible_controls(self.match_id), "slug": self.slug, "block": block,
                "size": self.size, "first": self.shown[0] if self.shown else None,
                "last": self.shown[-1] if self.shown else None, "bots": self.bots,
                "stack": self.info.starting_stack, "game": game_text(self.info), "finished": self.finished,
                "per_deal": self.per_deal, "hands": []}


def match_data(db: Database, match_id: str, slug: str, results: Sequence[HandResult] | None = None,
               size: int = BLOCK_HANDS) -> MatchData:
    """A match's data files' common part, with the hands they show (``results``: its hands in brief, if read),
    ``size`` hand numbers a file."""
    info = queries.require(db, match_id)
    bots = [visible_controls(bot_key(c.name, c.version)) for c in queries.participants(db, match_id)]  # as on pages
    finished = info.status.over
    per_deal = info.spec(info.seed).hands_per_deal(len(bots))
    results = queries.hand_results(db, match_id) if results is None else results
    shown = [h.hand_number for h in shown_results(results, finished, per_deal)]
    return MatchData(match_id, slug, bots, info, finished, per_deal, sorted(shown), size)


def _estimates(db: Database, data: MatchData) -> list[dict[int, tuple[float, ...]]]:
    """All-in EV and AIVAT by hand, once the match is over (they are computed from every card)."""
    if not data.finished:
        return []
    return [adjusted_payoffs(db, data.match_id, Estimator.ALLIN), adjusted_payoffs(db, data.match_id, Estimator.AIVAT)]


def blocks(db: Database, data: MatchData, wanted: Iterable[int] | None = None) -> Iterator[dict[str, Any]]:
    """The data files' contents of a match, block by block (of ``wanted`` only, if given), each hand packed; the
    hands are read once, in order."""
    chosen = set(data.blocks if wanted is None else wanted) & set(data.blocks)
    if not chosen:
        return
    numbers = {n for n in data.shown if block_of(n, data.size) in chosen}
    estimates = _estimates(db, data)
    current: dict[str, Any] | None = None
    everything = wanted is None or len(chosen) > 1  # read in one pass, the hands not shown skipped
    for record in queries.hand_records(db, data.match_id, None if everything else numbers):
        if record.hand_number not in numbers:
            continue
        block = block_of(record.hand_number, data.size)
        if current is not None and current["block"] != block:
            yield current
            current = None
        if current is None:
            current = data.header(block)
        current["hands"].append(pack_hand(record, data.finished, data.info.starting_stack, estimates))
    if current is not None:
        yield current


def script(block: Mapping[str, Any]) -> str:
    """A data file's text: one call of ``arenaHands`` with the block as JSON, which is a JavaScript expression
    (written in ASCII, whatever characters the bots' names and comments hold; ``<``, ``>``, ``&`` as escapes, so
    none of them can close a ``<script>`` element or open a tag, wherever the text ends up)."""
    text = json.dumps(block, ensure_ascii=True, separators=(",", ":"))
    for char, escape in _SCRIPT_UNSAFE.items():
        text = text.replace(char, escape)  # JSON has these characters only inside strings
    return f"{CALLBACK}({text});\n"


def data_path(slug: str, block: int) -> str:
    """Where a block's file is in a published site, from its root (``DATA_PATH`` filled in)."""
    return DATA_PATH.replace("{slug}", slug).replace("{block}", str(block))
