"""The published site: its files, its links, its escaping, its JSON, and the degenerate databases."""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import re
import shutil
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from click.testing import CliRunner
from matplotlib.container import ErrorbarContainer

from arena.cards import format_cards
from arena.cli.publish import publish as publish_command
from arena.engine import Action, ActionKind, EventKind, Hand, TableConfig
from arena.publish import formatting, plots, publish
from arena.publish.hands import HandStateError, hand_steps
from arena.publish.match_data import block_of, data_path, pack_events
from arena.publish.site import MANIFEST
from arena.ratings.leaderboard import build_leaderboard, leaderboard_json
from arena.ratings.stats import WinRate
from arena.ratings.system import RatingPoint
from arena.records import queries
from arena.records.db import Database
from arena.referee import ClockPolicy, HandRecord
from arena.text import slugify, unique_slugs
from tests.publish.conftest import BLOCK, TITLE, Compared, Site
from tests.publish.helpers import EVIL, SAMPLE_RULES, caller, cheat, play, raiser
from tests.publish.test_viewer_replay import read_block

ESCAPED_EVIL = "&lt;script&gt;alert(1)&lt;/script&gt;"


class Links(HTMLParser):
    """Every href and src of a page, and every id it defines."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("href", "src") and value is not None:
                self.urls.append(value)
            if name == "id" and value:
                self.ids.add(value)


def parse(page: Path) -> Links:
    links = Links()
    links.feed(page.read_text(encoding="utf-8"))
    return links


def data_hands(out: Path, slug: str, number: int) -> list[int]:
    """The hand numbers of the data file that holds hand ``number`` of match ``slug`` (none if it is missing)."""
    viewer = (out / "hand.html").read_text(encoding="utf-8")
    size = int(re.search(r'data-block="(\d+)"', viewer).group(1))  # type: ignore[union-attr]
    path = out / data_path(slug, block_of(number, size))
    if not path.is_file():
        return []
    return [int(line.split("|", 1)[0]) for line in read_block(path)["hands"]]


def check_links(out: Path) -> int:
    """Assert that every relative link of every page resolves to a file of the site (and its #fragment to an id,
    or, for the hand viewer, to a hand of a match's data); return how many links were checked.
    """
    checked = 0
    for page in out.rglob("*.html"):
        for url in parse(page).urls:
            parts = urlsplit(url)
            assert not parts.scheme and not parts.netloc, f"{page.name}: absolute link {url}"
            assert not parts.path.startswith("/"), f"{page.name}: root-relative link {url}"
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page.resolve()
            assert target.is_file(), f"{page.relative_to(out)}: {url} does not resolve"
            assert out.resolve() in target.parents, f"{page.name}: {url} leaves the site"
            if parts.fragment and target == (out / "hand.html").resolve():
                slug, number = parts.fragment.split("/")
                assert int(number) in data_hands(out, slug, int(number)), f"{page.name}: no hand {parts.fragment}"
            elif parts.fragment and target.suffix == ".html":
                assert parts.fragment in parse(target).ids, f"{page.name}: no #{parts.fragment} in {target.name}"
            checked += 1
    return checked


def test_files(site: Site) -> None:
    out = site.out
    board = site.result.board
    assert site.result.index == out / "index.html"
    for name in ("index.html", "leaderboard.json", "style.css", "plots/rating.svg", "plots/winrate.svg",
                 "plots/crosstable.svg"):
        assert (out / name).is_file(), name
    assert len(board.rows) == 3
    bots = sorted(p.name for p in (out / "bots").iterdir())
    assert bots == ["caller.html", "raiser-1.0.html", "script-alert-1-script.html"]
    assert len(list((out / "plots" / "bots").glob("*.svg"))) == 3
    matches = sorted(p.name for p in (out / "matches").glob("*.html"))
    assert matches == ["evil-vs-caller.html", "heads-up-1.html", "still-running.html", "three-way.html"]
    assert sorted(p.relative_to(out / "matches").as_posix() for p in (out / "matches").glob("*/*")) == [
        "evil-vs-caller/data-0.js", "evil-vs-caller/data-1.js", "heads-up-1/data-0.js", "heads-up-1/data-1.js",
        "heads-up-1/data-2.js", "still-running/data-0.js", "three-way/data-0.js", "three-way/data-1.js",
    ]  # a data file a block of ten hands (conftest.BLOCK), no page a hand
    assert (out / "hand.html").is_file() and (out / "hand.js").is_file()
    assert (out / "plots" / "matches" / "three-way.svg").is_file()
    manifest = json.loads((out / MANIFEST).read_text())
    files = manifest["files"]
    assert sorted(f"{d}/{n}" if d else n for d, names in files.items() for n in names) == sorted(site.result.files)
    assert sorted(manifest["matches"]) == ["evil-vs-caller", "heads-up-1", "three-way"]  # the finished ones
    assert len(site.result.files) == 30 and sum(p.stat().st_size for p in out.rglob("*") if p.is_file()) < 500_000
    for svg in out.rglob("*.svg"):
        ET.parse(svg)  # well-formed XML
        assert "<script" not in svg.read_text(encoding="utf-8").lower()


def test_links_resolve(site: Site) -> None:
    assert check_links(site.out) > 50


def test_json_is_leaderboard_json(site: Site) -> None:
    data = json.loads((site.out / "leaderboard.json").read_text(encoding="utf-8"))
    assert data == json.loads(json.dumps(leaderboard_json(site.result.board)))
    fresh = leaderboard_json(build_leaderboard(site.db))
    assert [r["bot"] for r in data["rows"]] == [r["bot"] for r in fresh["rows"]]


def test_user_input_is_escaped(site: Site) -> None:
    pages = list(site.out.rglob("*.html"))
    for page in pages:
        text = page.read_text(encoding="utf-8")
        if page.name == "hand.html":  # the viewer: its one local script, which loads the matches' data files
            assert re.findall(r"<script[^>]*>", text) == ['<script src="hand.js">'], page
            assert "script-src 'self'" in text
        else:
            assert "<script" not in text.lower(), f"{page.name} has a script element"
            assert "script-src 'none'" in text
        assert EVIL not in text
        assert "Test arena <&>" not in text
    index = (site.out / "index.html").read_text(encoding="utf-8")
    assert index.count(ESCAPED_EVIL) >= 2  # the leaderboard row and the matches list
    assert "<title>Test arena &lt;&amp;&gt; leaderboard</title>" in index
    bot_page = (site.out / "bots" / "script-alert-1-script.html").read_text(encoding="utf-8")
    assert f'<h1 class="bot-name">{ESCAPED_EVIL}</h1>' in bot_page
    match_page = (site.out / "matches" / "evil-vs-caller.html").read_text(encoding="utf-8")
    assert ESCAPED_EVIL in match_page


def test_index_content(site: Site) -> None:
    index = (site.out / "index.html").read_text(encoding="utf-8")
    board = site.result.board
    positions = [index.index(f"bots/{slug}.html") for slug in ("caller", "raiser-1.0", "script-alert-1-script")]
    order = {row.bot: row.rank for row in board.rows}
    ranked = [b for _, b in sorted(zip(positions, ("caller", "raiser@1.0", EVIL), strict=True))]
    assert [order[b] for b in ranked] == [1, 2, 3]
    for row in board.rows:
        assert formatting.fixed(row.rating["conservative"]) in index
        assert formatting.signed(row.win_rate.mean) in index
        assert formatting.ci(row.win_rate) in index
    assert "mu − 3σ ▼" in index and "95% CI" in index and "duplicate" in index
    assert ("Sorted by <strong>mu − 3σ</strong> (TrueSkill over blocks of duplicate deals, all fitted at once), "
            "highest first") in index
    assert "all the games at once" in index and "order in which games were played" in index
    assert "a rating game is a block of 3 consecutive duplicate deals of one match" in index
    assert 'id="order-check"' in index
    for svg in ("plots/rating.svg", "plots/winrate.svg", "plots/crosstable.svg"):
        assert f'src="{svg}"' in index
    for slug in ("heads-up-1", "three-way", "evil-vs-caller", "still-running"):
        assert f'href="matches/{slug}.html"' in index


def test_bot_page(site: Site) -> None:
    page = (site.out / "bots" / "caller.html").read_text(encoding="utf-8")
    row = next(r for r in site.result.board.rows if r.bot == "caller")
    assert formatting.fixed(row.rating["mu"]) in page
    assert 'src="../plots/bots/caller.svg"' in page
    assert 'href="../bots/raiser-1.0.html"' in page and ESCAPED_EVIL in page  # head to head
    for vs in site.result.board.crosstable["caller"].values():
        assert formatting.signed(vs.mean) in page
    for slug in ("heads-up-1", "three-way", "evil-vs-caller"):
        assert f'href="../matches/{slug}.html"' in page
    assert "still-running" not in page
    assert 'href="../index.html"' in page


def test_match_pages(site: Site) -> None:
    finished = (site.out / "matches" / "heads-up-1.html").read_text(encoding="utf-8")
    info = queries.require(site.db, "heads-up-1")
    assert info.commitment in finished and info.seed in finished and info.final_hash in finished
    assert finished.count('<tr><td><a href="../hand.html#heads-up-1/') == 24  # a row per hand, linked to the viewer
    assert 'class="card' in finished
    assert 'href="../index.html#matches"' in finished
    running = (site.out / "matches" / "still-running.html").read_text(encoding="utf-8")
    info = queries.require(site.db, "still running")
    assert info.commitment in running and not info.final_hash
    assert info.seed == ""  # not in the database before the match is over, only in the vault beside it
    seed = queries.match_seed(site.db, "still running")
    assert seed and seed not in running and "withheld until the match is over" in running
    assert "1 hand of the deal in play is withheld" in running


def test_empty_database(tmp_path: Path) -> None:
    db = Database(tmp_path / "empty.db")
    result = publish(db, tmp_path / "site")
    index = result.index.read_text(encoding="utf-8")
    assert "Nothing has been recorded yet" in index
    assert "<table" not in index
    assert not (tmp_path / "site" / "plots").exists()
    data = json.loads((tmp_path / "site" / "leaderboard.json").read_text(encoding="utf-8"))
    assert data == json.loads(json.dumps(leaderboard_json(result.board)))
    assert data["rows"] == [] and data["matches"] == []
    check_links(tmp_path / "site")


def test_one_session(tmp_path: Path) -> None:
    db = Database(tmp_path / "one.db")
    play(db, "only", [("a", "", caller), ("b", "", raiser)], hands=2)
    result = publish(db, tmp_path / "site")
    assert all(r.win_rate.sessions == 1 and math.isinf(r.win_rate.high) for r in result.board.rows)
    index = result.index.read_text(encoding="utf-8")
    assert f'<td class="num ci">{formatting.DASH}</td>' in index
    assert (tmp_path / "site" / "plots" / "winrate.svg").is_file()
    data = json.loads((tmp_path / "site" / "leaderboard.json").read_text(encoding="utf-8"))
    assert data["rows"][0]["ci95"] == [None, None]
    check_links(tmp_path / "site")


def test_running_match_without_session(tmp_path: Path) -> None:
    db = Database(tmp_path / "partial.db")
    play(db, "half", [("a", "", caller), ("b", "", raiser)], hands=4, finish=False, stop_after=1)
    result = publish(db, tmp_path / "site")
    assert result.board.rows == ()
    index = result.index.read_text(encoding="utf-8")
    assert "No complete duplicate session yet" in index and "matches/half.html" in index
    assert (tmp_path / "site" / "bots" / "a.html").is_file()  # unrated bots still get a page
    match = (tmp_path / "site" / "matches" / "half.html").read_text(encoding="utf-8")
    assert "No hand to show yet" in match and "1 hand of the deal in play is withheld" in match
    check_links(tmp_path / "site")


def test_republish_removes_only_its_stale_files(tmp_path: Path) -> None:
    out = tmp_path / "site"
    first = Database(tmp_path / "first.db")
    play(first, "m1", [("old-bot", "", caller), ("b", "", raiser)], hands=4)
    publish(first, out)
    (out / "notes.txt").write_text("mine")
    assert (out / "bots" / "old-bot.html").is_file()
    second = Database(tmp_path / "second.db")
    play(second, "m2", [("new-bot", "", caller), ("b", "", raiser)], hands=4)
    publish(second, out)
    assert not (out / "bots" / "old-bot.html").exists()
    assert not (out / "matches" / "m1.html").exists()
    assert (out / "bots" / "new-bot.html").is_file() and (out / "notes.txt").read_text() == "mine"
    check_links(out)


def test_slugs() -> None:
    names = ["Bot", "bot", "", "../../etc/passwd", "con", "a/b\\c", "日本語", ".hidden", "x" * 300, EVIL, "v@1.0"]
    slugs = unique_slugs(names)
    assert len(set(slugs.values())) == len(names)
    for slug in slugs.values():
        assert re.fullmatch(r"[a-z0-9][a-z0-9._-]{0,70}", slug), slug
        assert slug.split(".")[0] not in ("con", "")
    assert slugs["v@1.0"] == "v-1.0"
    assert slugify(EVIL) == "script-alert-1-script"
    assert unique_slugs(reversed(names)) == slugs  # independent of order


def test_formatting() -> None:
    assert formatting.signed(-4) == "−4.0"
    assert formatting.signed(1234.56) == "+1,234.6"
    assert formatting.fixed(-0.5, 2) == "−0.50"
    assert formatting.chips(-1500) == "−1,500" and formatting.chips(0) == "0" and formatting.chips(7) == "+7"
    assert formatting.percent(0.2345) == "23.4%" or formatting.percent(0.2345) == "23.5%"
    assert formatting.ci(WinRate(1.0, -2.0, 4.0, 3, 6, 1.0)) == "[−2.0, +4.0]"
    assert formatting.ci(WinRate(1.0, -math.inf, math.inf, 1, 2, 0.0)) == formatting.DASH
    assert [str(c) for c in formatting.cards("AsTd2c")] == ["A♠", "T♦", "2♣"]
    assert formatting.timestamp(0) == "1970-01-01 00:00 UTC"


def test_plots_degenerate_cases(tmp_path: Path) -> None:
    infinite = WinRate(50.0, -math.inf, math.inf, 1, 2, 0.0)
    finite = WinRate(-20.0, -60.0, 20.0, 5, 10, 30.0)
    fig = plots.winrate_figure([("$weird_name$", infinite), ("_hidden", finite)])
    assert fig is not None
    bars = [c for c in fig.axes[0].containers if isinstance(c, ErrorbarContainer)]
    assert len(bars) == 1  # one session: no bar
    assert plots.winrate_plot([("solo", infinite)], tmp_path / "w.svg")
    history = {"solo": [RatingPoint(1, 27.0, 6.0, 48.0)]}  # one point: a marker, no band to fill
    assert plots.rating_plot(history, ["solo"], tmp_path / "r.svg")
    assert not plots.rating_plot({}, ["solo"], tmp_path / "none.svg")
    assert not plots.crosstable_plot({"solo": {}}, ["solo"], tmp_path / "c.svg")
    assert plots.crosstable_plot({"a$": {"b_": finite}, "b_": {"a$": infinite}}, ["a$", "b_"], tmp_path / "c.svg")
    assert not plots.winrate_plot([], tmp_path / "none.svg")
    for svg in tmp_path.glob("*.svg"):
        ET.parse(svg)
    assert not (tmp_path / "none.svg").exists()


def test_cli(site: Site, tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(publish_command, ["--db", str(site.db.path), "--out", str(tmp_path / "s"),
                                             "--title", "CLI arena"])
    assert result.exit_code == 0, result.output
    index = (tmp_path / "s" / "index.html").resolve()
    assert str(index) in result.output
    assert "<title>CLI arena</title>" in index.read_text(encoding="utf-8")


@pytest.mark.parametrize("make", ["missing", "garbage"])
def test_cli_bad_database(tmp_path: Path, make: str) -> None:
    path = tmp_path / "nope.db"
    if make == "garbage":
        path.write_bytes(b"this is not sqlite at all" * 100)
    result = CliRunner().invoke(publish_command, ["--db", str(path), "--out", str(tmp_path / "s")])
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    assert isinstance(result.exception, SystemExit)  # click's clean exit, not an error escaping
    assert ("no database at" if make == "missing" else "is not an arena database") in result.output
    assert not path.exists() or make == "garbage"  # a missing database is not created


def test_hands_are_linked_to_the_viewer_and_carried_by_the_data(site: Site) -> None:
    match = (site.out / "matches" / "three-way.html").read_text(encoding="utf-8")
    blocks = [read_block(site.out / "matches" / "three-way" / f"data-{k}.js") for k in (0, 1)]
    for k, block in enumerate(blocks):
        assert (block["match"], block["slug"], block["block"], block["finished"], block["per_deal"]) == (
            "three-way", "three-way", k, True, 3)
        assert (block["first"], block["last"], block["size"]) == (0, 17, BLOCK)
        assert block["bots"] == ["caller", "raiser@1.0", EVIL]  # as the leaderboard names them
    lines = {int(line.split("|", 1)[0]): line.split("|") for block in blocks for line in block["hands"]}
    assert [int(line.split("|", 1)[0]) for line in blocks[1]["hands"]] == list(range(10, 18))
    for record in queries.hand_records(site.db, "three-way"):
        n = record.hand_number
        assert f'href="../hand.html#three-way/{n}"' in match  # linked from the match's table
        fields = lines[n]
        assert fields[1] == f"{record.deal}.{record.rotation}" and fields[5] == "".join(map(format_cards, record.hole))
        assert fields[6] == pack_events(record)  # every event: tests/publish/test_viewer_replay.py replays them
    assert sorted(lines) == list(range(18))


def test_running_match_hides_unshown_cards(site: Site) -> None:
    records = list(queries.hand_records(site.db, "still running"))
    block = read_block(site.out / "matches" / "still-running" / "data-0.js")
    assert len(records) == 5 and len(block["hands"]) == 4  # the fifth hand's deal is still to be played
    assert not block["finished"] and block["last"] == 3
    hidden = 0
    for record, line in zip(records, block["hands"], strict=False):
        fields = line.split("|")
        shown = {e.seat for e in record.events if e.kind is EventKind.SHOW}
        for seat, hole in enumerate(record.hole):
            if seat in shown:
                assert fields[5][4 * seat:4 * seat + 4] == format_cards(hole)
            else:
                hidden += 1
                assert fields[5][4 * seat:4 * seat + 4] == "????"
        assert len(fields) == 7  # no estimate while it runs: they are computed from every card
    assert hidden > 0  # the folder folds: its cards stay secret while the match runs
    text = (site.out / "matches" / "still-running" / "data-0.js").read_text(encoding="utf-8")
    assert format_cards(records[4].hole[0]) not in text  # nothing of the withheld hand


def test_comparison_page(compared: Compared) -> None:
    test = compared.test
    assert test.decided and test.verdict.value == "H1"
    page = (compared.out / "comparisons" / "cmp-1.html").read_text(encoding="utf-8")
    assert "H1 accepted: the candidate is better" in page
    state = test.state()
    assert f"{formatting.signed(state.llr, 2)} after {state.sessions} rounds (decided after {test.decided_at})" in page
    assert f"{formatting.count(state.hands)} used" in page
    assert f"{formatting.signed(state.estimate.mean, 1)} mbb/hand" in page
    assert (f"bounds {formatting.signed(test.params.lower, 2)} and {formatting.signed(test.params.upper, 2)}"
            in page)
    assert "arena compare --candidate &#39;raiser=python raiser.py&#39; --baseline &#39;folder=python folder.py&#39;" \
        in page and "--mbb1 200 " in page and "--stakes 50/100 --stack 10000 --id cmp-1" in page
    assert "arena compare --verify cmp-1 --db arena.db" in page
    assert 'src="../plots/comparisons/cmp-1.svg"' in page and 'href="../matches/cmp-1-h2h.html"' in page
    index = (compared.out / "index.html").read_text(encoding="utf-8")
    assert 'href="comparisons/cmp-1.html"' in index and 'id="comparisons"' in index
    match = (compared.out / "matches" / "cmp-1-h2h.html").read_text(encoding="utf-8")
    assert 'href="../comparisons/cmp-1.html"' in match
    svg = ET.parse(compared.out / "plots" / "comparisons" / "cmp-1.svg")
    assert svg.getroot().tag.endswith("svg")
    check_links(compared.out)


def test_bot_versions_and_flags(tmp_path: Path) -> None:
    db = Database(tmp_path / "flags.db")
    strict = ClockPolicy(max_retries=0, max_violations=2)
    play(db, "v1", [("multi", "1.0", caller), ("cheat", "", cheat)], hands=4, policy=strict)
    play(db, "v2", [("multi", "2.0", raiser), ("cheat", "", cheat)], hands=4, policy=strict)
    result = publish(db, tmp_path / "site")
    out = tmp_path / "site"
    cheat_page = (out / "bots" / "cheat.html").read_text(encoding="utf-8")
    assert '<span class="flag">forfeited in 2 matches</span>' in cheat_page
    assert cheat_page.count('<td class="outcome warn">forfeited<br><small class="detail">forfeited after 2 '
                            'violations</small></td>') == 2  # what happened, and how
    old = (out / "bots" / "multi-1.0.html").read_text(encoding="utf-8")
    assert 'id="versions"' in old and 'href="../bots/multi-2.0.html"' in old and "<strong>multi@1.0</strong>" in old
    rows = {r.bot: r for r in result.board.rows}
    assert formatting.fixed(rows["multi@2.0"].rating["conservative"]) in old  # each version with its own rating
    assert "<dt>Version</dt><dd>1.0</dd>" in old
    assert 'class="flag"' not in old
    check_links(out)


def test_cli_publishes_one_event_or_match(site: Site, compared: Compared, tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(publish_command, ["--db", str(site.db.path), "--out", str(tmp_path / "one"),
                                             "--match", "heads-up-1"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "one" / "matches").glob("*.html")) == ["heads-up-1.html"]
    assert sorted(p.name for p in (tmp_path / "one" / "bots").glob("*.html")) == ["caller.html", "raiser-1.0.html"]
    assert "<title>match heads-up-1</title>" in (tmp_path / "one" / "index.html").read_text(encoding="utf-8")
    result = runner.invoke(publish_command, ["--db", str(compared.db.path), "--out", str(tmp_path / "event"),
                                             "--tournament", "cmp-1"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "event" / "comparisons" / "cmp-1.html").is_file()
    assert "<title>cmp-1: leaderboard</title>" in (tmp_path / "event" / "index.html").read_text(encoding="utf-8")
    for args, message in ((["--tournament", "nope"], "no tournament, comparison or league 'nope'"),
                          (["--match", "nope"], "no match 'nope'"),
                          (["--match", "heads-up-1", "--tournament", "x"], "not both")):
        result = runner.invoke(publish_command, ["--db", str(site.db.path), "--out", str(tmp_path / "x"), *args])
        assert result.exit_code == 2 and message in result.output, result.output


def test_steps_show_side_pots_and_end_at_the_record() -> None:
    config = TableConfig(small_blind=50, big_blind=100)
    hand = Hand(config, [1_000, 3_000, 6_000], list(range(52)), button=0)
    while not hand.is_over:  # everyone all-in: a main pot and two side pots (R10.1)
        legal = hand.legal_actions()
        hand.act(legal.seat, Action(ActionKind.RAISE, legal.max_raise_to) if legal.can_raise
                 else Action(ActionKind.CALL))
    n = hand.num_seats
    record = HandRecord(
        match_id="m", table_id="t", hand_id="m-0", hand_number=0, deal=0, rotation=0, seating=tuple(range(n)),
        button=0, config=config, starting_stacks=hand.starting_stacks, deck=tuple(range(52)),
        hole=tuple(hand.hole), board=tuple(hand.board), events=tuple(hand.events),
        payoffs=tuple(hand.payoffs or ()), final_stacks=tuple(hand.stacks), names=("a", "b", "c"))
    steps = hand_steps(record)
    paid = [i for i, s in enumerate(steps) if "wins" in s.text]
    expected = tuple(p.amount for p in hand.pots())
    assert len(expected) == 2  # 3 x 1,000 and 2 x 2,000; the last 3,000 are uncalled and go back
    assert steps[paid[0] - 1].pots == expected and steps[paid[0] - 1].pot == sum(expected)
    assert steps[-1].stacks == tuple(hand.stacks) and steps[-1].pot == 0
    broken = dataclasses.replace(record, final_stacks=(0, 0, 10_000))
    with pytest.raises(HandStateError, match=r"R10\.5"):
        hand_steps(broken)


def test_republishing_writes_only_what_changed(site: Site, tmp_path: Path) -> None:
    first = tmp_path / "first"
    shutil.copytree(site.out, first)
    data = first / "matches" / "three-way" / "data-0.js"
    page = first / "matches" / "three-way.html"
    running = first / "matches" / "still-running" / "data-0.js"
    for path in (data, running):  # marked where a rewrite would undo it, and still a data file
        path.write_text(path.read_text(encoding="utf-8").replace("hold'em", "hold'em (kept)"), encoding="utf-8")
    page.write_text(page.read_text(encoding="utf-8") + "<!-- kept -->", encoding="utf-8")
    same = functools.partial(publish, site.db, rules=SAMPLE_RULES, block_hands=BLOCK)  # as the fixture's site
    again = same(first, TITLE)  # the same site again: a finished match's files stay
    assert sorted(again.reused) == ["evil-vs-caller", "heads-up-1", "three-way"]
    assert "(kept)" in data.read_text(encoding="utf-8") and page.read_text(encoding="utf-8").endswith("<!-- kept -->")
    assert "(kept)" not in running.read_text(encoding="utf-8")  # a running match's are made again
    second = tmp_path / "second"
    result = same(second, TITLE, reuse=first)  # a league's host: a fresh folder
    kept = second / "matches" / "three-way" / "data-0.js"
    assert "(kept)" in kept.read_text(encoding="utf-8") and kept.stat().st_nlink == 2  # a hard link
    assert "matches/three-way/data-0.js" in result.files and "three-way" in result.reused
    check_links(second)
    same(first, "Another title")  # anything a page shows changed: made again
    assert "<title>Match three-way · Another title</title>" in page.read_text(encoding="utf-8")
    assert "(kept)" not in data.read_text(encoding="utf-8")


def test_a_record_that_does_not_add_up_is_not_published(tmp_path: Path) -> None:
    db = Database(tmp_path / "bad.db")
    play(db, "m", [("a", "", caller), ("b", "", raiser)], hands=2)
    record = next(queries.hand_records(db, "m"))
    assert pack_events(record)  # the positive control: as recorded, it adds up
    broken = dataclasses.replace(record, final_stacks=(record.final_stacks[0] + 1, record.final_stacks[1] - 1))
    with pytest.raises(HandStateError, match=r"R10\.5"):
        pack_events(broken)


def test_charts_are_kept_from_an_earlier_site_where_it_has_them(site: Site, tmp_path: Path) -> None:
    """A league's live site redraws its charts less often than its pages (``charts_from``): a chart the earlier
    site has is kept as it is, one it lacks is drawn; without ``charts_from`` every chart is drawn."""
    earlier = tmp_path / "earlier"
    shutil.copytree(site.out, earlier)
    bot_charts = sorted((earlier / "plots" / "bots").glob("*.svg"))
    assert len(bot_charts) >= 2
    (earlier / "plots" / "rating.svg").write_text("<svg>kept</svg>", encoding="utf-8")
    missing = bot_charts[0].relative_to(earlier)
    bot_charts[0].unlink()
    same = functools.partial(publish, site.db, rules=SAMPLE_RULES, block_hands=BLOCK)
    kept = tmp_path / "kept"
    result = same(kept, TITLE, reuse=earlier, charts_from=earlier)
    assert (kept / "plots" / "rating.svg").read_text(encoding="utf-8") == "<svg>kept</svg>"
    assert (kept / missing).read_bytes() == (site.out / missing).read_bytes()  # drawn, as the fixture drew it
    assert "plots/rating.svg" in result.files and str(missing) in result.files
    check_links(kept)
    drawn = tmp_path / "drawn"
    same(drawn, TITLE, reuse=earlier)
    assert (drawn / "plots" / "rating.svg").read_bytes() == (site.out / "plots" / "rating.svg").read_bytes()
