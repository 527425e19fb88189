"""Replay PHH hand histories through the engine, and write engine hands as PHH.

PHH numbers players from the button's left (``p1``) round to the button (the last player); the replay seats
player ``pK`` at engine seat ``K-1`` with the button on the last seat, so both orders agree.

The writer puts every action where PokerKit's state machine (the reference reader of PHH) expects it, so that a
file replays action by action as written, with no action skipped, added or repaired:

* Show-down (``sm``): PokerKit starts the show-down as soon as no more betting is possible. When players are all-in
  before the river, the hands are shown first and the rest of the board is dealt after (``d db`` lines after the
  ``sm`` lines); PokerKit refuses a board card before the show-down there ("No board dealing is pending"), and it
  refuses an ``sm`` after the run-out. After river betting the ``sm`` lines come last, as before. Each ``sm`` names
  its player, so PokerKit takes them in the order written: arena writes the order of R8.3.
* Mucks (R8.4, ``reveal_all=False``): after river betting a muck is written as ``pN sm``. Before an all-in
  run-out PokerKit would take a muck for a fold before the board is out (heads-up it then deals no more cards, and
  the record loses its board), so an all-in hand is written as shown, like every all-in hand in the PHH corpus and
  PokerKit's own default; a hand arena mucked keeps the note ``# mucked (R8.4)``.
* A check that only PokerKit asks for (``pokerkit_only_check``): pre-flop, when everybody else is all-in for no
  more than a player's blind, the engine deals on (R5.6) but PokerKit still asks that player, who has not acted,
  to check. The writer writes that ``cc`` and the replay accepts exactly that one, so both readers agree.

What PokerKit still does differently, so that no writer can make it replay those hands to arena's result:

* odd chips: R10.4 deals the odd chips of a split pot one by one from the button's left; PokerKit gives a pot's
  whole remainder to its first winner, after killing the losing hands and merging the pots the same players can
  win. The stacks add up and differ only by those chips (as conformance/README.md allows for split pots).
* short all-ins: where RULES.md and PokerKit disagree on reopening the betting (R7.4) or on the fixed-limit cap
  (R7.6), PokerKit refuses a raise that arena allowed (tests/engine/test_pokerkit_differential.py, ``B`` and ``C``).
* heads-up with the small blind equal to the big blind: PokerKit asks the big blind to act first pre-flop.
* a cash game's entry blind (R2.4), a live big blind posted out of position: PHH has no such post, so arena writes
  it in ``_arena_entry_blinds`` (``ENTRY_BLINDS_FIELD``), which its replay reads and PokerKit ignores.

The engine's replay reads both orders: the show-down before the run-out (PokerKit's, and that of the 94 all-in
conformance hands) and after it (as arena wrote it before); it does not depend on where the ``sm`` lines are.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from arena.engine import (
    ActionKind,
    AnteMode,
    DeckError,
    Event,
    EventKind,
    Hand,
    IllegalActionError,
    RuleError,
    Structure,
    TableConfig,
)
from arena.engine.deck import build_deck
from arena.records.phh import STRUCTURE_FIELD, PhhAction, PhhError, PhhHand, format_action

ENTRY_BLINDS_FIELD = "_arena_entry_blinds"
"""A cash game's entry blinds (R2.4): the players (1 is p1) who posted a live big blind out of position on joining.
PHH has no such post (a blind beyond the big blind is a straddle, which moves the first action); arena writes it in
this user-defined field and replays it, PokerKit ignores it and so replays such a hand without the post."""


class ReplayError(Exception):
    """A hand history the engine refuses; the message names the action, the player and the rule."""


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """Outcome of replaying one hand: ``ok`` when every action was legal and the stacks agree."""

    ok: bool
    finishing_stacks: list[int] | None
    error: str | None = None

    def to_json(self, file: str) -> dict[str, Any]:
        """The JSON object ``arena replay`` prints for one hand."""
        return {"file": file, "ok": self.ok, "finishing_stacks": self.finishing_stacks, "error": self.error}


def table_config(phh: PhhHand) -> TableConfig:
    """The engine's table for a PHH hand: structure, blinds and antes (R3, R7). Raises ``ReplayError``."""
    blinds = phh.blinds_or_straddles
    # Entries are by position, small blind first, even heads-up where p1 is the big blind (PokerKit reads it so)
    sb_index, bb_index = 0, 1
    if any(b for i, b in enumerate(blinds) if i not in (sb_index, bb_index)):
        raise ReplayError(f"straddles {blinds} are not part of RULES.md (R3.1 has small and big blind only)")
    small, big = blinds[sb_index], blinds[bb_index]
    antes = phh.antes
    if not any(antes):
        ante, mode = 0, AnteMode.NONE
    elif all(a == antes[0] for a in antes):
        ante, mode = antes[0], AnteMode.EACH
    elif all(a == 0 for i, a in enumerate(antes) if i != bb_index):
        ante, mode = antes[bb_index], AnteMode.BIG_BLIND
    else:
        raise ReplayError(f"antes {antes} are neither equal for every player nor a big-blind ante (R3.2)")
    try:
        if phh.variant == "FT":
            return TableConfig(
                small, big, Structure.FIXED_LIMIT, ante, mode, small_bet=phh.small_bet or big,
                big_bet=phh.big_bet or 2 * (phh.small_bet or big),
            )
        structure = Structure.POT_LIMIT if phh.extra.get(STRUCTURE_FIELD) == "pot-limit" else Structure.NO_LIMIT
        return TableConfig(small, big, structure, ante, mode)
    except RuleError as exc:
        raise ReplayError(str(exc)) from None


def _deck(phh: PhhHand, actions: list[PhhAction]) -> list[int]:
    """A deck in dealing order that reproduces the record: known cards where they were, unused cards elsewhere."""
    n = phh.num_players
    hole: dict[int, tuple[int, ...]] = {}
    board: list[int] = []
    for action in actions:
        if action.verb in ("dh", "sm") and action.actor is not None and action.actor < n and action.cards:
            hole[action.actor] = action.cards
        elif action.verb == "db" and action.cards:
            board.extend(action.cards)
    return build_deck(n, n - 1, hole, board)


_SEAT = re.compile(r"\bseat (\d+)\b")


def _phh_names(message: str) -> str:
    """Engine messages say ``seat 0``; PHH readers know that player as ``p1``."""
    return _SEAT.sub(lambda m: f"p{int(m.group(1)) + 1}", message)


def replay(phh: PhhHand) -> Hand:
    """Play a hand history through the engine and return the finished hand; raises ``ReplayError``."""
    n = phh.num_players
    try:
        actions = phh.parsed_actions()
    except PhhError as exc:
        raise ReplayError(str(exc)) from None
    config = table_config(phh)
    entries = phh.extra.get(ENTRY_BLINDS_FIELD, [])
    if not isinstance(entries, list) or not all(isinstance(e, int) and 1 <= e <= n for e in entries):
        raise ReplayError(f"{ENTRY_BLINDS_FIELD} = {entries!r}: expected players by number (1 is p1)")
    try:
        hand = Hand(config, phh.starting_stacks, _deck(phh, actions), button=n - 1,
                    entry_blinds=[e - 1 for e in entries])
    except (RuleError, DeckError) as exc:
        raise ReplayError(_phh_names(str(exc))) from None
    dealt_board = 0
    pokerkit_check_done = False
    for index, action in enumerate(actions):
        where = f"action {index} {action.text!r}"
        if action.actor is not None and not 0 <= action.actor < n:
            raise ReplayError(f"{where}: there is no p{action.actor + 1} at a {n}-player table")
        if action.verb == "db":
            dealt_board += len(action.cards or ())
            if len(hand.board) < dealt_board:
                seat = hand.to_act
                who = f"p{seat + 1} is still to act" if seat is not None else "the hand is over"
                raise ReplayError(f"{where}: R5.4: the betting round is not over ({who}), no board card is due")
            continue
        if action.verb in ("dh", "sm"):
            continue
        seat = action.actor
        assert seat is not None
        if action.verb == "cc" and hand.to_act is None and not pokerkit_check_done:
            expected = pokerkit_only_check(hand)
            if expected is not None and expected[1] == seat:
                pokerkit_check_done = True  # the check PokerKit asks for where the engine deals on (R5.6)
                continue
        if hand.to_act is not None and seat != hand.to_act:
            raise ReplayError(
                f"{where}: R6.3: out of turn: it is p{hand.to_act + 1}'s turn to act, not p{seat + 1}'s"
            )
        try:
            if action.verb == "f":
                hand.apply(seat, ActionKind.FOLD)
            elif action.verb == "cc":
                hand.apply(seat, ActionKind.CHECK if hand.current_bet == hand.bets[seat] else ActionKind.CALL)
            else:
                hand.apply(seat, ActionKind.RAISE, action.amount)
        except IllegalActionError as exc:
            raise ReplayError(f"{where}: {_phh_names(str(exc))}") from None
    if not hand.is_over:
        raise ReplayError(f"R5.4: the record ends with p{(hand.to_act or 0) + 1} still to act")
    return hand


def stacks_agree(recorded: list[float], replayed: list[int]) -> bool:
    """Exact match, or the conformance allowance for a split odd chip written as halves (RULES.md R10.4)."""
    if len(recorded) != len(replayed) or sum(recorded) != sum(replayed):
        return False
    pairs = zip(recorded, replayed, strict=True)
    return all(r == p or (r != int(r) and p in (math.floor(r), math.ceil(r))) for r, p in pairs)


def replay_result(phh: PhhHand) -> ReplayResult:
    """Replay one hand and compare with its ``finishing_stacks`` when the record has them."""
    try:
        hand = replay(phh)
    except ReplayError as exc:
        return ReplayResult(False, None, str(exc))
    stacks = list(hand.stacks)
    if phh.finishing_stacks is not None and not stacks_agree(phh.finishing_stacks, stacks):
        message = f"R10: finishing stacks {stacks} differ from the record's {phh.finishing_stacks}"
        return ReplayResult(False, stacks, message)
    return ReplayResult(True, stacks)


MUCKED_NOTE = "# mucked (R8.4)"
_DECISIONS = (EventKind.FOLD, EventKind.CHECK, EventKind.CALL, EventKind.BET, EventKind.RAISE)  # a bot's actions
_ACTIONS = frozenset({EventKind.FOLD, EventKind.CHECK, EventKind.CALL, EventKind.BET, EventKind.RAISE})


def _show_line(player: int, event: Event, hand: Hand, all_in: bool) -> str:
    """``pN sm CARDS`` or ``pN sm`` (muck); before an all-in run-out a mucked hand is shown, with a note."""
    if event.kind is EventKind.SHOW:
        return format_action(player, "sm", event.cards)
    if all_in:
        return f"{format_action(player, 'sm', hand.hole[event.seat])} {MUCKED_NOTE}"
    return format_action(player, "sm")


def pokerkit_only_check(hand: Hand) -> tuple[int, int] | None:
    """(event index, seat): the check PokerKit asks for after that pre-flop action, where the engine deals on.

    Pre-flop, the engine ends the betting when only one player still has chips and owes nothing (R5.6), even if
    that player (a blind) has not acted. PokerKit keeps every player who had chips and something to play for when
    the street began (a positive effective stack) in its queue of players to act, and asks them to check. This
    happens only when the others go all-in for no more than that player's blind, or fold; the engine never has it.
    """
    n = hand.num_seats
    stacks = list(hand.starting_stacks)
    bets = [0] * n
    folded = [False] * n
    acted = [False] * n
    start: tuple[list[int], list[int]] | None = None  # stacks and bets when the pre-flop betting begins
    last = -1
    over = False
    for position, event in enumerate(hand.events):
        kind, seat = event.kind, event.seat
        if kind is EventKind.DEAL_HOLE:
            start = start or (list(stacks), list(bets))
        elif kind is EventKind.POST_ANTE:
            stacks[seat] -= event.amount
        elif kind in (EventKind.POST_SMALL_BLIND, EventKind.POST_BIG_BLIND, EventKind.POST_ENTRY_BLIND):
            stacks[seat] -= event.amount
            bets[seat] += event.amount
        elif kind in _ACTIONS:
            acted[seat] = True
            last = position
            if kind is EventKind.FOLD:
                folded[seat] = True
            elif kind is EventKind.CALL:
                stacks[seat] -= event.amount
                bets[seat] += event.amount
            elif kind in (EventKind.BET, EventKind.RAISE):
                stacks[seat] -= event.amount - bets[seat]
                bets[seat] = event.amount
        elif kind is not EventKind.UNCALLED_RETURN:
            over = True  # the flop, the show-down or the pot: the pre-flop betting is over
            break
    if not over or start is None or last < 0 or folded.count(False) < 2:
        return None
    current = max(bets)
    waiting = [s for s in range(n) if not folded[s] and stacks[s] > 0 and not acted[s] and bets[s] == current]
    if len(waiting) != 1:
        return None
    seat = waiting[0]
    start_stacks, start_bets = start
    totals = sorted(s + b for s, b in zip(start_stacks, start_bets, strict=True))
    if min(start_stacks[seat], totals[-2] - start_bets[seat]) <= 0:
        return None  # PokerKit left the player out of the betting from the start (nothing to play for)
    return last, seat


def hand_to_phh(hand: Hand, players: list[str] | None = None, extra: dict[str, Any] | None = None,
                comments: Mapping[int, str] | None = None) -> PhhHand:
    """A finished or unfinished engine hand as PHH: every card known (the referee's record keeps them, R8.4).
    ``comments`` (event index -> a bot's decision comment, one printable line: arena.text.comment) are written
    after their action as PHH comments (``p1 cc # pot odds``), which PokerKit and arena's reader skip."""
    n = hand.num_seats
    order = [(hand.button + 1 + k) % n for k in range(n)]  # PHH p1 first left of the button
    index = {seat: k for k, seat in enumerate(order)}
    cfg = hand.config
    # The table's forced bets, also where a short stack posted less or nothing (PokerKit takes what it has, R3.3)
    antes = [0] * n
    blinds = [0] * n
    if cfg.antes_posted:
        for seat in range(n) if cfg.ante_mode is AnteMode.EACH else (hand.big_blind_seat,):
            antes[index[seat]] = cfg.ante
    blinds[index[hand.small_blind_seat]] = cfg.small_blind
    blinds[index[hand.big_blind_seat]] = cfg.big_blind
    if n == 2:  # by position, small blind first, though p1 is the big blind heads-up (as PokerKit reads it)
        antes.reverse()
        blinds.reverse()
    lines: list[str] = []
    showdown: list[Event] = []
    extra_check = pokerkit_only_check(hand)
    for position, event in enumerate(hand.events):
        kind = event.kind
        if kind is EventKind.DEAL_HOLE:
            lines.append(format_action(index[event.seat], "dh", event.cards))
        elif kind is EventKind.DEAL_BOARD:
            lines.append(format_action(None, "db", event.cards))
        elif kind is EventKind.FOLD:
            lines.append(format_action(index[event.seat], "f"))
        elif kind in (EventKind.CHECK, EventKind.CALL):
            lines.append(format_action(index[event.seat], "cc"))
        elif kind in (EventKind.BET, EventKind.RAISE):
            lines.append(format_action(index[event.seat], "cbr", amount=event.amount))
        elif kind in (EventKind.SHOW, EventKind.MUCK):
            showdown.append(event)
        if comments and position in comments and kind in _DECISIONS:
            lines[-1] = f"{lines[-1]} # {comments[position]}"
        if extra_check is not None and position == extra_check[0]:
            lines.append(format_action(index[extra_check[1]], "cc"))
    # The board cards dealt after the last action are an all-in run-out: PokerKit shows the hands before them
    runout = len(lines)
    while runout > 0 and lines[runout - 1].startswith("d db"):
        runout -= 1
    all_in = runout < len(lines)
    shows = [_show_line(index[event.seat], event, hand, all_in) for event in showdown]
    lines[runout:runout] = shows
    fields: dict[str, Any] = {}
    if cfg.structure is Structure.POT_LIMIT:
        fields[STRUCTURE_FIELD] = "pot-limit"
    entries = sorted(index[e.seat] + 1 for e in hand.events if e.kind is EventKind.POST_ENTRY_BLIND)
    if entries:
        fields[ENTRY_BLINDS_FIELD] = entries
    if players is not None:
        fields["players"] = [players[seat] for seat in order]
    fields.update(extra or {})
    fixed = cfg.structure is Structure.FIXED_LIMIT
    return PhhHand(
        variant="FT" if fixed else "NT",
        antes=antes,
        blinds_or_straddles=blinds,
        starting_stacks=[hand.starting_stacks[seat] for seat in order],
        actions=lines,
        min_bet=None if fixed else cfg.big_blind,
        small_bet=cfg.small_bet if fixed else None,
        big_bet=cfg.big_bet if fixed else None,
        ante_trimming_status=False,  # antes are dead money in the main pot (R3.2), as PokerKit reads "false"
        finishing_stacks=[hand.stacks[seat] for seat in order] if hand.is_over else None,
        extra=fields,
    )
