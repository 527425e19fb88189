"""Build the static site: ``index.html`` (leaderboard, method, plots, matches), ``leaderboard.json``, a page per
bot (``bots/<slug>.html``) and per match (``matches/<slug>.html``), SVG plots under ``plots/`` and ``style.css``.

Every page is rendered by Jinja2 with autoescaping on (bot names and match ids are user input) and links only
relatively, so the folder works from ``file://`` and from any static host. A manifest of the files written lets a
later run remove pages of bots or matches that are gone, without ever touching files it did not write.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
import markupsafe

from arena import __version__
from arena.engine.units import mbb_per_hand
from arena.publish import formatting
from arena.publish.comparisons import comparison_page
from arena.publish.hands import HandView, hand_view
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

MANIFEST = ".arena-publish.json"
HANDS_KEY = "hands.key"  # beside a finished match's hand pages: what they were made from (see _hands_key)
HANDS_PER_PAGE = 500  # rows of a match's hand table per page: about 150 KB of HTML
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
    seating: tuple[int, ...] = ()  # the participant in each seat

    @property
    def href(self) -> str:
        """The hand's page, relative to the match's folder."""
        return f"hand-{self.number}.html"


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


def match_page(db: Database, summary: MatchSummary, slug: str) -> MatchPage:
    """A match's page data. The seed is shown only once the match is over; while it runs, the hands of a deal
    whose rotations are not all played yet are withheld (the same cards are still to come in other seats).
    """
    info = queries.require(db, summary.match_id)
    spec = info.spec(info.seed)
    config = spec.config
    finished = info.status.over
    results = queries.hand_results(db, summary.match_id)
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
            hands.append(HandLine(hand.hand_number, hand.deal, hand.rotation, formatting.cards(hand.board), payoffs,
                                  hand.seating))
    bots = [
        MatchBot(name, "", net, _mbb(net, config.big_blind, summary.hands))
        for name, net in zip(summary.bots, summary.net, strict=True)
    ]
    blinds = f"{config.small_blind:,}/{config.big_blind:,}" + (f", ante {config.ante:,}" if config.ante else "")
    policy = asdict(spec.policy)
    return MatchPage(
        summary=summary, slug=slug, seed=info.seed if finished else None, finished_at=info.finished_at,
        blinds=blinds, structure=config.structure.name.replace("_", "-").lower(), bots=bots, hands=hands,
        withheld=len(results) - len(hands),
        settings=_settings(info, policy, len(summary.bots)),
        kind=info.kind.value, event=info.event, finished=finished, hands_per_deal=needed,
        final_hash=info.final_hash or None, commitment_version=info.commitment_version,
    )


class _Writer:
    """Writes files under the output folder and remembers them for the manifest."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.files: list[str] = []
        self._folders: set[Path] = set()

    def path(self, relative: str) -> Path:
        self.files.append(relative)
        target = self.out / relative
        if target.parent not in self._folders:
            target.parent.mkdir(parents=True, exist_ok=True)
            self._folders.add(target.parent)
        return target

    def text(self, relative: str, content: str) -> None:
        self.path(relative).write_text(content, encoding="utf-8")


def _manifest(files: list[str]) -> dict[str, list[str]]:
    """The files written, grouped by folder (a long match writes tens of thousands of hand pages)."""
    grouped: dict[str, list[str]] = {}
    for relative in sorted(files):
        folder, _, name = relative.rpartition("/")
        grouped.setdefault(folder, []).append(name)
    return grouped


def _remove_stale(out: Path, written: list[str]) -> None:
    """Delete files an earlier run wrote (per its manifest) that this run did not write again."""
    manifest = out / MANIFEST
    try:
        previous = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if isinstance(previous, dict):
        previous = [f"{folder}/{name}" if folder else name for folder, names in previous.items()
                    if isinstance(folder, str) and isinstance(names, list) for name in names]
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


_HAND_SOURCES = ("templates/hand.html", "templates/mirror.html", "templates/base.html", "hands.py", "site.py")


def _hands_key(page: MatchPage, common: dict[str, Any]) -> str:
    """What a finished match's hand pages depend on: the match, its hands, the names, the site's title and the
    code that renders them. The same key means the same files."""
    package = resources.files("arena.publish")
    code = hashlib.sha256("".join(package.joinpath(f).read_text("utf-8") for f in _HAND_SOURCES).encode()).hexdigest()
    data = {"match": page.summary.match_id, "slug": page.slug, "hands": [h.number for h in page.hands],
            "bots": [b.name for b in page.bots], "title": common["title"], "version": common["version"],
            "live": "live_site" in common, "comparisons": common["has_comparisons"], "code": code}
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def _reuse_hands(page: MatchPage, writer: _Writer, reuse: Path | None, key: str) -> bool:
    """Take a finished match's hand pages from an earlier publish (``reuse``: its folder, possibly the one being
    written) when they were made with the same key; False if they must be rendered."""
    if reuse is None or not page.finished:
        return False
    folder = f"matches/{page.slug}"
    try:
        if (reuse / folder / HANDS_KEY).read_text(encoding="utf-8").strip() != key:
            return False
    except OSError:
        return False
    names = [f"{folder}/hand-{h.number}.{ext}" for h in page.hands for ext in ("html", "phh")]
    if not all((reuse / name).is_file() for name in names):
        return False
    same = reuse.resolve() == writer.out.resolve()
    for name in names:
        if same:
            writer.files.append(name)
        else:
            target = writer.path(name)
            try:
                os.link(reuse / name, target)
            except OSError:
                shutil.copyfile(reuse / name, target)
    writer.text(f"{folder}/{HANDS_KEY}", key + "\n")
    return True


def write_hands(db: Database, page: MatchPage, writer: _Writer, env: jinja2.Environment,
                common: dict[str, Any], reuse: Path | None = None) -> None:
    """A page and a PHH file per shown hand of a match, ``matches/<slug>/hand-<n>.html`` and ``.phh``, each with
    the other hands of its deal beside it (the same cards in other seats). A finished match's pages are taken from
    ``reuse`` (an earlier publish) when nothing they show has changed."""
    if not page.hands:
        return
    key = _hands_key(page, common)
    if _reuse_hands(page, writer, reuse, key):
        return
    template = env.get_template("hand.html")
    position = {h.number: i for i, h in enumerate(page.hands)}
    numbers = [h.number for h in page.hands]
    names = [b.name for b in page.bots]
    per_deal: dict[int, int] = {}
    for h in page.hands:
        per_deal[h.deal] = per_deal.get(h.deal, 0) + 1
    waiting: dict[int, list[HandView]] = {}

    def emit(views: list[HandView]) -> None:
        for view in views:
            i = position[view.number]
            folder = f"matches/{page.slug}"
            writer.text(f"{folder}/hand-{view.number}.phh", view.phh)
            back = page.page_of(i)
            writer.text(f"{folder}/hand-{view.number}.html", template.render(
                root="../../", match=page, hand=view, mirrors=views, data=view.data(),
                previous=numbers[i - 1] if i > 0 else None, next=numbers[i + 1] if i + 1 < len(numbers) else None,
                back="../" + page.page_path(back).removeprefix("matches/"), **common,
            ))

    summary = env.get_template("mirror.html")
    for record in queries.hand_records(db, page.summary.match_id):
        if record.hand_number not in position:
            continue  # withheld: its deal is still to be played in other seats
        view = hand_view(record, names, page.finished)
        if page.hands_per_deal > 1:
            view.summary = summary.render(hand=view)
        group = waiting.setdefault(record.deal, [])
        group.append(view)
        if len(group) == per_deal[record.deal]:
            emit(sorted(waiting.pop(record.deal), key=lambda v: v.number))
    for deal in sorted(waiting):
        emit(sorted(waiting[deal], key=lambda v: v.number))
    if page.finished:
        writer.text(f"matches/{page.slug}/{HANDS_KEY}", key + "\n")


def publish(
    db: Database, out: str | Path, title: str = DEFAULT_TITLE, board: Leaderboard | None = None,
    live_site: bool = False, match_ids: list[str] | None = None, reuse: str | Path | None = None,
    rules: RatingRules = DEFAULT_RULES,
) -> PublishResult:
    """Write the site for every match of ``db`` (or of ``match_ids``: one event) into ``out`` (created if needed)
    and return what was written; ``live_site``: the pages are served by a league host, next to its live page
    (``league.html``). The hand pages of finished matches are reused from ``reuse``, an earlier site of the same
    database (by default ``out`` itself), when nothing they show has changed: republishing renders only new hands."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    board = board if board is not None else build_leaderboard(db, match_ids, rules=rules)
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
    for static in ("style.css", "hand.js"):
        writer.text(static, resources.files("arena.publish").joinpath(f"static/{static}").read_text("utf-8"))

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
              "sections": bool(matches), "system": board.system,
              "has_comparisons": bool(comparisons), **({"live_site": True} if live_site else {})}
    hands = sum(m.hands for m in board.matches)
    writer.text("index.html", env.get_template("index.html").render(
        root="", rows=board.rows, sessions=board.sessions, matches=matches, figures=figures, hands=hands,
        comparisons=comparisons, games=board.games, rules=board.rules, consistency=board.consistency,
        bots=bots, unrated={bot: flag_text(f) for bot, f in board.unrated.items()}, **common,
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
        if plots.rating_plot(board.history, [bot], out / f"plots/bots/{slug}.svg", palette,
                             board.system.estimate_label):
            writer.files.append(f"plots/bots/{slug}.svg")
        else:
            plot = None
        against = board.crosstable.get(bot, {})
        h2h = [HeadToHead(other, against[other]) for other in bots if other in against]
        played = []
        league_times: list[float] = []
        for page in matches:
            if bot in page.summary.bots:
                i = page.summary.bots.index(bot)
                outcome = outcomes.get((page.summary.match_id, bot))
                played.append(BotMatch(page, page.bots[i].net, page.bots[i].mbb_per_hand,
                                       [b for b in page.summary.bots if b != bot],
                                       FLAG_WORDS.get(outcome.outcome.value, "") if outcome else "",
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

    for page in matches:
        if page.hands:
            raw, ev = chip_series(db, page)
            target = f"plots/matches/{page.slug}.svg"
            if plots.chips_plot([h.number for h in page.hands], raw, out / target, ev, palette):
                writer.files.append(target)
                page.chips_plot = target

    comparison_template = env.get_template("comparison.html")
    for comparison in comparisons:
        writer.text(f"comparisons/{comparison.slug}.html", comparison_template.render(
            root="../", c=comparison, **common))

    match_template = env.get_template("match.html")
    for page in matches:
        pages = page.pages
        for hands_page in pages:
            inside = hands_page.number > 1  # later pages sit in the match's folder, beside its hands
            links = [(p.number, (f"../{page.slug}.html" if p.number == 1 else p.path.rsplit("/", 1)[1]) if inside
                      else p.path.removeprefix("matches/")) for p in pages]
            writer.text(hands_page.path, match_template.render(
                root="../../" if inside else "../", match=page, pages=pages, current=hands_page, page_links=links,
                hand_base="" if inside else f"{page.slug}/", **common,
            ))
        write_hands(db, page, writer, env, common, Path(reuse) if reuse is not None else out)

    _remove_stale(out, writer.files)
    (out / MANIFEST).write_text(json.dumps(_manifest(writer.files), separators=(",", ":")) + "\n", encoding="utf-8")
    return PublishResult(out / "index.html", tuple(writer.files), board)
