"""Re-deal a recorded match from its published seed and check every card, seat and chip against the record.

A record passes only if: the seed matches the commitment published before the match; every hand's deck is the one
the seed deals for its deal number (R1.3); the seats follow the duplicate schedule; and replaying the recorded
decisions through the engine gives exactly the recorded cards, events, payoffs and stacks; and every action the
referee drew from a bot's mixed action is the one the seed draws (arena.deals.policy_draw). A cash game or a
freezeout (R11.3, R11.4) is re-played whole: its games are run again from their rules (arena.referee.game), each
recorded hand must be the hand the game deals next (seats, button, blinds, stacks carried over, entry blinds), no
hand may be missing before the last one, a completed match's games must have reached their end, and the places
recorded must be the ones the re-play gives.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from arena.cards import format_cards
from arena.deals import deck_for_hand, policy_draw, verify_commitment
from arena.engine import EventKind, RuleError
from arena.records.db import Database
from arena.records.phh_sink import rebuild_hand, replay_steps
from arena.referee import GameResult, HandRecord, MatchSpec
from arena.referee.status import MatchStatus
from arena.referee.table import drawn_action


@dataclass(slots=True)
class Verification:
    """What ``verify_match`` found: the hands checked and every discrepancy, in words."""

    match_id: str
    hands: int = 0
    problems: list[str] = field(default_factory=list)
    incomplete: str | None = None  # why fewer hands than scheduled were checked, when that is legitimate
    pending: str | None = None  # why the match cannot be verified yet (its seed is not published)

    @property
    def ok(self) -> bool:
        """Whether the record agrees with its seed in every detail."""
        return not self.problems


def verify_match(db: Database, match_id: str, commitment: str | None = None) -> Verification:
    """Check one match; ``commitment`` is the hash published before the match (default: the one recorded)."""
    result = Verification(match_id)
    row = db.match_row(match_id)
    if row is None:
        result.problems.append(f"no match {match_id!r} in {db.path}")
        return result
    status = MatchStatus(row["status"])
    seed = row["seed"]
    if not seed:
        result.pending = f"its seed stays secret until the match is over (it is {status.value})"
        return result
    published = commitment or row["commitment"]
    if not verify_commitment(seed, published):
        result.problems.append(f"R1.3: the seed does not match the commitment {published}")
    num_bots = len(db.participants(match_id))
    spec = db.match_spec(match_id)
    if spec.game.is_game:
        _verify_games(db, spec, num_bots, status, result)
        return result
    schedule = spec.plan(num_bots)
    plans = {p.hand_number: p for p in schedule}
    recorded = db.recorded_hands(match_id)
    missing = sorted(set(plans) - recorded)
    if missing and status is MatchStatus.COMPLETED:
        result.problems.append(f"{len(missing)} of the {len(plans)} scheduled hands are missing from a completed "
                               f"match (first: hand {missing[0]}): hands were deleted")
    elif missing:
        # each rotation is played in deal order (at a table of its own, or all at one table): what a match cut
        # short has of a rotation is always its first deals, so a hole means a deleted hand
        for rotation in sorted({p.rotation for p in schedule}):
            deals = sorted(p.deal for p in schedule if p.rotation == rotation and p.hand_number in recorded)
            if deals != list(range(len(deals))):
                hole = next(d for d, want in zip(deals, range(len(deals)), strict=True) if d != want)
                result.problems.append(f"rotation {rotation}: deal {hole - 1 if hole else 0} is missing although "
                                       "later deals of it are recorded: hands were deleted")
                break
        if status is not MatchStatus.NO_SHOW:
            result.incomplete = f"{len(recorded)} of {len(plans)} scheduled hands (the match is {status.value})"
    for record in db.hand_records(match_id):
        result.hands += 1
        where = f"hand {record.hand_number}"
        plan = plans.get(record.hand_number)
        if plan is None:
            result.problems.append(f"{where}: not part of the match's schedule")
            continue
        if (record.deal, record.rotation, record.seating, record.button) != (
            plan.deal, plan.rotation, plan.seating, plan.button
        ):
            result.problems.append(f"{where}: seats or button differ from the match's schedule")
        _check_hand(record, seed, plan.deal, where, result)
    if result.hands == 0 and status not in (MatchStatus.NO_SHOW, MatchStatus.INTERRUPTED):
        result.problems.append(f"match {match_id} has no recorded hands")
    return result


def _redraw(record: HandRecord, seed: str) -> list[str]:
    """Draw every mixed action of a hand again from the seed: the recorded action must be the one drawn."""
    problems = []
    for decision, hand in zip(record.decisions, replay_steps(record), strict=False):  # the hand before each one
        if not decision.policy:
            continue
        legal = hand.legal_actions()
        drawn = drawn_action(decision.policy, policy_draw(seed, record.hand_number, len(hand.events)))
        if legal.concrete(drawn) != legal.concrete(decision.action):
            problems.append(f"the action drawn from seat {decision.seat}'s mixed action is {drawn}, but "
                            f"{decision.action} was recorded")
    return problems


def _check_hand(record: HandRecord, seed: str, deal: int, where: str, result: Verification) -> None:
    """The deck a hand was dealt from the seed, and its replay through the engine, against the record."""
    expected = deck_for_hand(seed, deal)
    if list(record.deck) != expected:
        result.problems.append(f"{where}: R1.3: the recorded deck is not the one the seed deals")
    try:
        hand = rebuild_hand(dataclasses.replace(record, deck=tuple(expected)))
    except RuleError as exc:
        result.problems.append(f"{where}: the recorded decisions are illegal with the seed's deck: {exc}")
        return
    checks = (
        ("hole cards", [format_cards(h) for h in hand.hole], [format_cards(h) for h in record.hole]),
        ("board", format_cards(hand.board), format_cards(record.board)),
        ("payoffs", list(hand.payoffs or []), list(record.payoffs)),
        ("final stacks", list(hand.stacks), list(record.final_stacks)),
        ("events", [tuple(e) for e in hand.events], [tuple(e) for e in record.events]),
    )
    for name, dealt, kept in checks:
        if dealt != kept:
            result.problems.append(f"{where}: recorded {name} differ from a re-deal: {kept} != {dealt}")
    if any(d.policy for d in record.decisions):
        result.problems.extend(f"{where}: {problem}" for problem in _redraw(record, seed))


def _verify_games(db: Database, spec: MatchSpec, num_bots: int, status: MatchStatus, result: Verification) -> None:
    """Re-play every game of a cash game's or a freezeout's match from its rules and check each recorded hand."""
    records = {r.hand_number: r for r in db.hand_records(spec.match_id)}
    games = spec.games(num_bots)
    seen: set[int] = set()
    replayed: list[GameResult] = []
    for game in games:
        label = f"game {game.game} rotation {game.rotation}"
        while (plan := game.next_hand()) is not None:
            record = records.get(plan.plan.hand_number)
            if record is None:
                break
            seen.add(record.hand_number)
            result.hands += 1
            where = f"hand {record.hand_number} ({label}, hand {plan.index})"
            expected = (plan.plan.deal, plan.plan.rotation, plan.plan.seating, plan.plan.button, plan.config,
                        plan.stacks)
            kept = (record.deal, record.rotation, record.seating, record.button, record.config,
                    record.starting_stacks)
            if expected != kept:
                result.problems.append(f"{where}: R11.3/R11.4: seats, button, blinds or starting stacks differ from "
                                       f"the game's: recorded {kept[2:4]} {kept[5]}, the game deals "
                                       f"{expected[2:4]} {expected[5]}")
                break
            posted = tuple(e.seat for e in record.events if e.kind is EventKind.POST_ENTRY_BLIND)
            due = tuple(s for s in plan.entry_blinds if s not in _blind_seats(record))
            if posted != due:
                result.problems.append(f"{where}: R2.4: entry blinds posted by seats {posted}, due from {due}")
            _check_hand(record, spec.seed, plan.plan.deal, where, result)
            game.record(record.final_stacks)
        if status is MatchStatus.COMPLETED and not game.over:
            result.problems.append(f"{label}: the match is completed but the game was not played to its end "
                                   f"(hand {game.index} is missing)")
        replayed.append(game.result())
    for number in sorted(set(records) - seen):
        result.problems.append(f"hand {number}: not a hand any game of the match deals (or a hand before it is "
                               "missing: hands were deleted)")
    if status.over and status is not MatchStatus.NO_SHOW:
        stored = {(g.game, g.rotation): g for g in db.game_results(spec.match_id)}
        for game_result in replayed:
            kept_result = stored.get((game_result.game, game_result.rotation))
            if kept_result is None:
                if game_result.hands_played:
                    result.problems.append(f"game {game_result.game} rotation {game_result.rotation}: no recorded "
                                           "result")
            elif (kept_result.places, kept_result.final_stacks, kept_result.bought_in) != (
                    game_result.places, game_result.final_stacks, game_result.bought_in):
                result.problems.append(
                    f"game {game_result.game} rotation {game_result.rotation}: R11.4: recorded places "
                    f"{kept_result.places} and stacks {kept_result.final_stacks} differ from a re-play's "
                    f"{game_result.places} {game_result.final_stacks}")
    if not all(g.over for g in games) and status is not MatchStatus.COMPLETED:
        result.incomplete = f"{result.hands} hands of games not all played to their end (the match is {status.value})"
    if result.hands == 0 and status not in (MatchStatus.NO_SHOW, MatchStatus.INTERRUPTED):
        result.problems.append(f"match {spec.match_id} has no recorded hands")


def _blind_seats(record: HandRecord) -> set[int]:
    """The seats that posted the small or the big blind (they post no entry blind, R11.3)."""
    n = len(record.seating)
    if n == 2:
        return {record.button, (record.button + 1) % n}
    return {(record.button + 1) % n, (record.button + 2) % n}
