"""The order a comparison plays its hands in, so that no bot ever has two processes alive that see the same deals,
and the sequential test can still stop early.

All the matches of a comparison deal from one seed (arena.runner.compare), and a bot plays in several of them: each
of its processes, in every match and rotation, sees every deal, from one seat or the other. So a comparison is
played block of deals by block (``blocks``), and within a block its matches' rotations ("halves": one match's hands
of one rotation) in phases (``phases``): the halves of a phase share no bot and are played side by side, each a
match of its own with fresh processes, and every process of a phase is gone before the next phase starts. A round
(one deal in every match) is complete once the block's last phase has played it, so a verdict can come at the end
of any block's last phase: blocks start at ``FIRST_BLOCK`` deals (no verdict comes before 30 sessions) and grow by
half each time up to ``LAST_BLOCK``, so an early verdict leaves few hands played and uncounted, and a long
comparison restarts its bots a few dozen times at most.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from arena.referee import MatchResult, MatchSpec, MatchStatus, ParticipantResult

FIRST_BLOCK = 32  # deals
BLOCK_GROWTH = 1.5
LAST_BLOCK = 1024


def blocks(rounds: int) -> list[range]:
    """The deals ``0..rounds-1`` in blocks of ``FIRST_BLOCK``, then half as many again each time, to ``LAST_BLOCK``."""
    out = []
    start, size = 0, FIRST_BLOCK
    while start < rounds:
        out.append(range(start, min(rounds, start + size)))
        start += size
        size = min(LAST_BLOCK, int(size * BLOCK_GROWTH))
    return out


@dataclass(frozen=True, slots=True)
class Half:
    """One match's hands of one rotation (of a block): ``match`` indexes the comparison's matches."""

    match: int
    rotation: int


def phases(players: Sequence[tuple[int, int]], rotations: int = 2) -> list[list[Half]]:
    """Every match's rotations (``players[m]``: the two bots of match m), grouped in phases whose halves share no
    bot; each match's rotations in order, each half in the first phase it fits (greedy)."""
    out: list[list[Half]] = []
    busy: list[set[int]] = []  # the bots of each phase
    for match, bots in enumerate(players):
        after = 0
        for rotation in range(rotations):
            phase = after
            while phase < len(out) and busy[phase] & set(bots):
                phase += 1
            if phase == len(out):
                out.append([])
                busy.append(set())
            out[phase].append(Half(match, rotation))
            busy[phase].update(bots)
            after = phase + 1
    return out


def skipped(spec: MatchSpec, deals: range, rotation: int) -> frozenset[int]:
    """The hand numbers of a heads-up match that one half of a block does not play (all but its own)."""
    return frozenset(p.hand_number for p in spec.plan(2) if p.deal not in deals or p.rotation != rotation)


def merged(spec: MatchSpec, parts: Sequence[tuple[MatchResult, int]], bots: Sequence[tuple[str, str]],
           ended: MatchStatus) -> MatchResult:
    """One match's result over the parts it was played in (each part's result, and how many hands it skipped);
    ``bots`` are its (name, version) in participant order; ``ended`` is its status when hands were left unplayed (a
    verdict: STOPPED). A match never begun ends so too, with a note for each bot."""
    total = spec.hands_planned(len(bots))
    played = sum(result.hands_played - skip for result, skip in parts)
    if not parts:
        note = ("not played: the comparison ended before this match began",)
        empty = tuple(ParticipantResult(name, version, 0, 0, 0.0, 0, 0.0, 0, 0, 0, 0, False, note)
                      for name, version in bots)
        return MatchResult(spec.match_id, ended, 0, total, 0.0, empty, spec.commitment, spec.seed)
    results = list(parts[0][0].results)
    for result, _ in parts[1:]:
        results = [later.after(earlier, spec.config.big_blind) for later, earlier in zip(
            result.results, results, strict=True)]
    # a bot that never connected in any part, or crashed in any, is said so (``after`` keeps the last part's word)
    results = [dataclasses.replace(
        r, connected=all(part.results[i].connected for part, _ in parts),
        crashed=next((c for part, _ in parts if (c := part.results[i].crashed)), None),
        joined=tuple(dict.fromkeys(j for part, _ in parts for j in part.results[i].joined)))
        for i, r in enumerate(results)]
    reasons = [result.reason for result, _ in parts]
    if played >= total:
        reason = MatchStatus.COMPLETED
    elif MatchStatus.NO_SHOW in reasons and played == 0:
        reason = MatchStatus.NO_SHOW
    elif reasons[-1] is MatchStatus.ABORTED:
        reason = MatchStatus.ABORTED
    else:
        reason = ended
    seconds = sum(result.seconds for result, _ in parts)
    return MatchResult(spec.match_id, reason, played, total, seconds, tuple(results), spec.commitment, spec.seed)


__all__ = ["BLOCK_GROWTH", "FIRST_BLOCK", "LAST_BLOCK", "Half", "blocks", "merged", "phases", "skipped"]
