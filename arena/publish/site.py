"""Build the static site: ``index.html`` (leaderboard, method, plots, matches), ``leaderboard.json``, a page per
bot (``bots/<slug>.html``) and per match (``matches/<slug>.html``, its hand table in pages of ``HANDS_PER_PAGE``),
one hand viewer (``hand.html`` and ``hand.js``) for every hand, reading each match's compact data
(``matches/<slug>/data-<block>.js``, arena.publish.match_data), SVG plots under ``plots/`` and ``style.css``.

Every page is rendered by Jinja2 with autoescaping on (bot names and match ids are user input) and links only
relatively, so the folder works from ``file://`` and from any static host. A manifest of the files written lets a
later run remove pages of bots or matches that are gone, without ever touching files it did not write, and keep a
finished match's files when nothing they show has changed: publishing again writes only what changed.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
import markupsafe

from arena import __version__
from arena.engine.units import mbb_per_hand
from arena.publish import formatting, match_data
from arena.publish.comparisons import comparison_page
from arena.publish.manifest import MANIFEST, Earlier, Writer, earlier_publish, manifest_of, remove_stale, reuse
from arena.ratings.blocks import DEFAULT_RULES, RatingRules
from arena.ratings.estimators import Estimator, adjusted_payoffs
from arena.ratings.leaderboard import (
    FLAG_WORDS,
    Leaderboard,
    MatchSummary,
    Row,
    build_leaderboard,
    flag_text,
    leaderboard_json,
)
from arena.ratings.sessions import bot_key
from arena.ratings.stats import WinRate
from arena.records import queries
from arena.records.db import Database
from arena.records.queries import MatchInfo
from arena.records.submissions import Submission, submissions
from arena.referee.status import MatchKind
from arena.text import unique_slugs, visible_controls

HANDS_PER_PAGE = 500  # rows of a match's hand table per page: about 150 KB of HTML
DEFAULT_TITLE = "arena leaderboard"
LIVE_DATA = "api/hands/{slug}/{block}.js"  # where a league host's viewer reads hands: its database (arena.league.web)


@dataclass(frozen=True, slots=True)
class PublishResult:
    """What ``publish`` wrote: the index page, every file (relative to the output folder), and the leaderboard."""

    index: Path
    files: tuple[str, ...]
    board: Leaderboard
    match_slugs: dict[str, str] = field(default_factory=dict)  # slug -> match id: what the viewer's links name
    reused: tuple[str, ...] = ()  # the finished matches (slugs) whose files were kept from an earlier publish


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
    board: str  # as stored (``AsKd7h``)
    payoffs: list[int]
    seating: tuple[int, ...] = ()  # the participant in each seat


@dataclass(frozen=True, slots=True)
class HandsPage:
    """One page of a match's hand table."""

    number: int  # 1-based
    path: str  # relative to the site's root
    hands: list[HandLine]


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
    settings: list[tuple[str, str]] = field(default_factory=list)
    kind: str = "match"
    event: str | None = None
    comparison: str | None = None  # the slug of the comparison page this match belongs to
    chips_plot: str | None = None
    finished: bool = False
    hands_per_deal: int = 1
    final_hash: str | None = None  # once it ended (arena.records.evidence): anyone can check it with arena verify
    commitment_version: int = 1
    data: match_data.MatchData | None = None  # what its data files carry (arena.publish.match_data)

    @property
    def pages(self) -> list[HandsPage]:
        """The hand table cut into pages of ``HANDS_PER_PAGE`` (the first on the match's own page)."""
        chunks = [self.hands[i:i + HANDS_PER_PAGE] for i in range(0, len(self.hands), HANDS_PER_PAGE)] or [[]]
        return [HandsPage(k + 1, self.page_path(k + 1), chunk) for k, chunk in enumerate(chunks)]

    def page_path(self, number: int) -> str:
        """Where page ``number`` of the hand table is, from the site's root."""
        return f"matches/{self.slug}.html" if number == 1 else f"matches/{self.slug}/hands-{number}.html"

    def page_of(self, position: int) -> int:
        """The page showing the hand at ``position`` in the table."""
        return position // HANDS_PER_PAGE + 1


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
    outcome: str = ""  # what went wrong for the bot in this match (crashed, no show...), empty if nothing
    best: HandLine | None = None  # the hand it won most in (a link to the viewer)
    worst: HandLine | None = None  # the hand it lost most in
    detail: str = ""  # how, in words, when something did (its exit status and last output, the violations...)


@dataclass(frozen=True, slots=True)
class BotProfile:
    """Who a bot is: its name and version, owner (a league's), language and command, its other versions, and what
    went wrong in its matches."""

    name: str
    version: str
    owner: str
    language: str
    command: str
    flags: dict[str, int]
    versions: list[tuple[str, Row | None]]  # every version of the same name (this one included), newest last
    games_per_hour: float | None  # league matches an hour, over the span it played in
    hosted: str = ""  # a league's hosted version: its archive, its failed matches, whether it is retired

    @property
    def flag_list(self) -> list[str]:
        """Each flag in words (``crashed in 2 matches``)."""
        return [f"{FLAG_WORDS[k]} in {n} match{'es' if n > 1 else ''}" for k, n in self.flags.items()
                if n and k in FLAG_WORDS]


def _hosted(submission: Submission | None) -> str:
    """A hosted version in words: its archive, its failed matches and the last reason, whether it is retired."""
    if submission is None:
        return ""
    words = f"submitted to the league, which runs it (archive {submission.sha256[:12]}, {submission.size:,} bytes)"
    if submission.failures:
        words += (f"; failed in {submission.failures} match{'es' if submission.failures > 1 else ''}, the last: "
                  f"{submission.last_failure}")
    if not submission.active:
        words += f"; retired: {submission.retired_reason}"
    return words


def _visible(value: Any) -> Any:
    """Every text a page shows has its control and direction characters made visible (arena.text), so a bot's
    name cannot reverse the text after it; markup made by the templates and filters is left as it is."""
    if isinstance(value, str) and not isinstance(value, markupsafe.Markup):
        return visible_controls(value)
    return value


def environment() -> jinja2.Environment:
    """The Jinja2 environment: templates from the package, autoescaping always on, undefined names an error."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("arena.publish", "templates"),
        autoescape=True,
        finalize=_visible,
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
        "cards_html": formatting.cards_html,
    }
    env.filters.update(filters)
    return env


def _mbb(net: int, big_blind: int, hands: int) -> float | None:
    return mbb_per_hand(net, big_blind, hands) if hands else None


def _settings(info: MatchInfo, policy: dict[str, Any], bots: int) -> list[tuple[str, str]]:
    """The match's settings as (label, value) lines."""
    config, seats = info.config, info.seats
    structure = config.structure.name.replace("_", "-").lower()
    out = [
        ("Game", f"{structure} hold'em, blinds {config.small_blind:,}/{config.big_blind:,}"
                 + (f", ante {config.ante:,} ({config.ante_mode.name.replace('_', ' ').lower()})" if config.ante
                    else "")),
        ("Starting stack", f"{info.starting_stack:,} chips, reset every hand"),
        ("Hands planned", f"{info.hands_total:,}"),
        ("Dealing", ("duplicate, " + ("every seat order" if info.all_orders else "every rotation")
                     if info.duplicate else "fresh decks (not duplicate)")
         + (f", {seats} seats a table" if seats and seats < bots else "")),
        ("Showdown", "every hand shown" if config.reveal_all else "losing hands may be mucked (R8.4)"),
    ]
    if config.structure.name == "FIXED_LIMIT":
        out.append(("Bets", f"{config.small_bet:,}/{config.big_bet:,}, cap {config.raise_cap}"))
    if policy:
        out.append(("Clock", f"{policy.get('per_action_ms', 0):,} ms an action, time bank "
                             f"{policy.get('time_bank_ms', 0):,} ms, {policy.get('max_retries', 0)} retries, "
                             f"forfeit after {policy.get('max_violations', 0)} violations (0: never)"))
    return out


def match_page(db: Database, summary: MatchSummary, slug: str, block_hands: int = match_data.BLOCK_HANDS) -> MatchPage:
    """A match's page data. The seed is shown only once the match is over; while it runs, the hands of a deal
    whose rotations are not all played yet are withheld (the same cards are still to come in other seats).
    """
    info = queries.require(db, summary.match_id)
    spec = info.spec(info.seed)
    config = spec.config
    results = queries.hand_results(db, summary.match_id)
    data = match_data.match_data(db, summary.match_id, slug, results, block_hands)
    shown = set(data.shown)
    hands = []
    for hand in results:
        if hand.hand_number in shown:
            payoffs = [0] * len(summary.bots)
            for seat, participant in enumerate(hand.seating):
                payoffs[participant] = hand.payoffs[seat]
            hands.append(HandLine(hand.hand_number, hand.deal, hand.rotation, hand.board, payoffs,
                                  hand.seating))
    bots = [
        MatchBot(name, "", net, _mbb(net, config.big_blind, summary.hands))
        for name, net in zip(summary.bots, summary.net, strict=True)
    ]
    blinds = f"{config.small_blind:,}/{config.big_blind:,}" + (f", ante {config.ante:,}" if config.ante else "")
    policy = asdict(spec.policy)
    return MatchPage(
        summary=summary, slug=slug, seed=info.seed if data.finished else None, finished_at=info.finished_at,
        blinds=blinds, structure=config.structure.name.replace("_", "-").lower(), bots=bots, hands=hands,
        withheld=len(results) - len(hands),
        settings=_settings(info, policy, len(summary.bots)),
        kind=info.kind.value, event=info.event, finished=data.finished, hands_per_deal=data.per_deal,
        final_hash=info.final_hash or None, commitment_version=info.commitment_version, data=data,
    )


def chip_series(db: Database, page: MatchPage) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Each bot's payoff per shown hand of a match, as dealt and AIVAT adjusted (arena.ratings.estimators)."""
    adjusted = adjusted_payoffs(db, page.summary.match_id, Estimator.AIVAT)
    names = [b.name for b in page.bots]
    raw: dict[str, list[float]] = {name: [] for name in names}
    ev: dict[str, list[float]] = {name: [] for name in names}
    for hand in page.hands:
        estimate = adjusted.get(hand.number)
        for participant, name in enumerate(names):
            raw[name].append(float(hand.payoffs[participant]))
            if estimate is not None and participant in hand.seating:
                ev[name].append(float(estimate[hand.seating.index(participant)]))
            else:
                ev[name].append(float(hand.payoffs[participant]))
    return raw, ev


_MATCH_SOURCES = ("templates/match.html", "templates/base.html", "templates/macros.html", "match_data.py",
                  "site.py", "plots.py", "formatting.py")


def _code() -> str:
    """The hash of the code that makes a match's files: a new version of it makes them again."""
    package = resources.files("arena.publish")
    return hashlib.sha256("".join(package.joinpath(f).read_text("utf-8") for f in _MATCH_SOURCES).encode()).hexdigest()


def _match_key(page: MatchPage, common: Mapping[str, Any], colors: list[Any]) -> str:
    """What a finished match's files depend on: the match, its hands, its bots' names and links, their colours, the
    site's title and navigation, and the code that makes them. The same key means the same files."""
    numbers = hashlib.sha256(",".join(str(h.number) for h in page.hands).encode()).hexdigest()
    data = {"match": page.summary.match_id, "slug": page.slug, "status": page.summary.status, "hands": numbers,
            "bots": [[b.name, b.slug, b.net] for b in page.bots], "colors": [list(c) for c in colors],
            "comparison": page.comparison, "title": common["title"], "version": common["version"],
            "live": "live_site" in common, "comparisons": common["has_comparisons"], "code": common["code"],
            "sizes": [HANDS_PER_PAGE, page.data.size if page.data else 0]}
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()


def write_match(db: Database, page: MatchPage, writer: Writer, env: jinja2.Environment, common: dict[str, Any],
                palette: Mapping[str, Any], data_files: bool = True, earlier: Earlier | None = None) -> bool:
    """A match's pages (the table of its hands in pages of ``HANDS_PER_PAGE``), its chip graph and, with
    ``data_files``, its hands for the viewer (``matches/<slug>/data-<block>.js``). A finished match's files are
    kept from ``earlier`` when nothing they show has changed; True if they were."""
    from arena.publish import plots  # matplotlib is heavy: loaded only when a site is built

    key = _match_key(page, common, [palette[b.name] for b in page.bots]) if page.finished else None
    if key is not None and earlier is not None and reuse(page.slug, writer, earlier, key):
        return True
    start = len(writer.files)
    if page.hands:
        raw, ev = chip_series(db, page)
        target = f"plots/matches/{page.slug}.svg"
        if plots.chips_plot([h.number for h in page.hands], raw, writer.out / target, ev, palette):
            writer.files.append(target)
            page.chips_plot = target
    template = env.get_template("match.html")
    pages = page.pages
    for hands_page in pages:
        inside = hands_page.number > 1  # later pages sit in the match's folder
        links = [(p.number, (f"../{page.slug}.html" if p.number == 1 else p.path.rsplit("/", 1)[1]) if inside
                  else p.path.removeprefix("matches/")) for p in pages]
        writer.text(hands_page.path, template.render(
            root="../../" if inside else "../", match=page, pages=pages, current=hands_page, page_links=links,
            **common,
        ))
    if data_files and page.data is not None:
        for block in match_data.blocks(db, page.data):
            writer.text(match_data.data_path(page.slug, block["block"]), match_data.script(block))
    if key is not None:
        writer.matches[page.slug] = (key, writer.files[start:])
    return False


def publish(
    db: Database, out: str | Path, title: str = DEFAULT_TITLE, board: Leaderboard | None = None,
    live_site: bool = False, match_ids: list[str] | None = None, reuse: str | Path | None = None,
    rules: RatingRules = DEFAULT_RULES, block_hands: int = match_data.BLOCK_HANDS,
    charts_from: str | Path | None = None,
) -> PublishResult:
    """Write the site for every match of ``db`` (or of ``match_ids``: one event) into ``out`` (created if needed)
    and return what was written; ``live_site``: the pages are served by a league host, next to its live page
    (``league.html``), and its viewer reads hands from the host's database (no data files are written). A finished
    match's files are kept from ``reuse``, an earlier site of the same database (by default ``out`` itself), when
    nothing they show has changed: publishing again writes only what changed. ``block_hands``: hand numbers a data
    file holds. ``charts_from``: an earlier site whose charts are kept as they are, where it has them (a league's
    live site redraws its charts less often than its pages: ``arena.league.web``)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    board = board if board is not None else build_leaderboard(db, match_ids, rules=rules)
    writer = Writer(out)
    env = environment()
    previous = earlier_publish(out)
    earlier = previous if reuse is None or Path(reuse).resolve() == out.resolve() else earlier_publish(Path(reuse))

    ranked = [row.bot for row in board.rows]
    unrated = sorted({bot for m in board.matches for bot in m.bots} - set(ranked))
    bots = ranked + unrated
    bot_slugs = unique_slugs(bots)
    match_slugs = unique_slugs(m.match_id for m in board.matches)
    rows: dict[str, Row] = {row.bot: row for row in board.rows}
    from arena.publish import plots  # matplotlib is heavy: loaded only when a site is built

    palette = plots.colors(bots)

    matches = [match_page(db, m, match_slugs[m.match_id], block_hands) for m in board.matches]
    for page in matches:
        page.bots = [MatchBot(b.name, bot_slugs[b.name], b.net, b.mbb_per_hand) for b in page.bots]

    writer.text("leaderboard.json", json.dumps(leaderboard_json(board), indent=2, sort_keys=False) + "\n")
    for static in ("style.css", "hand.js"):
        writer.text(static, resources.files("arena.publish").joinpath(f"static/{static}").read_text("utf-8"))

    figures: dict[str, str | None] = {
        "rating": "plots/rating.svg",
        "winrate": "plots/winrate.svg",
        "crosstable": "plots/crosstable.svg",
    }

    def chart(target: str, draw: Callable[[Path], bool]) -> bool:
        """Draw the chart ``target`` (or keep the one ``charts_from`` has); whether there is one."""
        kept = Path(charts_from) / target if charts_from is not None else None
        if kept is not None and kept.is_file():
            (out / target).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(kept, out / target)
        elif not draw(out / target):
            return False
        writer.files.append(target)
        return True

    label = board.system.estimate_label
    drawn = {
        "rating": chart("plots/rating.svg", lambda path: plots.rating_plot(board.history, ranked, path, palette,
                                                                           label)),
        "winrate": chart("plots/winrate.svg", lambda path: plots.winrate_plot(
            [(row.bot, row.win_rate) for row in board.rows], path)),
        "crosstable": chart("plots/crosstable.svg", lambda path: plots.crosstable_plot(board.crosstable, ranked,
                                                                                       path)),
    }
    for name, ok in drawn.items():
        if not ok:
            figures[name] = None

    comparison_ids = sorted({p.event for p in matches if p.kind == MatchKind.COMPARE and p.event})
    comparison_slugs = unique_slugs(comparison_ids)
    for page in matches:
        if page.kind == MatchKind.COMPARE and page.event:
            page.comparison = comparison_slugs[page.event]
    comparisons = [comparison_page(db, cid, comparison_slugs[cid], match_slugs) for cid in comparison_ids]
    for comparison in comparisons:
        target = f"plots/comparisons/{comparison.slug}.svg"
        p = comparison.params
        if plots.llr_plot(comparison.llr_series, p.lower, p.upper, p.min_sessions, out / target):
            writer.files.append(target)
            comparison.plot = target

    common = {"title": title, "generated": board.generated_at, "version": __version__, "bot_slugs": bot_slugs,
              "sections": bool(matches), "system": board.system, "code": _code(),
              "has_comparisons": bool(comparisons), **({"live_site": True} if live_site else {})}
    hands = sum(m.hands for m in board.matches)
    writer.text("index.html", env.get_template("index.html").render(
        root="", rows=board.rows, sessions=board.sessions, matches=matches, figures=figures, hands=hands,
        comparisons=comparisons, games=board.games, rules=board.rules, consistency=board.consistency,
        bots=bots, unrated={bot: flag_text(f) for bot, f in board.unrated.items()}, **common,
    ))
    writer.text("hand.html", env.get_template("hand.html").render(
        root="", data_source=LIVE_DATA if live_site else match_data.DATA_PATH, block=block_hands,
        format=match_data.FORMAT, **common,
    ))

    infos = {bot_key(i.name, i.version): i for i in queries.bot_infos(db)}
    hosted = {(s.bot, s.version): s for s in submissions(db)}
    owners = queries.owners(db)
    recorded = queries.bot_outcomes(db, [m.match_id for m in board.matches])
    outcomes = {(o.match_id, bot_key(o.name, o.version)): o for o in recorded}
    names: dict[str, list[str]] = {}
    for bot in bots:
        info = infos.get(bot)
        names.setdefault(info.name if info else bot, []).append(bot)
    bot_template = env.get_template("bot.html")
    for bot in bots:
        slug = bot_slugs[bot]
        plot: str | None = f"plots/bots/{slug}.svg"

        def bot_chart(path: Path, bot: str = bot) -> bool:
            return plots.rating_plot(board.history, [bot], path, palette, label)

        if not chart(f"plots/bots/{slug}.svg", bot_chart):
            plot = None
        against = board.crosstable.get(bot, {})
        h2h = [HeadToHead(other, against[other]) for other in bots if other in against]
        played = []
        league_times: list[float] = []
        for page in matches:
            if bot in page.summary.bots:
                i = page.summary.bots.index(bot)
                outcome = outcomes.get((page.summary.match_id, bot))
                best, worst = _extremes(page, i)
                played.append(BotMatch(page, page.bots[i].net, page.bots[i].mbb_per_hand,
                                       [b for b in page.summary.bots if b != bot],
                                       FLAG_WORDS.get(outcome.outcome.value, "") if outcome else "", best, worst,
                                       outcome.detail if outcome else ""))
                if page.kind == MatchKind.LEAGUE:
                    league_times += [page.summary.created_at, page.finished_at or page.summary.created_at]
        info = infos.get(bot)
        name = info.name if info else bot
        span = (max(league_times) - min(league_times)) / 3600 if league_times else 0.0
        profile = BotProfile(
            name=name, version=info.version if info else "", owner=owners.get(name, ""),
            language=info.language if info else "", command=info.command if info else "",
            flags=rows[bot].flags if bot in rows else board.unrated.get(bot, {}),
            versions=[(key, rows.get(key)) for key in names.get(name, [bot])],
            games_per_hour=len(league_times) / 2 / span if span > 0 else None,
            hosted=_hosted(hosted.get((name, info.version if info else ""))),
        )
        writer.text(f"bots/{slug}.html", bot_template.render(
            root="../", bot=bot, row=rows.get(bot), plot=plot, h2h=h2h, played=played, profile=profile, **common,
        ))

    comparison_template = env.get_template("comparison.html")
    pages_by_id = {page.summary.match_id: page for page in matches}
    for comparison in comparisons:
        writer.text(f"comparisons/{comparison.slug}.html", comparison_template.render(
            root="../", c=comparison, pages=pages_by_id, **common))

    reused = [page.slug for page in matches
              if write_match(db, page, writer, env, common, palette, not live_site, earlier)]

    remove_stale(previous, writer.files)
    manifest = manifest_of(writer.files, writer.matches)
    (out / MANIFEST).write_text(json.dumps(manifest, separators=(",", ":")) + "\n", encoding="utf-8")
    return PublishResult(out / "index.html", tuple(writer.files), board,
                         {slug: match_id for match_id, slug in match_slugs.items()}, tuple(reused))


def _extremes(page: MatchPage, participant: int) -> tuple[HandLine | None, HandLine | None]:
    """The hand of a match a participant won most in, and the one it lost most in (None if it won or lost none)."""
    best = max(page.hands, key=lambda h: h.payoffs[participant], default=None)
    worst = min(page.hands, key=lambda h: h.payoffs[participant], default=None)
    return (best if best is not None and best.payoffs[participant] > 0 else None,
            worst if worst is not None and worst.payoffs[participant] < 0 else None)
