"""The record is evidence (issue 25): a finished match edited in any field that matters fails ``arena verify``, which
names the first hand and field that differ; a match cut short and edited before ``--resume`` is refused, naming what
differs. Positive controls: the untouched record passes, and each edit really changes what the record says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.records import LedgerError, RecordsDamaged, evidence, queries
from arena.records.db import Database
from arena.records.evidence import canonical, chain_link, commitment_of, final_hash, part_digests
from arena.records.ledger import Ledger
from arena.records.verify import verify_match
from arena.referee import MatchKind, MatchStatus
from tests.records.evidence_helpers import BOTS, copy, edit, record, spec

M = "match_id = 'ev'"
FIRST = "(SELECT rowid FROM {table} WHERE " + M + " AND {where} ORDER BY hand_number{order} LIMIT 1)"


def first(table: str, where: str, order: str = "") -> str:
    """The rowid of the first row of ``table`` (by hand) that matches ``where``."""
    return FIRST.format(table=table, where=where, order=order)


def hand_at(position: str) -> str:
    """The number of the hand written at ``position`` in the chain (an SQL expression: 1, or the last)."""
    return f"(SELECT hand_number FROM hands WHERE {M} AND chain_index = {position})"


def delete_hand(number: str, match: str = M) -> tuple[str, ...]:
    """Every row of a hand, the ``hands`` row last (``number`` may be a query on it)."""
    return tuple(f"DELETE FROM {table} WHERE {match} AND hand_number = {number}"
                 for table in ("actions", "hand_seats", "violations", "hands"))


LAST = f"(SELECT MAX(chain_index) FROM hands WHERE {M})"
BOB = "(SELECT id FROM bots WHERE name = 'bob')"
CALL = first("actions", "kind = 'CALL'")
LAST_CALL = first("actions", "kind = 'CALL'", ", seq DESC")
RAISE = first("actions", "kind IN ('BET', 'RAISE')")
TIMEOUT = first("actions", "how = 'timeout'")
DECISION = first("actions", "how IS NOT NULL")
REJECTED = first("actions", "rejected IS NOT NULL")
MIXED = first("actions", "policy IS NOT NULL")
ALICE = "(SELECT id FROM bots WHERE name = 'alice')"

EDITS: dict[str, tuple[tuple[str, ...], str]] = {
    # who played
    "names swapped": ((f"UPDATE match_bots SET bot_id = CASE participant WHEN 0 THEN {BOB} ELSE {ALICE} END "
                       f"WHERE {M}",), "participants"),
    "a version": (("UPDATE bots SET version = '9.9' WHERE name = 'bob'",), "participants"),
    "seats": ((f"UPDATE hand_seats SET participant = 1 - participant WHERE {M} AND hand_number = 3",),
              "hand 3: the seats"),
    # the cards
    "hole cards": ((f"UPDATE hand_seats SET hole = 'AsAh' WHERE {M} AND hand_number = 2 AND seat = 0",),
                   "hand 2: the cards"),
    "board": ((f"UPDATE hands SET board = '2c3c4c5c6c' WHERE {M} AND hand_number = 4",), "hand 4: the cards"),
    "deck": ((f"UPDATE hands SET deck = substr(deck, 3) || substr(deck, 1, 2) WHERE {M} AND hand_number = 5",),
             "hand 5: the cards"),
    # every action and how it was taken
    "call to fold": ((f"UPDATE actions SET kind = 'FOLD' WHERE rowid = {CALL}",),
                     ": the actions"),
    "an amount": ((f"UPDATE actions SET amount = amount + 100 WHERE rowid = "
                   f"{RAISE}",), ": the actions"),
    "timeout relabelled ok": ((f"UPDATE actions SET how = 'ok' WHERE rowid = {TIMEOUT}",),
                              ": the decisions (how each was taken"),
    "elapsed ms": ((f"UPDATE actions SET elapsed_ms = 1.0 WHERE rowid = {DECISION}",),
                   ": the decisions (how each was taken"),
    "rejections erased": ((f"UPDATE actions SET rejected = NULL WHERE rowid = "
                           f"{REJECTED}",), ": the decisions (how each was taken"),
    "mixed policy": ((f"UPDATE actions SET policy = '[[\"CALL\", 0, 1.0]]' WHERE rowid = "
                      f"{MIXED}",), ": the decisions (how each was taken"),
    "an action row deleted": ((f"DELETE FROM actions WHERE rowid = {LAST_CALL}",),
                              ": the actions"),
    "violations deleted": ((f"DELETE FROM violations WHERE {M}",), ": the violations"),
    # chips and time
    "a payoff": ((f"UPDATE hand_seats SET payoff = payoff + 50 WHERE {M} AND hand_number = 5 AND seat = 1",),
                 "hand 5: the payoffs"),
    "a final stack": ((f"UPDATE hand_seats SET final_stack = final_stack - 50 WHERE {M} AND hand_number = 6 AND "
                       "seat = 0",), "hand 6: the payoffs"),
    "a starting stack": ((f"UPDATE hand_seats SET starting_stack = 9000 WHERE {M} AND hand_number = 7 AND seat = 0",),
                         "hand 7: the seats"),
    "a timing": ((f"UPDATE hands SET started_at = started_at - 60 WHERE {M} AND hand_number = 8",),
                 "hand 8: the timings"),
    # the hands recorded
    "first hand deleted": (delete_hand(hand_at("1")), "the hand written 1st is not there"),
    "a middle hand deleted": (delete_hand(hand_at("6")), "the hand written 6th is not there"),
    "last hand deleted": (delete_hand(hand_at(LAST)), "the final hash recorded does not match"),
    # the schedule and the end
    "hands_total up": (("UPDATE matches SET hands_total = 1000 WHERE id = 'ev'",), "schedule.hands_total"),
    "hands_total down": (("UPDATE matches SET hands_total = 6 WHERE id = 'ev'",), "schedule.hands_total"),
    "status back to running": (("UPDATE matches SET status = 'running' WHERE id = 'ev'",), "the status was changed"),
    "an outcome": ((f"UPDATE match_bots SET outcome = 'crashed', detail = 'crashed' WHERE {M} AND participant = 1",),
                   "the final hash recorded does not match"),
    "the seed": (("UPDATE matches SET seed = 'another' WHERE id = 'ev'",), "R1.3: the seed does not match"),
    "the table": (("UPDATE matches SET config = replace(config, '\"big_blind\": 100', '\"big_blind\": 200') "
                   "WHERE id = 'ev'",), "schedule.table"),
    "the starting stack": (("UPDATE matches SET starting_stack = 20000 WHERE id = 'ev'",), "schedule.starting_stack"),
    "the duplicate plan": (("UPDATE matches SET duplicate = 0 WHERE id = 'ev'",), "schedule.duplicate"),
    "the commitment": (("UPDATE matches SET commitment = '" + "ab" * 32 + "' WHERE id = 'ev'",),
                       "the commitment is not the hash of the document"),
    # the chain itself
    "a link": ((f"UPDATE hands SET chain = '{'cd' * 32}' WHERE {M} AND chain_index = 3",),
               "the hash chain breaks here"),
    "a hand's digests": ((f"UPDATE hands SET digests = replace(digests, substr(digests, 1, 4), 'ffff') WHERE {M} AND "
                          "chain_index = 4",), "differ from what was written"),
    "the final hash": (("UPDATE matches SET final_hash = '" + "ef" * 32 + "' WHERE id = 'ev'",),
                       "the final hash recorded does not match"),
}


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("evidence") / "ev.db"
    record(path)
    return path


def test_the_untouched_record_passes_and_holds_what_the_edits_change(finished: Path) -> None:
    db = Database(finished, read_only=True)
    check = verify_match(db, "ev")
    assert check.ok and check.hands == 12 and check.chained and check.final_hash, check.problems
    hows = {e.how for e in queries.player_events(db, "ev") if e.how is not None}
    assert {"ok", "timeout"} <= hows  # the edits below have their targets: time-outs, rejections, mixed actions
    records = list(queries.hand_records(db, "ev"))
    assert any(d.rejected for r in records for d in r.decisions) and any(d.policy for r in records for d in r.decisions)
    assert sum(queries.violation_counts(db, "ev").values()) > 0
    info = queries.require(db, "ev")
    assert info.final_hash == check.final_hash and info.commitment_version == 2
    db.close()


@pytest.mark.parametrize("what", EDITS)
def test_verify_catches_every_edit_and_names_it(finished: Path, tmp_path: Path, what: str) -> None:
    statements, named = EDITS[what]
    path = copy(finished, tmp_path / "edited.db")
    before = path.read_bytes()
    edit(path, *statements)
    assert path.read_bytes() != before, f"{what}: the edit changed nothing"  # positive control
    check = verify_match(Database(path, read_only=True), "ev")
    assert not check.ok, what
    assert named in check.problems[0], (what, check.problems)


def test_the_cli_says_fail_names_the_hand_and_shows_the_evidence_it_checked(finished: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    good = runner.invoke(main, ["verify", "--db", str(finished)])
    assert good.exit_code == 0 and "commitment version 2" in good.output and "final hash" in good.output, good.output
    path = copy(finished, tmp_path / "edited.db")
    edit(path, *EDITS["timeout relabelled ok"][0])
    bad = runner.invoke(main, ["verify", "--db", str(path)])
    assert bad.exit_code == 1 and "FAIL  ev" in bad.output and "the decisions (how each was taken" in bad.output
    assert bad.exception is None or isinstance(bad.exception, SystemExit)


def _rechain(path: Path) -> None:
    """Recompute every digest, link and the final hash after an edit, as a careful forger would."""
    db = Database(path)
    info = queries.require(db, "ev")
    rows = {r.number: r for r, _ in queries.hand_rows(db, "ev")}
    order = [n for _, n in sorted((p.position, r.number) for r, p in queries.hand_rows(db, "ev"))]
    link = info.commitment
    with db.transaction():
        for number in order:
            digests = part_digests(rows[number])
            link = chain_link(link, number, digests)
            db.write("hands", "UPDATE hands SET digests = ?, chain = ? WHERE match_id = 'ev' AND hand_number = ?",
                     (".".join(digests), link, number))
        outcomes = [tuple(r) for r in db.rows("match_bots", "SELECT participant, outcome, detail FROM match_bots "
                                              "WHERE match_id = 'ev' ORDER BY participant")]
        db.write("matches", "UPDATE matches SET final_hash = ? WHERE id = 'ev'",
                 (final_hash(info.commitment, link, len(order), info.status.value, outcomes, []),))
    db.close()


def test_a_consistent_rewrite_of_the_whole_chain_is_caught_by_the_published_final_hash(
        finished: Path, tmp_path: Path) -> None:
    published = queries.require(Database(finished, read_only=True), "ev").final_hash
    path = copy(finished, tmp_path / "forged.db")
    edit(path, f"UPDATE hand_seats SET payoff = payoff + 50 WHERE {M} AND hand_number = 5 AND seat = 1",
         f"UPDATE hand_seats SET payoff = payoff - 50 WHERE {M} AND hand_number = 5 AND seat = 0")
    _rechain(path)
    db = Database(path, read_only=True)
    alone = verify_match(db, "ev")  # the chain and the final hash now hold: only the re-deal can see the payoffs
    assert not any("chain" in p or "final hash" in p for p in alone.problems), alone.problems
    against = verify_match(db, "ev", final=published)
    assert not against.ok and "not the published" in against.problems[0], against.problems
    runner = CliRunner()
    out = runner.invoke(main, ["verify", "--db", str(path), "--match", "ev", "--final", published])
    assert out.exit_code == 1 and "not the published" in out.output
    assert runner.invoke(main, ["verify", "--db", str(finished), "--match", "ev", "--final", published]).exit_code == 0


def test_the_commitment_is_the_documented_hash_of_the_schedule_and_participants(finished: Path) -> None:
    info = queries.require(Database(finished, read_only=True), "ev")
    document = json.loads(info.committed)
    assert commitment_of(document) == info.commitment
    assert document["participants"] == [["alice", "1.0"], ["bob", "2.0"]]
    assert document["schedule"]["hands_total"] == 12 and document["schedule"]["starting_stack"] == 10_000
    assert canonical(document).decode() == info.committed


def test_canonical_json_is_json_dumps_with_its_settings_whichever_encoder_writes_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The digests' JSON text, from the encoder's C core made once, is the standard encoder's (sorted keys, no
    spaces, UTF-8 unescaped, a damaged value written by ``_foreign``), byte for byte, and so without the C core."""
    values = [
        [0, 1, "table-1-r0.1", 3, None], {"b": [1.5, -0.0, 1e300, 7.000000000000001], "a": {"z": True, "y": False}},
        ["Ω名 \u2028\x00\"quote\\", "", [[], {}]], [[4, "ok", 6.867088000035437, 1, None, None, "pre-flop: junk"]],
        [b"\x00\xff", bytearray(b"ab")], 2**70, -(2**63), 3.141592653589793,
    ]
    expected = [json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                           default=evidence._foreign).encode() for v in values]
    assert [canonical(v) for v in values] == expected
    monkeypatch.setattr(evidence, "_C_ENCODE", None)
    assert [canonical(v) for v in values] == expected


# ------------------------------------------------------------------------------------ resume verifies before it plays


@pytest.fixture(scope="module")
def cut(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cut") / "cut.db"
    record(path, stop_after=8)  # eight hands recorded, then the referee died: still running, its seed in the vault
    return path


RESUME_EDITS: dict[str, tuple[tuple[str, ...], str]] = {
    "a middle hand deleted": (delete_hand(hand_at("3")), "the hand written 3rd is not there"),
    "hands_total down": (("UPDATE matches SET hands_total = 8 WHERE id = 'ev'",), "schedule.hands_total"),
    "hands_total up": (("UPDATE matches SET hands_total = 1000 WHERE id = 'ev'",), "schedule.hands_total"),
    "names swapped": (EDITS["names swapped"][0], "participants"),
    "call to fold": (EDITS["call to fold"][0], ": the actions"),
    "timeout relabelled ok": (EDITS["timeout relabelled ok"][0], ": the decisions"),
    "violations deleted": (EDITS["violations deleted"][0], ": the violations"),
    "a payoff": ((f"UPDATE hand_seats SET payoff = payoff + 50 WHERE {M} AND hand_number = 2 AND seat = 1",),
                 "hand 2: the payoffs"),
    "the seed column": (("UPDATE matches SET seed = 'another' WHERE id = 'ev'",), "its seed was published"),
    "the table": (EDITS["the table"][0], "schedule.table"),
    "the starting stack": (EDITS["the starting stack"][0], "schedule.starting_stack"),
    "the commitment": (EDITS["the commitment"][0], "the commitment is not the hash"),
    "a link": ((f"UPDATE hands SET chain = '{'cd' * 32}' WHERE {M} AND chain_index = 2",), "the hash chain breaks"),
}


def _vault(path: Path, seed: str) -> None:
    for name in (path.name + ".seeds", path.name + ".seeds.bak"):
        (path.parent / name).write_text(json.dumps({"ev": seed}))


@pytest.mark.parametrize("what", [*RESUME_EDITS, "the vault's seed"])
def test_a_resume_is_refused_when_the_record_was_edited(cut: Path, tmp_path: Path, what: str) -> None:
    path = copy(cut, tmp_path / "cut.db")
    if what == "the vault's seed":
        _vault(path, "another seed")
        named = "does not match the commitment"
    else:
        statements, named = RESUME_EDITS[what]
        edit(path, *statements)
    db = Database(path)
    with pytest.raises((RecordsDamaged, LedgerError)) as refused:
        Ledger(db).open(spec(), BOTS, resume=True)
    assert named in str(refused.value), (what, str(refused.value))
    assert queries.require(db, "ev").status is MatchStatus.RUNNING  # nothing was played or changed


def test_an_untouched_cut_match_resumes_and_a_changed_request_is_refused(cut: Path, tmp_path: Path) -> None:
    path = copy(cut, tmp_path / "cut.db")
    db = Database(path)
    with pytest.raises(LedgerError, match="another schedule: hands"):
        Ledger(db).open(spec(hands=20), BOTS, resume=True)
    with pytest.raises(LedgerError, match="dealt from another seed"):
        Ledger(db).open(spec().__class__(**{**_fields(spec()), "seed": "other"}), BOTS, resume=True)
    entry = Ledger(db).open(spec(), BOTS, resume=True)
    assert entry.played == frozenset(queries.recorded_hands(db, "ev")) and len(entry.played) >= 8


def _fields(value: object) -> dict[str, object]:
    return {name: getattr(value, name) for name in value.__dataclass_fields__}  # type: ignore[attr-defined]


def test_arena_match_resume_refuses_an_edited_record_with_status_5_before_any_bot_starts(
        cut: Path, tmp_path: Path) -> None:
    path = copy(cut, tmp_path / "cut.db")
    edit(path, *delete_hand(hand_at("4")))
    bots = [arg for b in BOTS for arg in ("--bot", f"{b.name}@{b.version}=false")]
    out = CliRunner().invoke(main, ["match", *bots, "--db", str(path), "--match-id", "ev", "--resume",
                                    "--per-action-ms", "40", "--time-bank-ms", "0", "--max-retries", "1",
                                    "--max-violations", "0", "--no-sandbox"])
    assert out.exit_code == 5, out.output
    assert "records damaged" in out.output and "the hand written 4th is not there" in out.output
    assert out.exception is None or isinstance(out.exception, SystemExit)


def test_a_league_host_restarting_on_an_edited_record_refuses_to_start_with_status_5(tmp_path: Path) -> None:
    """At a restart the host ends the matches its death left running as interrupted and publishes their seeds: it
    verifies them first (the untouched case is tests/league/test_host.py's SIGKILL and restart)."""
    path = tmp_path / "league.db"
    record(path, "lg-000001", stop_after=6, kind=MatchKind.LEAGUE, event="lg")
    league = "match_id = 'lg-000001'"
    edit(path, *delete_hand(f"(SELECT hand_number FROM hands WHERE {league} AND chain_index = 2)", league))
    (tmp_path / "league.toml").write_text('name = "lg"\ngrpc = "127.0.0.1:0"\nhttp = "off"\nhands = 12\n')
    out = CliRunner().invoke(main, ["host", str(tmp_path / "league.toml"), "--db", str(path)])
    assert out.exit_code == 5, out.output
    assert "records damaged" in out.output and "the hand written 2nd is not there" in out.output
    info = queries.require(Database(path, read_only=True), "lg-000001")
    assert info.status is MatchStatus.RUNNING and not info.seed  # not ended, its seed not published


def test_the_evidence_format_is_pinned() -> None:
    """The digests, a chain link and a final hash of a fixed hand, as the first schema-5 code made them: a
    recorded match is verified by recomputing them, so any change to how they are made (the canonical JSON's
    floats, None, non-ASCII text, key order) would fail every match recorded before it."""
    from arena.records.codec import HandRows

    rows = HandRows(
        hand=(7, 3, 1, "table-1.2", 1, "AsKd2c3h", "2c3h4d", 1796462653.362305, 1796462653.5, None),
        seats=((0, 1, "AsKd", 20000, -150, 19850), (1, 0, "QhQc", 20000, 150, 20150)),
        actions=(
            (0, 0, 0, "POST_SMALL_BLIND", 50, "", 0, -1, None, None, None, None, None, None),
            (1, 0, 1, "POST_BIG_BLIND", 100, "", 0, -1, None, None, None, None, None, None),
            (2, 0, 0, "RAISE", 300, "", 0, -1, "ok", 0.013671000488102436, 7001, '["R7.2: too small"]',
             '[["RAISE", 300, 0.5], ["CALL", 0, 0.5]]', "café ♠ — a note"),
            (3, 0, 1, "FOLD", 0, "", 0, -1, "timeout", 2000.0, 7002, None, None, None),
        ),
        violations=((1, "timeout", ""), (0, "illegal", "R7.2: too small")),
    )
    digests = part_digests(rows)
    assert digests == ("ce2ea4c2ba153f3d8f906e9625c4063f", "09e9db9db66923388bc517126cb04a97",
                       "f602e33e2dd32a636f95236a36971be7", "93bb65bafa4de9e988edfd47cfc8fe45",
                       "7b18065aac0b3b573ae15f569e530bb9", "a2b2805125f8af29003cf8cee5833923",
                       "178fe752bfe978bc2ed9d1f0c165b484", "4a6ceb9c18f34bee78576ed5d819ac68")
    link = chain_link("c0ffee", 7, digests)
    assert link == "77dd5712a14af543a02c3f12c7a1877aff3827125a1a48980255f5a9a71f796d"
    outcomes = [(0, "finished", ""), (1, "forfeited", "timeouts")]
    assert final_hash("c0ffee", link, 1, "completed", outcomes, []) == \
        "cc822efd8c65bdc1311b33ee40a80760f7156a55e45f23fab0739fc933e48adf"
