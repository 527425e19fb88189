"""Re-deal a recorded match from its published seed and check every card, seat and chip against the record, and
the record against its own evidence (arena.records.evidence).

A record passes only if: the commitment holds (version 2: the stored schedule and participants are the ones it
covers, and the seed is the one behind it; version 1, a match recorded before schema 5: the seed's hash alone);
every hand's rows are the ones written (their digests) and the hash chain holds link by link; the final hash is the
one recorded (and the one published, ``final``); the status fits the hands and the final record; every hand's deck
is the one the seed deals for its deal number (R1.3); the hand numbers are the schedule's (all of them once it is
completed; no hole in the middle before); the seats follow the duplicate schedule; replaying the recorded decisions
through the engine gives exactly the recorded cards, events, payoffs and stacks; and every action the referee drew
from a bot's mixed action is the one the seed draws (arena.deals.policy_draw). A cash game or a freezeout (R11.3,
R11.4) is re-played whole: its games are run again from their rules (arena.referee.game), each recorded hand must
be the hand the game deals next, a completed match's games must have reached their end, and the places recorded
must be the ones the re-play gives. Problems come in the order found: the first names the first hand and field that
differ.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from arena.cards import format_cards
from arena.deals import DealPlan, deck_for_hand, policy_draw, verify_commitment
from arena.engine import EventKind, RuleError, TableConfig
from arena.records.audit import (
    Entry,
    check_commitment,
    check_final,
    holes,
    stored_games,
    stored_outcomes,
    walk_chain,
)
from arena.records.codec import card_parser, hand_record
from arena.records.db import Database
from arena.records.errors import RecordsDamaged
from arena.records.evidence import COMMITMENT_VERSION, part_digests
from arena.records.phh_sink import rebuild_hand, replay_steps
from arena.records.queries import MatchInfo, game_results, hand_rows, match_info, participants
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
    pending: str | None = None  # why the match cannot be re-dealt yet (its seed is not published)
    commitment_version: int = 0  # 1: the seed's hash alone (recorded before schema 5); 2: seed, schedule, players
    chained: bool = False  # whether its hands are hash-chained
    final_hash: str | None = None  # the final hash the record gives (None while it runs, or never sealed)

    @property
    def ok(self) -> bool:
        """Whether the record agrees with its seed and its evidence in every detail."""
        return not self.problems


def verify_match(db: Database, match_id: str, commitment: str | None = None, final: str | None = None,
                 ) -> Verification:
    """Check one match; ``commitment`` is the hash published before the match (default: the one recorded),
    ``final`` the final hash published after it (default: the one recorded)."""
    result = Verification(match_id)
    try:
        info = match_info(db, match_id)
        if info is None:
            result.problems.append(f"no match {match_id!r} in {db.path}")
            return result
        _verify(db, info, commitment, final, result)
    except RecordsDamaged as exc:
        result.problems.append(str(exc))
    return result


def _verify(db: Database, info: MatchInfo, commitment: str | None, final: str | None, result: Verification) -> None:
    contestants = participants(db, info.match_id)
    result.commitment_version = info.commitment_version
    result.chained = info.commitment_version >= COMMITMENT_VERSION
    seed = info.seed
    if commitment is not None:
        published = commitment.strip().lower()
        if result.chained and published != info.commitment:
            result.problems.append(f"the commitment recorded, {info.commitment}, is not the one published, {published}")
        elif not result.chained and seed and not verify_commitment(seed, published):
            result.problems.append(f"R1.3: the seed does not match the commitment {published}")
    result.problems += check_commitment(info, contestants, seed or None)
    result.problems += _status_problems(info)
    spec = info.spec(seed)
    names = [c.name for c in contestants]
    entries: list[Entry] = []
    stacks: dict[int, tuple[int, ...]] = {}
    records: dict[int, HandRecord] = {}
    plans = {p.hand_number: p for p in spec.plan(len(names))} if seed and not spec.game.is_game else {}
    configs: dict[str, TableConfig] = {}
    cards = card_parser()
    evidence, result.problems = result.problems, []  # the record against its evidence first, then the re-deal
    for rows, place in hand_rows(db, info.match_id):
        entries.append((place.position, rows.number, place.digests, place.link, part_digests(rows)))
        stacks[rows.number] = rows.final_stacks
        try:
            record = hand_record(info.match_id, rows, info.config, configs, names, cards)
        except RecordsDamaged as exc:
            result.problems.append(f"hand {rows.number}: {exc.table}: {exc.what}")
            continue
        result.hands += 1
        if not seed:
            continue
        if spec.game.is_game:
            records[record.hand_number] = record
        else:
            _check_planned(record, plans, seed, result)
    redealt, result.problems = result.problems, evidence
    if result.chained:
        audit = walk_chain(info.commitment, entries)
        result.problems += audit.problems
        result.problems += [f"hand {n}: has no place in the hash chain (it was not written by the referee)"
                            for n in audit.unchained[:1]]
        if info.final_hash or final is not None:
            result.final_hash, problems = check_final(info, audit, len(entries), stored_outcomes(db, info.match_id),
                                                      stored_games(db, info.match_id), final)
            result.problems += problems
    elif final is not None:
        result.problems.append("this match was recorded before schema 5: it has no final hash to check")
    result.problems += redealt
    if not seed:
        result.pending = f"its seed stays secret until the match is over (it is {info.status.value})"
        return
    recorded = {number for _, number, *_ in entries}
    if spec.game.is_game:
        _verify_games(db, spec, len(names), info.status, records, result)
    else:
        _check_complete(info, spec, len(names), recorded, stacks, plans, result)
    if not entries and info.status not in (MatchStatus.NO_SHOW, MatchStatus.INTERRUPTED):
        result.problems.append(f"match {info.match_id} has no recorded hands")
    if entries and info.status is MatchStatus.NO_SHOW:
        result.problems.append(f"match {info.match_id} is recorded as a no-show (nothing dealt) but has "
                               f"{len(entries)} hands: the status was changed")


def _status_problems(info: MatchInfo) -> list[str]:
    """Whether the status fits the final record: a match still running has no published seed and no final hash; a
    match over (or cut short on purpose) since schema 5 has a final hash."""
    if info.status is MatchStatus.RUNNING and (info.seed or info.final_hash):
        return [f"the status says {info.status.value}, but the match was ended (its "
                f"{'seed is published' if info.seed else 'final hash is recorded'}): the status was changed"]
    if info.status is MatchStatus.ABORTED and info.seed:
        return ["the status says aborted, but the seed is published, as only a match over for good has: the status "
                "was changed"]
    if info.commitment_version >= COMMITMENT_VERSION and info.status is not MatchStatus.RUNNING and \
            not info.final_hash:
        return [f"the match is {info.status.value} but has no final hash: the record of its end was changed"]
    return []


def _check_planned(record: HandRecord, plans: dict[int, DealPlan], seed: str, result: Verification) -> None:
    where = f"hand {record.hand_number}"
    plan = plans.get(record.hand_number)
    if plan is None:
        result.problems.append(f"{where}: not part of the match's schedule")
        return
    if (record.deal, record.rotation, record.seating, record.button) != (
            plan.deal, plan.rotation, plan.seating, plan.button):
        result.problems.append(f"{where}: seats or button differ from the match's schedule")
    _check_hand(record, seed, plan.deal, where, result)


def _check_complete(info: MatchInfo, spec: MatchSpec, num_bots: int, recorded: set[int],
                    stacks: dict[int, tuple[int, ...]], plans: dict[int, DealPlan], result: Verification) -> None:
    """The hand numbers against the schedule, as a set: all of them once completed, no hole in the middle before."""
    missing = sorted(set(plans) - recorded)
    if missing and info.status is MatchStatus.COMPLETED:
        result.problems.append(f"{len(missing)} of the {len(plans)} scheduled hands are missing from a completed "
                               f"match (first: hand {missing[0]}): hands were deleted")
    elif missing:
        result.problems += holes(spec, num_bots, recorded, info.tables, stacks)
        if info.status is not MatchStatus.NO_SHOW:
            result.incomplete = f"{len(recorded)} of {len(plans)} scheduled hands (the match is {info.status.value})"


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
    except (RuleError, RecordsDamaged) as exc:
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
        try:
            result.problems.extend(f"{where}: {problem}" for problem in _redraw(record, seed))
        except (RuleError, RecordsDamaged) as exc:
            result.problems.append(f"{where}: the recorded decisions cannot be replayed: {exc}")


def _verify_games(db: Database, spec: MatchSpec, num_bots: int, status: MatchStatus, records: dict[int, HandRecord],
                  result: Verification) -> None:
    """Re-play every game of a cash game's or a freezeout's match from its rules and check each recorded hand."""
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
        stored = {(g.game, g.rotation): g for g in game_results(db, spec.match_id)}
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


def _blind_seats(record: HandRecord) -> set[int]:
    """The seats that posted the small or the big blind (they post no entry blind, R11.3)."""
    n = len(record.seating)
    if n == 2:
        return {record.button, (record.button + 1) % n}
    return {(record.button + 1) % n, (record.button + 2) % n}
