"""Decision comments in the hand viewer: a finished match's data carries each comment as a field of its hand's line
beside the action it goes with (hand.js, run by Node.js, reads each back onto its event, and the replay is the
reference's still); a running match's data carries none; a hostile comment (``|``, ``%``, a line break,
``</script>``, ``<img onerror>``) neither breaks the line nor the data file, nor becomes markup in the page, each
defence shown to matter by switching it off; and in Chromium a finished hand shows its comments beside their actions
as text.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from arena.publish import match_data, publish
from arena.publish.hands import hand_steps
from arena.records import queries
from arena.records.db import Database
from arena.records.phh_sink import decision_comments
from arena.referee import HandRecord
from arena.text import comment
from tests.publish import browser
from tests.publish.chromium import Chromium
from tests.publish.conftest import TITLE
from tests.publish.helpers import caller, commenting, play, raiser
from tests.publish.test_viewer_replay import node, read_block

HOSTILE = "50% | a %7C b\nforged|line </script><img src=x onerror=top.pwned=1>"
TEXTS = ("pot odds # 4:1", HOSTILE, "value, thin")
CLEAN = [comment(t) for t in TEXTS]  # as the referee stores them (the line break shown as \x0a)


@dataclasses.dataclass(frozen=True)
class Talk:
    db: Database
    out: Path


@pytest.fixture(scope="module")
def talk(tmp_path_factory: pytest.TempPathFactory) -> Talk:
    """A finished match (``talk``) and a running one (``talk-live``) in which one bot comments on every action, and
    their published site."""
    root = tmp_path_factory.mktemp("comments")
    db = Database(root / "arena.db")
    bots = [("talker", "", commenting(raiser, TEXTS)), ("caller", "", caller)]
    play(db, "talk", bots, hands=6)
    play(db, "talk-live", bots, hands=10, finish=False, stop_after=5)
    out = root / "site"
    publish(db, out, TITLE)
    return Talk(db, out)


def expected_comments(record: HandRecord) -> dict[int, str]:
    """A hand's comments by the index of their event's token in its line (the hole cards dealt are one token)."""
    tokens = match_data.token_indexes(record)
    return {tokens[index]: text for index, text in decision_comments(record).items()}


def decoded_comments(got: dict[str, Any]) -> dict[int, str]:
    """The comments hand.js set on a decoded hand's events, by event index."""
    return {k: e["comment"] for k, e in enumerate(got["hand"]["events"]) if "comment" in e}


def blocks_of(talk: Talk, slug: str) -> list[dict[str, Any]]:
    return [read_block(p) for p in sorted(talk.out.glob(f"matches/{slug}/data-*.js"))]


def test_a_finished_matchs_comments_are_read_back_onto_their_actions(talk: Talk) -> None:
    [block] = blocks_of(talk, "talk")
    assert block["finished"] and block["format"] == match_data.FORMAT == 2
    records = {r.hand_number: r for r in queries.hand_records(talk.db, "talk")}
    got = node([(block, line) for line in block["hands"]])
    assert len(got) == len(records) == 6
    said = 0
    for line, result in zip(block["hands"], got, strict=True):
        assert "error" not in result, (line, result)
        record = records[result["hand"]["number"]]
        expected = expected_comments(record)
        assert decoded_comments(result) == expected and expected
        said += len(expected)
        for k in expected:  # each beside an action of the talker's
            assert result["hand"]["events"][k]["kind"] in "fxcbr"
            assert record.seating[result["hand"]["events"][k]["seat"]] == 0
        names = [block["bots"][p] for p in record.seating]
        assert result["steps"] == [s.to_json() for s in hand_steps(record, names)]  # the replay is untouched
    texts = {t for r in got for t in decoded_comments(r).values()}
    assert texts == set(CLEAN) and said > len(CLEAN)  # the hostile one among them, to the character


def test_a_running_matchs_data_has_no_comment(talk: Talk) -> None:
    [block] = blocks_of(talk, "talk-live")
    assert not block["finished"] and len(block["hands"]) == 4  # the fifth hand's deal is still in play
    records = {r.hand_number: r for r in queries.hand_records(talk.db, "talk-live")}
    assert all(decision_comments(records[n]) for n in range(4))  # the talker did comment
    assert all(len(line.split("|")) == 7 for line in block["hands"])  # no estimate, no comment
    text = (talk.out / match_data.data_path("talk-live", 0)).read_text(encoding="utf-8")
    assert not any(match_data.escape_comment(c) in text for c in CLEAN) and "pot odds" not in text
    got = node([(block, line) for line in block["hands"]])
    assert all("error" not in r and decoded_comments(r) == {} for r in got)
    # the positive control: the same hand packed as a finished match's carries them
    assert len(match_data.pack_hand(records[0], True, 10_000).split("|")) > 9


def hostile_record(talk: Talk) -> HandRecord:
    """A hand of the finished match with the hostile comment on one of its actions."""
    return next(r for r in queries.hand_records(talk.db, "talk") if comment(HOSTILE) in decision_comments(r).values())


def block_of_one(record: HandRecord) -> dict[str, Any]:
    return {"bots": ["talker", "caller"], "stack": 10_000, "finished": True,
            "hands": [match_data.pack_hand(record, True, 10_000)]}


def test_a_hostile_comment_does_not_break_the_line(talk: Talk, monkeypatch: pytest.MonkeyPatch) -> None:
    record = hostile_record(talk)
    block = block_of_one(record)
    line = block["hands"][0]
    assert "\n" not in line and "50%25 %7C a %257C b\\x0aforged%7Cline" in line
    [got] = node([(block, line)])
    assert comment(HOSTILE) in decoded_comments(got).values()
    # switched off, the comment's | splits it into fields that are no comment (and its % are broken escapes)
    monkeypatch.setattr(match_data, "_COMMENT_UNSAFE", match_data.re.compile("(?!)"))
    bare = match_data.pack_hand(record, True, 10_000)
    [broken] = node([(block, bare)])
    assert len(bare.split("|")) > len(line.split("|")) and "error" in broken, broken  # the hand cannot be shown


def test_a_comment_edited_into_the_records_is_cleaned_again(talk: Talk, monkeypatch: pytest.MonkeyPatch) -> None:
    record = hostile_record(talk)
    raw = "\u202eline\nbreak"  # a direction override and a line break, as an edited database might hold them
    edited = dataclasses.replace(record, decisions=[dataclasses.replace(d, comment=raw if d.comment else "")
                                                    for d in record.decisions])
    [got] = node([(block_of_one(edited), match_data.pack_hand(edited, True, 10_000))])
    assert set(decoded_comments(got).values()) == {"\\u202eline\\x0abreak"}
    monkeypatch.setattr(match_data, "comment", lambda text: text)  # switched off: the raw characters go through
    [bare] = node([(block_of_one(edited), match_data.pack_hand(edited, True, 10_000))])
    assert set(decoded_comments(bare).values()) == {raw}


class _Inline(HTMLParser):
    """What an HTML parser makes of a data file's text put inside a ``<script>`` element: its tags, the script."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.script = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        if self.tags == ["script"]:
            self.script += data


def inline(text: str) -> _Inline:
    parser = _Inline()
    parser.feed(f"<!doctype html><script>{text}</script>")
    parser.close()
    return parser


def test_a_hostile_comment_cannot_end_a_script_or_open_a_tag(talk: Talk, monkeypatch: pytest.MonkeyPatch) -> None:
    block = block_of_one(hostile_record(talk))
    text = match_data.script(block)
    assert not {"<", ">", "&"} & set(text) and "\\u003c/script\\u003e" in text
    parsed = inline(text)
    assert parsed.tags == ["script"] and parsed.script == text  # the whole file is the one script
    monkeypatch.setattr(match_data, "_SCRIPT_UNSAFE", {})  # switched off: the comment ends the script, opens an img
    parsed = inline(match_data.script(block))
    assert parsed.tags == ["script", "img"] and parsed.script != match_data.script(block)


SHOW = """
const d = await shown(f[0], "Hand %d");
const items = [...d.querySelectorAll("#streets li")];
const said = items.map(li => { const q = li.querySelector("q.comment");
  return q ? [li.firstChild.textContent, q.textContent, q.firstElementChild.tagName] : null; });
const at = items.findIndex(li => li.querySelector("q.comment")), step = d.getElementById("step-comment");
for (let i = 0; i < at; i++) { key(f[0], "ArrowRight"); }
const stepped = [step.hidden, step.textContent];
key(f[0], "Home");
const before = [step.hidden, step.textContent];
const hostile = said.find(s => s && s[1].includes("<img"));
await sleep(300);
const pwned = !!top.pwned;
const control = new DOMParser().parseFromString(hostile[1], "text/html");  /* the same text read as HTML (inert) */
const l = await shown(f[1], "Hand 0");
return {said, stepped, before, images: d.querySelectorAll("img").length, pwned,
        control: control.querySelectorAll("img[onerror]").length, live: l.querySelectorAll("#streets q.comment").length,
        liveStep: l.getElementById("step-comment").hidden};
"""


@pytest.fixture(scope="module")
def served(talk: Talk) -> Iterator[str]:
    with browser.serve(talk.out) as base:
        yield base


def test_the_viewer_shows_a_finished_hands_comments_as_text(talk: Talk, chromium: Chromium,
                                                            served: str) -> None:
    record = hostile_record(talk)
    n = record.hand_number
    got = browser.probe(chromium, served, talk.out, "probe-comments.html",
                        f'<iframe src="hand.html#talk/{n}" width="1000" height="800"></iframe>'
                        '<iframe src="hand.html#talk-live/0" width="1000" height="800"></iframe>', SHOW % n)
    steps = hand_steps(record, [["talker", "caller"][p] for p in record.seating])
    said = decision_comments(record)
    expected = [[step.text, said[step.event], "BDI"] if step.event in said and i > 0 else None
                for i, step in enumerate(steps)]
    assert got["said"] == expected and comment(HOSTILE) in said.values()
    first = next(e for e in expected if e)
    assert got["stepped"] == [False, first[1]] and got["before"] == [True, ""]  # beside the step it goes with
    assert got["images"] == 0 and not got["pwned"]  # shown as text: no element, no handler ran
    assert got["control"] == 1  # the positive control: the same text set as HTML is an img element
    assert got["live"] == 0 and got["liveStep"]  # a running match's hand: none (its data has none)
