"""Mixed actions (proto Action.policy): the referee checks a bot's probabilities, draws the action from the match's
secret seed with exactly those probabilities, records the policy, and `arena verify` re-draws every one."""

from __future__ import annotations

import asyncio
import statistics
from collections import Counter
from pathlib import Path

import pytest

from arena.deals import policy_draw
from arena.engine import Action, ActionKind
from arena.ratings.aivat import aivat_payoffs, luck_terms
from arena.records import queries
from arena.records.db import Database
from arena.records.ledger import Ledger
from arena.records.verify import verify_match
from arena.referee import Decision, FunctionSeat, HandRecord, Match, MatchSpec, MixedAction
from arena.referee.table import drawn_action
from arena.runner.bots import BotSpec
from tests.bots import caller as caller_bot
from tests.referee.test_table import Scripted, caller

CALL, FOLD, CHECK = Action(ActionKind.CALL), Action(ActionKind.FOLD), Action(ActionKind.CHECK)


def mixer(decision: Decision) -> MixedAction:
    """Folds 20%, calls (or checks) 50%, raises the minimum 30% when it can; always a mixed action."""
    legal = decision.view.legal
    assert legal is not None
    passive = CHECK if legal.can_check else CALL
    choices = [(passive, 0.5)]
    if legal.can_fold:
        choices.append((FOLD, 0.2))
    if legal.min_raise_to:
        choices.append((Action(ActionKind.RAISE, legal.min_raise_to), 0.3))
    total = sum(p for _, p in choices)
    return MixedAction(tuple((a, p / total) for a, p in choices))


def play(hands: int, seed: str, first: object, second: object, db: Database | None = None) -> list[HandRecord]:
    records: list[HandRecord] = []

    class Keep:
        def hand_finished(self, record: HandRecord) -> None:
            records.append(record)

    spec = MatchSpec("mx", seed, hands)
    seats = [("a", FunctionSeat("a", first)), ("b", FunctionSeat("b", second))]  # type: ignore[arg-type]
    sinks: list[object] = [Keep()]
    if db is not None:
        entry = Ledger(db).open(spec, [BotSpec(n, "") for n, _ in seats])
        sinks.insert(0, entry)
    result = asyncio.run(Match(spec, seats, sinks).run())  # type: ignore[arg-type]
    if db is not None:
        entry.finish(result)
    return records


def test_the_referee_draws_with_the_bots_probabilities_from_the_seed() -> None:
    records = play(400, "draws", mixer, caller)
    drawn = [d for r in records for d in r.decisions if d.policy]
    assert len(drawn) > 300 and all(d.participant == 0 for d in drawn)
    for record in records[:50]:  # each action is the one the seed draws at that point of the hand
        for decision in record.decisions:
            if decision.policy:
                assert decision.action in {a for a, _ in decision.policy}
    facing = [d for d in drawn if len(d.policy) == 3 and d.policy[0][0] == CALL]
    counts = Counter(d.action.kind for d in facing)
    n = len(facing)
    assert n > 100
    for kind, p in ((ActionKind.CALL, 0.5), (ActionKind.FOLD, 0.2), (ActionKind.RAISE, 0.3)):
        assert abs(counts[kind] / n - p) < 4 * (p * (1 - p) / n) ** 0.5, (kind, counts, n)


def test_the_draw_is_a_pure_function_of_the_seed_and_the_point_of_the_hand() -> None:
    choices = ((FOLD, 0.25), (CALL, 0.5), (Action(ActionKind.RAISE, 400), 0.25))
    assert drawn_action(choices, 0.0) == FOLD and drawn_action(choices, 0.2499) == FOLD
    assert drawn_action(choices, 0.25) == CALL and drawn_action(choices, 0.7499) == CALL
    assert drawn_action(choices, 0.75) == choices[2][0] and drawn_action(choices, 0.999999) == choices[2][0]
    assert policy_draw("s", 3, 7) == policy_draw("s", 3, 7) != policy_draw("s", 3, 8)
    assert 0 <= policy_draw("t", 1, 1) < 1
    assert play(30, "same", mixer, caller)[-1].events == play(30, "same", mixer, caller)[-1].events


@pytest.mark.parametrize(("policy", "fault"), [
    (((CALL, 0.5), (FOLD, 0.4)), "add up to 0.9"),
    (((CALL, 0.5), (CALL, 0.5)), "listed twice"),
    (((CALL, 1.0), (FOLD, 0.0)), "not in (0, 1]"),
    (((CALL, float("nan")),), "not in (0, 1]"),
    (((Action(ActionKind.RAISE, 1), 1.0),), "R6.1: raise to 1 in Action.policy is not a legal action"),
    (((CHECK, 1.0),), "R6.1: check in Action.policy is not a legal action"),
    (tuple((Action(ActionKind.RAISE, 200 + k), 1 / 65) for k in range(65)), "65 actions"),
    ((), "0 actions"),
])
def test_a_policy_that_is_not_a_distribution_over_legal_actions_is_refused(
        policy: tuple[tuple[Action, float], ...], fault: str) -> None:
    """Refused like an illegal action (ActionRejected naming the fault, a retry), never drawn from."""
    seat = Scripted("bad", [MixedAction(policy)])
    errors: list[str] = []

    async def rejected(decision: Decision, error: Exception, retries_left: int) -> None:
        errors.append(str(error))

    seat.rejected = rejected  # type: ignore[method-assign]
    spec = MatchSpec("m", "seed", 1)
    asyncio.run(Match(spec, [("bad", seat), ("good", FunctionSeat("good", caller))]).run())
    assert len(errors) == 1 and fault in errors[0], errors


def test_arena_verify_redraws_every_mixed_action(tmp_path: Path) -> None:
    db = Database(tmp_path / "m.db")
    play(40, "verify-mixed", mixer, mixer, db)
    records = list(queries.hand_records(db, "mx"))
    assert sum(bool(d.policy) for r in records for d in r.decisions) > 40  # stored and read back
    assert verify_match(db, "mx").ok
    with db.transaction():  # a forged record: the policy says the drawn action was certain to be something else
        row = db.conn.execute("SELECT hand_number, seq, kind FROM actions WHERE match_id = 'mx' AND policy IS NOT "
                              "NULL AND kind = 'FOLD' LIMIT 1").fetchone()
        db.conn.execute("UPDATE actions SET policy = ? WHERE match_id = 'mx' AND hand_number = ? AND seq = ?",
                        ('[["CALL", 0, 1.0]]', row["hand_number"], row["seq"]))
    problems = verify_match(db, "mx").problems  # the record no longer what was written, and the draw not the seed's
    assert len(problems) == 2 and "the decisions (how each was taken" in problems[0], problems
    assert "drawn from seat" in problems[1] and "fold was recorded" in problems[1], problems


def test_aivat_takes_the_luck_of_the_draw_out() -> None:
    """Every drawn decision gets an action term; over a fixed set of seeds between a mixing bot and a caller the
    adjusted mean agrees with the raw one, and the spread is smaller than with the chance terms alone."""
    raw: list[float] = []
    chance_only: list[float] = []
    full: list[float] = []
    for k in range(3):
        for record in play(300, f"aivat-mixed-{k}", mixer, caller):
            seat = record.seating.index(0)
            terms = luck_terms(record)
            assert sum(1 for name, _ in terms if name == "action") == sum(1 for d in record.decisions if d.policy)
            raw.append(record.payoffs[seat])
            full.append(aivat_payoffs(record)[seat])
            chance_only.append(record.payoffs[seat] - sum(t[seat] for name, t in terms if name != "action"))
            assert sum(aivat_payoffs(record)) == pytest.approx(0, abs=1e-6)
    n = len(raw)
    sd_raw = statistics.pstdev(raw)
    assert abs(statistics.mean(full) - statistics.mean(raw)) < 1.96 * sd_raw / n**0.5
    assert statistics.pstdev(full) < statistics.pstdev(chance_only) < sd_raw


def test_reported_probabilities_of_an_action_the_bot_chose_are_not_trusted() -> None:
    """Only the referee's draws carry a policy: a record whose decisions were chosen by the bots has no action
    terms, whatever the bots might claim (the protocol has no way to claim them)."""
    record = play(5, "plain", caller, caller)[0]
    assert all(not d.policy for d in record.decisions)
    assert "action" not in {name for name, _ in luck_terms(record)}


def test_the_sdk_sends_a_mixed_action_through_the_protocol() -> None:
    """A Python SDK bot returning ``mixed(...)``, run in-process through the protocol's messages: drawn, recorded."""
    from arena.runner.inprocess import InProcessSeat
    from arena_sdk import Bot, Request, call, check, fold, mixed

    class Mixer(Bot):
        def act(self, request: Request) -> object:  # type: ignore[override]
            return mixed({check(): 1}) if request.legal.can_check else mixed({call(): 3, fold(): 1})

    records: list[HandRecord] = []

    class Keep:
        def hand_finished(self, record: HandRecord) -> None:
            records.append(record)

    seats = [("m", InProcessSeat("m", Mixer())), ("c", FunctionSeat("c", caller))]
    asyncio.run(Match(MatchSpec("sdk", "sdk-mixed", 60), seats, [Keep()]).run())  # type: ignore[arg-type]
    policies = [d.policy for r in records for d in r.decisions if d.participant == 0]
    assert policies and all(policies)
    assert {tuple(a.kind for a, _ in p) for p in policies} <= {(ActionKind.CALL, ActionKind.FOLD), (ActionKind.CHECK,)}


def test_a_remote_sdk_bot_plays_mixed_actions_over_grpc(tmp_path: Path) -> None:
    """The sample random bot with --mixed as a real sandboxed process over gRPC (`arena match`): its actions are
    drawn by the referee, recorded with their policies, re-drawn by `arena verify`, and AIVAT is in the JSON."""
    import json
    import os
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[2]
    samples = repo / "sample_bots" / "python"
    env = {k: v for k, v in os.environ.items() if k != "ARENA_SEED"}
    db = tmp_path / "mixed.db"
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "match", "--bot", f"r={sys.executable} {samples}/random_bot.py --mixed",
         "--bot", f"c={caller_bot()}", "--hands", "40", "--db", str(db),
         "--match-id", "g", "--json"], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = {row["name"]: row for row in json.loads(proc.stdout)["results"]}
    assert rows["r"]["aivat"]["mbb_per_hand"] is not None and rows["r"]["violations"] == 0
    database = Database(db, read_only=True)
    drawn = [d for r in queries.hand_records(database, "g") for d in r.decisions if d.participant == 0]
    assert drawn and all(d.policy for d in drawn)
    assert verify_match(database, "g").ok
    database.close()
