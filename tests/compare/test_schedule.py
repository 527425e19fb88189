"""The order a comparison of local bots plays its hands in (arena.runner.compare_schedule): blocks of deals, and in
each block phases of match rotations that share no bot, so that no bot ever has two processes alive that see the same
deals (every match of a comparison deals from one seed)."""

from __future__ import annotations

import itertools

from arena.referee import MatchResult, MatchSpec, MatchStatus, ParticipantResult
from arena.runner.compare import plan_comparison
from arena.runner.compare_schedule import FIRST_BLOCK, LAST_BLOCK, Half, blocks, merged, phases, skipped


def test_blocks_cover_every_deal_once_small_first_then_growing_to_a_cap() -> None:
    for rounds in (1, 10, 31, 32, 33, 100, 10_000, 100_000):
        cut = blocks(rounds)
        assert [d for block in cut for d in block] == list(range(rounds))
    sizes = [len(b) for b in blocks(100_000)]
    assert sizes[0] == FIRST_BLOCK and sizes[1] == 48 and max(sizes) == LAST_BLOCK
    assert all(a <= b for a, b in itertools.pairwise(sizes[:-1]))  # never shrinking (but the last)
    assert len(blocks(10_000)) < 20  # a long comparison restarts its bots seldom


def test_phases_never_give_one_bot_two_halves_at_once_and_keep_each_match_in_rotation_order() -> None:
    for references in range(4):
        plan = plan_comparison("c", "s", 1000, references)
        players = [(p.first, p.second) for p in plan.pairings]
        cut = phases(players)
        halves = [half for phase in cut for half in phase]
        assert sorted((h.match, h.rotation) for h in halves) == [(m, r) for m in range(len(players)) for r in (0, 1)]
        for phase in cut:
            bots = [bot for half in phase for bot in players[half.match]]
            assert len(bots) == len(set(bots)), (references, phase)  # a bot plays one half at a time
        where = {(h.match, h.rotation): i for i, phase in enumerate(cut) for h in phase}
        assert all(where[(m, 0)] < where[(m, 1)] for m in range(len(players)))
    # head-to-head alone: its two rotations, one after the other
    assert phases([(0, 1)]) == [[Half(0, 0)], [Half(0, 1)]]
    # with two references, matches with no bot in common share a phase
    assert max(len(p) for p in phases([(0, 1), (0, 2), (1, 2), (0, 3), (1, 3)])) == 2


def test_a_half_of_a_block_skips_every_other_hand() -> None:
    spec = MatchSpec("m", "s", 20)  # 10 deals, hand 2d + r
    assert sorted(set(range(20)) - skipped(spec, range(2, 5), 1)) == [5, 7, 9]


def _result(played: int, net: int, reason: MatchStatus, crashed: str | None = None) -> MatchResult:
    """A part that played ``played`` hands and skipped the 4 others (as a match counts them: skipped ones too)."""
    def row(name: str, chips: int) -> ParticipantResult:
        return ParticipantResult(name, "1", chips, played, 0.0, 1, 1.0, 0, 0, 0, 0, False, (),
                                 crashed=crashed if name == "b" else None)
    return MatchResult("m", reason, 4 + played, 8, 1.0, (row("a", net), row("b", -net)), "c", "s")


def test_merged_parts_add_up_to_the_match() -> None:
    spec = MatchSpec("m", "s", 8)
    parts = [(_result(2, 100, MatchStatus.COMPLETED), 4), (_result(2, 50, MatchStatus.COMPLETED), 4)]
    whole = merged(spec, parts, [("a", "1"), ("b", "1")], MatchStatus.STOPPED)
    assert whole.hands_played == 4 and whole.reason is MatchStatus.STOPPED  # 4 of 8 hands: stopped by a verdict
    assert [r.net for r in whole.results] == [150, -150] and [r.hands for r in whole.results] == [4, 4]
    parts += [(_result(2, 0, MatchStatus.COMPLETED, crashed="exited"), 4)] * 2
    whole = merged(spec, parts, [("a", "1"), ("b", "1")], MatchStatus.STOPPED)
    assert whole.reason is MatchStatus.COMPLETED and whole.results[1].crashed == "exited"
    never = merged(spec, [], [("a", "1"), ("b", "1")], MatchStatus.STOPPED)
    assert never.hands_played == 0 and never.reason is MatchStatus.STOPPED and not never.failures()
