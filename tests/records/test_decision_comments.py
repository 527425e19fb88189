"""Decision comments (proto Action.comment) in the records: cleaned as they arrive, stored with their action, read
back in the typed records, covered by the hash chain, exported as PHH comments that PokerKit and arena still replay,
and written into a finished match's published data beside their actions (tests/publish/test_viewer_comments.py:
not into a running match's, and shown by the viewer as text)."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

from click.testing import CliRunner

from arena.cli import main
from arena.engine import Action, ActionKind
from arena.publish import match_data
from arena.records import queries
from arena.records.db import Database
from arena.records.ledger import Ledger
from arena.records.phh import load, loads
from arena.records.phh_sink import decision_comments
from arena.records.replay import replay_result
from arena.records.verify import verify_match
from arena.referee import Answer, Decision, FunctionSeat, HandRecord, Match, MatchSpec
from arena.runner.bots import BotSpec
from arena.text import COMMENT_MAX
from arena.transport import convert
from arena_sdk.pb import poker_pb2
from tests.publish.test_viewer_replay import read_block
from tests.records.test_phh_pokerkit import pokerkit_replay

RAW = ("pot odds # 4:1", "  blank ends  ", "\x1b[31mred\x1b[0m\nforged line", "\u202edesrever", "x" * 500, "")


def commenter() -> FunctionSeat:
    """Calls (or checks), each action with the next of RAW as its comment, as the wire delivers it."""
    texts = itertools.cycle(RAW)

    def choose(decision: Decision) -> Answer:
        legal = decision.view.legal
        assert legal is not None
        kind = poker_pb2.ACTION_KIND_CHECK if legal.can_check else poker_pb2.ACTION_KIND_CALL
        return convert.action_from_pb(poker_pb2.Action(kind=kind, comment=next(texts)))

    return FunctionSeat("talker", choose)


def raiser(decision: Decision) -> Action:
    legal = decision.view.legal
    assert legal is not None
    if legal.can_raise and decision.view.street == 0:
        return Action(ActionKind.RAISE, legal.min_raise_to)
    return Action(ActionKind.CHECK) if legal.can_check else Action(ActionKind.CALL)


def play(db: Database, hands: int = 8) -> list[HandRecord]:
    spec = MatchSpec("talk", "comments-seed", hands)
    seats = [("talker", commenter()), ("raiser", FunctionSeat("raiser", raiser))]
    entry = Ledger(db).open(spec, [BotSpec(n, "") for n, _ in seats])
    entry.finish(asyncio.run(Match(spec, seats, [entry]).run()))
    return list(queries.hand_records(db, "talk"))


def test_comments_are_cleaned_stored_read_back_and_covered_by_the_chain(tmp_path: Path) -> None:
    db = Database(tmp_path / "c.db")
    records = play(db)
    comments = [d.comment for r in records for d in r.decisions if d.comment]
    assert "pot odds # 4:1" in comments and "blank ends" in comments
    assert "\\x1b[31mred\\x1b[0m\\x0aforged line" in comments and "\\u202edesrever" in comments
    assert "x" * (COMMENT_MAX - 1) + "…" in comments
    assert all(len(c) <= COMMENT_MAX and c.isprintable() for c in comments)
    assert all(d.comment == "" for r in records for d in r.decisions if r.names[d.seat] == "raiser")
    talker = [d.comment for r in records for d in r.decisions if r.names[d.seat] == "talker"]
    assert "" in talker  # the empty comment is none
    assert verify_match(db, "talk").ok
    with db.transaction():  # the record is evidence: an edited comment breaks the hand's digests
        db.conn.execute("UPDATE actions SET comment = 'I never said that' WHERE comment = 'blank ends'")
    problems = verify_match(db, "talk").problems
    assert problems and "the decisions (how each was taken" in problems[0], problems


def test_comments_are_exported_as_phh_comments_that_pokerkit_replays(tmp_path: Path) -> None:
    db = Database(tmp_path / "c.db")
    records = play(db)
    db.close()
    out = tmp_path / "phh"
    result = CliRunner().invoke(main, ["export", "--db", str(tmp_path / "c.db"), "--phh", str(out)])
    assert result.exit_code == 0, result.output
    files = sorted(out.rglob("*.phh"))
    assert len(files) == len(records)
    lines = [line for f in files for line in load(f).actions]
    assert any(line.endswith(" cc # pot odds # 4:1") for line in lines), lines[:20]
    assert any(line.endswith(" # \\x1b[31mred\\x1b[0m\\x0aforged line") for line in lines)
    for path in files:
        text = path.read_text(encoding="utf-8")
        theirs, finishing = pokerkit_replay(text)  # PokerKit loads and replays it strictly, comments skipped
        assert theirs == finishing
        replay = replay_result(loads(text))  # and arena's own reader replays it to the record's stacks
        assert replay.ok, replay


def test_a_finished_matchs_published_data_carries_its_comments(tmp_path: Path) -> None:
    db = Database(tmp_path / "c.db")
    records = play(db, hands=2)
    db.close()
    result = CliRunner().invoke(main, ["publish", "--db", str(tmp_path / "c.db"), "--out", str(tmp_path / "site")])
    assert result.exit_code == 0, result.output
    [data] = (tmp_path / "site" / "matches").rglob("data-*.js")
    lines = read_block(data)["hands"]
    assert len(lines) == 2
    for record, line in zip(records, lines, strict=True):  # k:text after the nine fields, k the action's token
        tokens = match_data.token_indexes(record)
        expected = [f"{tokens[i]}:{match_data.escape_comment(c)}" for i, c in sorted(decision_comments(record).items())]
        assert expected and line.split("|")[9:] == expected
    assert any("pot odds # 4:1" in line for line in lines)
    # a running match's data has none, and the viewer shows them as text: tests/publish/test_viewer_comments.py
