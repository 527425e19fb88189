"""The hand viewer's own replay (static/hand.js, run here by Node.js) held to the reference, arena.publish.hands.
hand_steps (itself held to the engine): every hand of the sample site's data files, and a hand with side pots,
gives the same states step for step (text, street, actor, pot, main and side pots, stacks, bets, board, folds,
cards shown); the hand it decodes is the record's (cards, seats, stacks, estimates); and a damaged line is refused
with a message that says what is wrong, never shown as a wrong hand.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

import arena.publish
from arena.cards import format_cards
from arena.engine import Action, ActionKind, EventKind, Hand, TableConfig
from arena.publish.hands import hand_steps
from arena.publish.match_data import CALLBACK, pack_hand
from arena.ratings.estimators import Estimator, adjusted_payoffs
from arena.records import queries
from arena.referee import HandRecord
from tests.publish.conftest import Site

NODE = shutil.which("node")
HAND_JS = Path(arena.publish.__file__).resolve().parent / "static" / "hand.js"
DRIVER = """
const viewer = require(process.argv[1]);
const cases = JSON.parse(require("fs").readFileSync(0, "utf8"));
const out = cases.map(([block, line]) => {
  try {
    const hand = viewer.decode(block, line);
    return {hand, steps: viewer.replay(hand)};
  } catch (e) {
    if (e instanceof viewer.DataError) { return {error: e.message}; }
    throw e;
  }
});
process.stdout.write(JSON.stringify(out));
"""

pytestmark = pytest.mark.skipif(NODE is None, reason="Node.js is not installed (make install puts it there)")


def node(cases: list[tuple[dict[str, Any], str]]) -> list[dict[str, Any]]:
    """Decode and replay each (block, line) with hand.js; each a {hand, steps} or an {error}."""
    assert NODE is not None
    proc = subprocess.run([NODE, "-e", DRIVER, str(HAND_JS)], input=json.dumps(cases), capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    out: list[dict[str, Any]] = json.loads(proc.stdout)
    return out


def read_block(path: Path) -> dict[str, Any]:
    """A data file's block (the argument of its one call)."""
    text = path.read_text(encoding="utf-8")
    assert text.startswith(f"{CALLBACK}(") and text.endswith(");\n"), text[:80]
    block: dict[str, Any] = json.loads(text[len(CALLBACK) + 1:-3])
    return block


def test_every_published_hand_replays_as_the_reference(site: Site) -> None:
    cases: list[tuple[dict[str, Any], str]] = []
    expected: list[tuple[HandRecord, dict[str, Any]]] = []
    for path in sorted(site.out.glob("matches/*/data-*.js")):
        block = read_block(path)
        records = {r.hand_number: r for r in queries.hand_records(site.db, block["match"])}
        for line in block["hands"]:
            record = records[int(line.split("|", 1)[0])]
            cases.append((block, line))
            expected.append((record, block))
    assert len(cases) == 24 + 18 + 20 + 4  # every hand shown: the running match's last deal is withheld
    for (record, block), got in zip(expected, node(cases), strict=True):
        assert "error" not in got, got
        names = [block["bots"][p] for p in record.seating]
        reference = [step.to_json() for step in hand_steps(record, names)]
        assert got["steps"] == reference, (block["match"], record.hand_number)
        hand = got["hand"]
        assert (hand["number"], hand["deal"], hand["rotation"], hand["button"]) == (
            record.hand_number, record.deal, record.rotation, record.button)
        assert hand["seating"] == list(record.seating) and hand["stacks"] == list(record.starting_stacks)
        shown = {e.seat for e in record.events if e.kind is EventKind.SHOW}
        assert hand["holes"] == [format_cards(h) if block["finished"] or seat in shown else None
                                 for seat, h in enumerate(record.hole)]
        for estimator, key in ((Estimator.ALLIN, "allin"), (Estimator.AIVAT, "aivat")):
            figures = adjusted_payoffs(site.db, block["match"], estimator).get(record.hand_number)
            if figures is None or not block["finished"]:
                assert hand[key] is None
            else:
                assert hand[key] == pytest.approx(figures, abs=0.051)


def side_pot_record() -> HandRecord:
    """Three players all-in with different stacks: a main pot and a side pot (R10.1), the rest returned."""
    config = TableConfig(small_blind=50, big_blind=100)
    hand = Hand(config, [1_000, 3_000, 6_000], list(range(52)), button=0)
    while not hand.is_over:
        legal = hand.legal_actions()
        hand.act(legal.seat, Action(ActionKind.RAISE, legal.max_raise_to) if legal.can_raise
                 else Action(ActionKind.CALL))
    return HandRecord(
        match_id="m", table_id="t", hand_id="m-0", hand_number=7, deal=3, rotation=1, seating=(2, 0, 1),
        button=0, config=config, starting_stacks=hand.starting_stacks, deck=tuple(range(52)),
        hole=tuple(hand.hole), board=tuple(hand.board), events=tuple(hand.events),
        payoffs=tuple(hand.payoffs or ()), final_stacks=tuple(hand.stacks), names=("a", "b", "c"))


BLOCK: dict[str, Any] = {"bots": ["a", "b", "c"], "stack": 10_000}


def test_side_pots_and_a_hand_without_estimates() -> None:
    record = side_pot_record()
    line = pack_hand(record, True, 10_000)
    [got] = node([(BLOCK, line)])
    names = [BLOCK["bots"][p] for p in record.seating]
    reference = [step.to_json() for step in hand_steps(record, names)]
    assert any(step["pots"] for step in reference)  # the side pot is there to be shown
    assert got["steps"] == reference
    assert got["hand"]["allin"] is None and got["hand"]["aivat"] is None


def test_a_damaged_line_is_refused_with_what_is_wrong() -> None:
    record = side_pot_record()
    good = pack_hand(record, True, 10_000)
    fields = good.split("|")
    raise_to = next(e for e in record.events if e.kind is EventKind.RAISE)
    cheated = good.replace(f"r{raise_to.seat}{raise_to.amount}", f"r{raise_to.seat}{raise_to.amount + 1}", 1)
    acted = next(k for k, token in enumerate(fields[6].split(" ")) if token[0] in "fxcbr")  # an action's token
    damaged = {
        "|".join(fields[:5]): "fields, not 7 or more",
        "|".join([*fields[:3], "29", *fields[4:]]): "does not name the match's bots",
        "|".join([*fields[:2], "7", *fields[3:]]): "is not a seat",
        "|".join([*fields[:5], "AsKd", *fields[6:]]): "not two cards a seat",
        "|".join([*fields[:6], fields[6] + " z9", *fields[7:]]): 'event "z9" cannot be read',
        "|".join([*fields[:6], fields[6] + " c7100", *fields[7:]]): "names no seat of the table",
        cheated: "its events end with",
        "|".join([*fields[:7], "1,2"]): "all-in EV figures",
        "|".join([*fields[:7], "", "", "0:on a blind"]): "names no action of the hand",
        "|".join([*fields[:7], "", "", f"{acted}:a", f"{acted}:b"]): "names no action of the hand, or one twice",
        "|".join([*fields[:7], "", "", f"{acted}:50%"]): "has a broken escape",
        "|".join([*fields[:7], "", "", "a comment"]): "is not k:text",
    }
    got = node([(BLOCK, line) for line in damaged])
    for (line, expected), result in zip(damaged.items(), got, strict=True):
        assert "error" in result and expected in result["error"], (line, result)
    [ok] = node([(BLOCK, good)])  # the positive control: the same line undamaged replays
    assert "error" not in ok and ok["steps"][-1]["stacks"] == list(record.final_stacks)
