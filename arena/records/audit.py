"""Checking a match's record against its own evidence (arena.records.evidence): the commitment against the stored
schedule, participants and seed; every hand's rows against the digests written with it; the hash chain link by link;
the hands recorded against the schedule; the final hash. ``arena verify`` reports every problem found, and a resume
refuses to play on at the first one (arena.records.ledger).

Each problem names the first hand and the field that differ, e.g. ``hand 41: the decisions (how each was taken:
how, elapsed ms, request id, rejections, mixed policy) differ from what was written``. A match whose commitment was
downgraded to version 1 (the seed's hash alone, which skips the chain) is caught too: a version-2 commitment is never
the seed's own hash, and a published commitment or final hash (``arena verify --commitment``, ``--final``) is never
that of a version-1 record.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from arena.deals import commitment as seed_commitment
from arena.deals import verify_commitment
from arena.records.codec import game_json
from arena.records.db import Database
from arena.records.evidence import (
    COMMITMENT_VERSION,
    PARTS,
    chain_link,
    commitment_document,
    commitment_of,
    differences,
    final_hash,
    part_digests,
)
from arena.records.queries import Contestant, MatchInfo, hand_rows
from arena.referee import MatchSpec

_ORDINAL = {1: "st", 2: "nd", 3: "rd"}


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, 11th..."""
    return f"{n}{'th' if 10 <= n % 100 <= 20 else _ORDINAL.get(n % 10, 'th')}"


def stored_document(info: MatchInfo, contestants: Sequence[Contestant], seed_hash: str) -> dict[str, object]:
    """The commitment document of a match as its columns say now (``seed_hash``: the seed's own commitment)."""
    return commitment_document(info.match_id, info.kind.value, info.event, seed_hash, info.hands_total, info.seats,
                               info.config_json, info.starting_stack, info.duplicate, info.all_orders, info.game_json,
                               [(c.name, c.version) for c in contestants])


def committed(info: MatchInfo) -> dict[str, object] | None:
    """The document the commitment was made over, as stored (None if it does not parse)."""
    try:
        document = json.loads(info.committed)
    except ValueError:
        return None
    return document if isinstance(document, dict) else None


def check_commitment(info: MatchInfo, contestants: Sequence[Contestant], seed: str | None,
                     seed_source: str = "the seed") -> list[str]:
    """What does not hold of the commitment: the stored document against its hash, the columns and participants
    against the document, the seed against it. A version-1 commitment is the seed's hash alone."""
    if info.commitment_version < COMMITMENT_VERSION:
        if seed and not verify_commitment(seed, info.commitment):
            return [f"R1.3: {seed_source} does not match the commitment {info.commitment}"]
        return []
    document = committed(info)
    if document is None:
        return ["the commitment's document (matches.committed) does not parse: it was changed"]
    problems = []
    if commitment_of(document) != info.commitment:
        problems.append("the commitment is not the hash of the document stored with it (matches.committed or "
                        "matches.commitment was changed)")
    now = stored_document(info, contestants, str(document.get("seed", "")))
    problems += [f"the record differs from what the commitment covers: {d}" for d in differences(now, document)]
    if seed and seed_commitment(seed) != document.get("seed"):
        problems.append(f"R1.3: {seed_source} does not match the commitment (it covers the seed's hash "
                        f"{document.get('seed')})")
    return problems


def check_schedule(info: MatchInfo, contestants: Sequence[Contestant], spec: MatchSpec,
                   asked: Sequence[Contestant]) -> list[str]:
    """How a spec and participants asked for (a resume, a tournament file) differ from what the match was committed
    to: its seed, its schedule and table, its participants (the clock and the tables played side by side may
    change)."""
    problems = []
    if list(asked) != list(contestants):
        problems.append(f"the match was played by {', '.join(_who(c) for c in contestants)}, not by "
                        f"{', '.join(_who(c) for c in asked)}")
    document = committed(info) or {}
    seed_hash = info.commitment if info.commitment_version < COMMITMENT_VERSION else document.get("seed")
    if seed_commitment(spec.seed) != seed_hash:
        problems.append("the match was dealt from another seed")
    fields = (("hands", info.hands_total, spec.hands_planned(len(asked))), ("table", info.config, spec.config),
              ("starting stack", info.starting_stack, spec.starting_stack),
              ("duplicate", info.duplicate, spec.duplicate), ("all orders", info.all_orders, spec.all_orders),
              ("seats per table", info.seats, spec.seats), ("game", info.game_json, game_json(spec)))
    changed = [f"{name} ({was!r}, now {now!r})" if name not in ("table", "game") else name
               for name, was, now in fields if was != now]
    if changed:
        problems.append(f"the match was committed to another schedule: {', '.join(changed)} differ")
    return problems


def _who(c: Contestant) -> str:
    return f"{c.name}@{c.version}" if c.version else c.name


Entry = tuple[int | None, int, str | None, str | None, tuple[str, ...]]
"""A hand in the chain: its index, its number, its digests and link as stored, the digests of its rows now."""


@dataclass(slots=True)
class ChainAudit:
    """What a walk along a match's hash chain found: its length, its last link, the hands in the order written, and
    every problem (the first hand and part that differ)."""

    links: int = 0
    tail: str | None = None
    order: list[int] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    unchained: list[int] = field(default_factory=list)


def walk_chain(commitment: str, hands: Sequence[Entry]) -> ChainAudit:
    """Check a match's hands, given as (chain index, hand number, stored digests, stored link, digests of the rows
    now), in any order, against the chain that starts at ``commitment``."""
    audit = ChainAudit()
    chained = sorted((h for h in hands if h[0] is not None), key=lambda h: (h[0], h[1]))
    audit.unchained = sorted(number for index, number, *_ in hands if index is None)
    previous = commitment
    for position, (index, number, stored, link, now) in enumerate(chained, start=1):
        audit.order.append(number)
        if index != position and not audit.problems:
            what = ("a hand was deleted" if (index or 0) > position else "two hands claim the same place")
            audit.problems.append(f"hand {number} (written {ordinal(int(index or 0))}): the hand written "
                                  f"{ordinal(position)} is not there: {what}")
        written = tuple((stored or "").split("."))
        if written != now and not any(p.startswith(f"hand {number}:") for p in audit.problems):
            part = next((i for i, (a, b) in enumerate(zip(written, now, strict=False)) if a != b), None)
            what = PARTS[part][1] if part is not None and len(written) == len(PARTS) else "its digests"
            audit.problems.append(f"hand {number}: {what} differ from what was written")
        expected = chain_link(previous, number, written)
        if expected != link and not audit.problems:
            audit.problems.append(f"hand {number}: the hash chain breaks here (its digests or its link were "
                                  "rewritten, or a hand written before it was changed)")
        previous = link or expected
    audit.links = len(chained)
    audit.tail = chained[-1][3] if chained else None
    return audit


def chain_entries(db: Database, match_id: str) -> tuple[list[Entry], dict[int, tuple[int, ...]]]:
    """Each stored hand's place in the chain, stored digests and link, and the digests of its rows now; and each
    hand's final stacks (a resumed game starts from them)."""
    out: list[Entry] = []
    stacks: dict[int, tuple[int, ...]] = {}
    for rows, place in hand_rows(db, match_id):
        out.append((place.position, rows.number, place.digests, place.link, part_digests(rows)))
        stacks[rows.number] = rows.final_stacks
    return out, stacks


def stored_outcomes(db: Database, match_id: str) -> list[tuple[object, ...]]:
    """Each participant's outcome as stored, as the final hash takes it: (participant, outcome, detail)."""
    return [tuple(r) for r in db.rows("match_bots", "SELECT participant, outcome, detail FROM match_bots WHERE"
                                      " match_id = ? ORDER BY participant", (match_id,), match_id)]


def stored_games(db: Database, match_id: str) -> list[tuple[object, ...]]:
    """A game's results as stored, as the final hash takes them."""
    return [tuple(r) for r in db.rows("game_results", "SELECT game, rotation, participant, place, hands, bought_in,"
                                      " final_stack, eliminated, hands_played, end_reason FROM game_results WHERE"
                                      " match_id = ?", (match_id,), match_id)]


def check_final(info: MatchInfo, audit: ChainAudit, hands: int, outcomes: Sequence[Sequence[object]],
                games: Sequence[Sequence[object]], published: str | None = None) -> tuple[str, list[str]]:
    """The final hash the record gives now, and what does not hold of it: the stored one, the one ``published``."""
    now = final_hash(info.commitment, audit.tail, hands, info.status.value, outcomes, games)
    problems = []
    if info.final_hash and info.final_hash != now:
        problems.append("the final hash recorded does not match the record (its status, hands, outcomes or games "
                        "were changed after it ended)")
    if published is not None and published.strip().lower() != now:
        problems.append(f"the record gives the final hash {now}, not the published {published.strip()}: the match "
                        "was changed since it was published")
    return now, problems


def holes(spec: MatchSpec, num_bots: int, recorded: Collection[int], tables: int,
          final_stacks: Mapping[int, Sequence[int]]) -> list[str]:
    """Hands missing in the middle of what was played: in the reset game more than ``tables - 1`` of a rotation
    before its last recorded hand (tables side by side may leave that many in play at a crash), in a game any hand
    before a recorded one (a game's hands are played one after another)."""
    if spec.game.is_game:
        problems = []
        reached: set[int] = set()
        for game in spec.games(num_bots):
            while (hand := game.next_hand()) is not None and hand.plan.hand_number in recorded:
                reached.add(hand.plan.hand_number)
                stacks = final_stacks.get(hand.plan.hand_number)
                if stacks is None:
                    break
                game.record(tuple(stacks))
        for number in sorted(set(recorded) - reached)[:1]:
            problems.append(f"hand {number}: not a hand any game of the match deals next (a hand before it is "
                            "missing: hands were deleted)")
        return problems
    plans = spec.plan(num_bots)
    for rotation in sorted({p.rotation for p in plans}):
        numbers = [p.hand_number for p in plans if p.rotation == rotation]
        last = max((n for n in numbers if n in recorded), default=None)
        if last is None:
            continue
        missing = [n for n in numbers if n < last and n not in recorded]
        if len(missing) > tables - 1:
            return [f"hand {missing[0]} is missing although later hands of its rotation ({rotation}) are recorded: "
                    "hands were deleted"]
    return []
