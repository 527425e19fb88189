"""Build the static site: ``index.html`` (leaderboard, method, plots, matches), ``leaderboard.json``, a page per
bot (``bots/<slug>.html``) and per match (``matches/<slug>.html``), SVG plots under ``plots/`` and ``style.css``.

Every page is rendered by Jinja2 with autoescaping on (bot names and match ids are user input) and links only
relatively, so the folder works from ``file://`` and from any static host. A manifest of the files written lets a
later run remove pages of bots or matches that are gone, without ever touching files it did not write.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2

from arena import __version__
from arena.publish import formatting
from arena.publish.slugs import unique_slugs
from arena.ratings.leaderboard import Leaderboard, MatchSummary, Row, build_leaderboard, flag_text, leaderboard_json
from arena.ratings.stats import WinRate
from arena.records.db import Database
from arena.referee.status import MatchStatus

MANIFEST = ".arena-publish.json"
DEFAULT_TITLE = "arena leaderboard"


@dataclass(frozen=True, slots=True)
class PublishResult:
    """What ``publish`` wrote: the index page, every file (relative to the output folder), and the leaderboard."""

    index: Path
    files: tuple[str, ...]
    board: Leaderboard


@dataclass(frozen=True, slots=True)
class MatchBot:
    """One participant of a match, as its page shows it."""

    name: str
    slug: str
    net: int
    mbb_per_hand: float | None


@dataclass(frozen=True, slots=True)
class HandLine:
    """One hand of a match: payoffs in participant order."""

    number: int
    deal: int
    rotation: int
    board: list[formatting.Card]
    payoffs: list[int]


@dataclass(slots=True)
class MatchPage:
    """Everything a match page shows."""

    summary: MatchSummary
    slug: str
    seed: str | None
    finished_at: float | None
    blinds: str
    structure: str
    bots: list[MatchBot]
    hands: list[HandLine] = field(default_factory=list)
    withheld: int = 0


@dataclass(frozen=True, slots=True)
class HeadToHead:
    """A bot's result against one opponent."""

    opponent: str
    rate: WinRate


@dataclass(frozen=True, slots=True)
class BotMatch:
    """A match from one bot's side."""

    match: MatchPage
    net: int
    mbb_per_hand: float | None
    opponents: list[str]


def environment() -> jinja2.Environment:
    """The Jinja2 environment: templates from the package, autoescaping always on, undefined names an error."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("arena.publish", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    filters: dict[str, Callable[..., Any]] = {
        "fixed": formatting.fixed,
        "signed": formatting.signed,
        "chips": formatting.chips,
        "count": formatting.count,
        "percent": formatting.percent,
        "ci": formatting.ci,
        "timestamp": formatting.timestamp,
    }
    env.filters.update(filters)
    return env


def _mbb(net: int, big_blind: int, hands: int) -> float | None:
    return 1000.0 * net / big_blind / hands if hands else None


def match_page(db: Database, summary: MatchSummary, slug: str) -> MatchPage:
    """A match's page data. The seed is shown only once the match is over; while it runs, the hands of a deal
    whose rotations are not all played yet are withheld (the same cards are still to come in other seats).
    """
    row = db.match_row(summary.match_id)
    assert row is not None
    spec = db.match_spec(summary.match_id)
    config = spec.config
    finished = MatchStatus(row["status"]).over
    results = db.hand_results(summary.match_id)
    rotations_seen: dict[int, set[int]] = {}
    for hand in results:
        rotations_seen.setdefault(hand.deal, set()).add(hand.rotation)
    needed = spec.hands_per_deal(len(summary.bots))
    hands = []
    for hand in results:
        if finished or len(rotations_seen[hand.deal]) >= needed:
            payoffs = [0] * len(summary.bots)
            for seat, participant in enumerate(hand.seating):
                payoffs[participant] = hand.payoffs[seat]
            hands.append(HandLine(hand.hand_number, hand.deal, hand.rotation, formatting.cards(hand.board), payoffs))
    bots = [
        MatchBot(name, "", net, _mbb(net, config.big_blind, summary.hands))
        for name, net in zip(summary.bots, summary.net, strict=True)
    ]
    blinds = f"{config.small_blind:,}/{config.big_blind:,}" + (f", ante {config.ante:,}" if config.ante else "")
    return MatchPage(
        summary=summary, slug=slug, seed=row["seed"] if finished else None, finished_at=row["finished_at"],
        blinds=blinds, structure=config.structure.name.replace("_", "-").lower(), bots=bots, hands=hands,
        withheld=len(results) - len(hands),
    )


class _Writer:
    """Writes files under the output folder and remembers them for the manifest."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.files: list[str] = []

    def path(self, relative: str) -> Path:
        self.files.append(relative)
        target = self.out / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        return target

    def text(self, relative: str, content: str) -> None:
        self.path(relative).write_text(content, encoding="utf-8")


def _remove_stale(out: Path, written: list[str]) -> None:
    """Delete files an earlier run wrote (per its manifest) that this run did not write again."""
    manifest = out / MANIFEST
    try:
        previous = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if not isinstance(previous, list):
        return
    root = out.resolve()
    keep = set(written)
    for relative in previous:
        if not isinstance(relative, str) or relative in keep:
            continue
        target = (out / relative).resolve()
        if root in target.parents and target.is_file():  # never outside the site, whatever the manifest says
            target.unlink()


def publish(
    db: Database, out: str | Path, title: str = DEFAULT_TITLE, board: Leaderboard | None = None,
    live_site: bool = False,
) -> PublishResult:
    """Write the site for every match of ``db`` into ``out`` (created if needed) and return what was written;
    ``live_site``: the pages are served by a league host, next to its live page (``league.html``)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    board = board if board is not None else build_leaderboard(db)
    writer = _Writer(out)
    env = environment()

    ranked = [row.bot for row in board.rows]
    unrated = sorted({bot for m in board.matches for bot in m.bots} - set(ranked))
    bots = ranked + unrated
    bot_slugs = unique_slugs(bots)
    match_slugs = unique_slugs(m.match_id for m in board.matches)
    rows: dict[str, Row] = {row.bot: row for row in board.rows}
    from arena.publish import plots  # matplotlib is heavy: loaded only when a site is built

    palette = plots.colors(bots)

    matches = [match_page(db, m, match_slugs[m.match_id]) for m in board.matches]
    for page in matches:
        page.bots = [MatchBot(b.name, bot_slugs[b.name], b.net, b.mbb_per_hand) for b in page.bots]

    writer.text("leaderboard.json", json.dumps(leaderboard_json(board), indent=2, sort_keys=False) + "\n")
    writer.text("style.css", resources.files("arena.publish").joinpath("static/style.css").read_text("utf-8"))

    figures: dict[str, str | None] = {
        "rating": "plots/rating.svg",
        "winrate": "plots/winrate.svg",
        "crosstable": "plots/crosstable.svg",
    }
    drawn = {
        "rating": plots.rating_plot(board.history, ranked, out / "plots/rating.svg", palette,
                                    board.system.estimate_label),
        "winrate": plots.winrate_plot([(row.bot, row.win_rate) for row in board.rows], out / "plots/winrate.svg"),
        "crosstable": plots.crosstable_plot(board.crosstable, ranked, out / "plots/crosstable.svg"),
    }
    for name, ok in drawn.items():
        if ok:
            writer.files.append(f"plots/{name}.svg")
        else:
            figures[name] = None

    common = {"title": title, "generated": board.generated_at, "version": __version__, "bot_slugs": bot_slugs,
              "sections": bool(matches), "system": board.system, **({"live_site": True} if live_site else {})}
    hands = sum(m.hands for m in board.matches)
    writer.text("index.html", env.get_template("index.html").render(
        root="", rows=board.rows, sessions=board.sessions, matches=matches, figures=figures, hands=hands,
        bots=bots, unrated={bot: flag_text(f) for bot, f in board.unrated.items()}, **common,
    ))

    bot_template = env.get_template("bot.html")
    for bot in bots:
        slug = bot_slugs[bot]
        plot: str | None = f"plots/bots/{slug}.svg"
        if plots.rating_plot(board.history, [bot], out / f"plots/bots/{slug}.svg", palette,
                             board.system.estimate_label):
            writer.files.append(f"plots/bots/{slug}.svg")
        else:
            plot = None
        against = board.crosstable.get(bot, {})
        h2h = [HeadToHead(other, against[other]) for other in bots if other in against]
        played = []
        for page in matches:
            if bot in page.summary.bots:
                i = page.summary.bots.index(bot)
                played.append(BotMatch(page, page.bots[i].net, page.bots[i].mbb_per_hand,
                                       [b for b in page.summary.bots if b != bot]))
        writer.text(f"bots/{slug}.html", bot_template.render(
            root="../", bot=bot, row=rows.get(bot), plot=plot, h2h=h2h, played=played, **common,
        ))

    match_template = env.get_template("match.html")
    for page in matches:
        writer.text(f"matches/{page.slug}.html", match_template.render(root="../", match=page, **common))

    _remove_stale(out, writer.files)
    (out / MANIFEST).write_text(json.dumps(sorted(writer.files), indent=1) + "\n", encoding="utf-8")
    return PublishResult(out / "index.html", tuple(writer.files), board)
