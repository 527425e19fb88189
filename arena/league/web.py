"""The league's live site and JSON API, served by the host over aiohttp.

``/`` and every page of ``arena publish`` (rebuilt in a worker thread after matches end, at most every
``REFRESH_S``, and never for more than ``BUILD_SHARE`` of the time however long the league's history grows, so the
tables are never slowed by it; the charts at most every ``CHARTS_S``), and:

- ``/api/leaderboard``: the rows of ``arena leaderboard --json`` (each with its ``sessions``), from the
  order-independent fit; ``/api/bots``: the registered bots, whether connected (a hosted bot always is, until its
  version is retired), hosted or remote, their version, matches, games in the last hour, live rating;
  ``/api/matches``: the league's matches, newest first; ``/api/live``: the matches being played, with their hands
  so far;
- ``/api/hands/<match>/<block>.js`` (and ``.json``): a block of a match's hands in the compact form of
  arena.publish.match_data, read from the database when asked: the pages' one hand viewer (``hand.html``) reads
  them there, so the live site writes no file per hand or match. A running match shows what its pages show (the
  hands of deals played in every seat, the cards shown at the table); a finished match's blocks are remembered.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import shutil
import threading
import time
from collections import OrderedDict
from typing import Any

from aiohttp import web

from arena import __version__, scratch
from arena.league.host import LeagueHost
from arena.publish import match_data, publish
from arena.publish.site import environment
from arena.ratings.leaderboard import build_leaderboard, leaderboard_json
from arena.ratings.sessions import bot_key
from arena.records import queries
from arena.records.db import Database
from arena.referee import MatchKind, MatchResult

log = logging.getLogger("arena.league")

REFRESH_S = 2.0  # the most often the published pages and the leaderboard are rebuilt
BUILD_SHARE = 0.2  # the most of the host's time the rebuilds take: a rebuild reads every match of the league
CHARTS_S = 30.0  # the most often their charts are redrawn (drawing them took a quarter of a busy host's CPU)
BLOCKS_KEPT = 256  # finished matches' blocks of hands remembered (about 100 KB each at most)
_BLOCK_FILE = re.compile(r"(\d{1,9})\.(js|json)")


def refresh_delay(build_s: float) -> float:
    """How long after a rebuild that took ``build_s`` the next may start: ``REFRESH_S``, or longer when rebuilding
    took long, so that rebuilds take at most ``BUILD_SHARE`` of the time (a rebuild reads the whole league, whose
    history only grows; in a busy test league, ~400 matches in 25 s, it was 40% of the host's CPU)."""
    return max(REFRESH_S, build_s * (1.0 - BUILD_SHARE) / BUILD_SHARE)


class LeagueSite:
    """The HTTP side of a host: cached published data, rebuilt off the event loop as matches end."""

    def __init__(self, host: LeagueHost, title: str | None = None) -> None:
        self.host = host
        self.title = title or f"{host.config.name}: live league"
        self.folder = scratch.scratch_folder("arena-league-site-")
        self.leaderboard: dict[str, Any] = {"rows": [], "sessions": 0, "generated_at": time.time()}
        self.matches: list[dict[str, Any]] = []
        self.slugs: dict[str, str] = {}  # slug -> match id, as the published pages link hands
        self._blocks: OrderedDict[tuple[str, int], dict[str, Any]] = OrderedDict()  # finished matches' blocks
        self._blocks_lock = threading.Lock()  # read by worker threads
        self.built_at = 0.0
        self._charts_at = -CHARTS_S  # when the charts were last drawn (time.monotonic)
        self._charts_kept = False  # the last build kept the charts before it: they are due to be drawn anew
        self._charts_due = False  # a rebuild is set for when kept charts may be drawn anew
        self._dirty = asyncio.Event()
        self._building = threading.Lock()  # held by a build (in a worker thread) and by stop's removal of the folder
        self._stopped = False
        self._runner: web.AppRunner | None = None
        self._task: asyncio.Task[None] | None = None
        self.port = 0
        host.on_match_end.append(self._changed)

    def _changed(self, result: MatchResult) -> None:
        self._dirty.set()

    # ------------------------------------------------------------------ building

    def _build(self, frozen: bool = False) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, str]] | None:
        """Runs in a worker thread, with a read-only connection of its own. None, and nothing swapped in, when the
        ladder was frozen while it was built (``frozen``: whether it was when the build began): the published
        ladder is what it was at the freeze."""
        with self._building:  # never while stop removes the folder (a build it cancelled goes on in its thread)
            if self._stopped:
                return None
            return self._build_pages(frozen)

    def _build_pages(self, frozen: bool) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, str]] | None:
        db = Database(self.host.db.path, read_only=True)
        try:
            ids = queries.matches_of(db, self.host.config.name, MatchKind.LEAGUE)
            board = build_leaderboard(db, ids, rules=self.host.config.rating_rules)
            data = leaderboard_json(board)
            staging = scratch.scratch_folder("arena-league-build-")
            drawn_at = time.monotonic()
            keep = self.folder if drawn_at - self._charts_at < CHARTS_S else None  # the charts drawn last time
            result = publish(db, staging, self.title, board, live_site=True, reuse=self.folder,  # finished kept
                             charts_from=keep)
            self._charts_kept = keep is not None
            if keep is None:
                self._charts_at = drawn_at
            if self.host.frozen and not frozen:
                scratch.remove(staging)
                return None
            for item in staging.iterdir():  # swap the new pages in, file by file
                if item.name.startswith(scratch.OWNER):  # the staging folder's own: the site keeps its lock
                    continue
                target = self.folder / item.name
                if target.is_dir():
                    shutil.rmtree(target)
                shutil.move(str(item), target)
            scratch.remove(staging)
            matches = sorted(data["matches"], key=lambda m: m["created_at"], reverse=True)
            return data, matches, result.match_slugs
        finally:
            db.close()

    async def refresh(self) -> None:
        """Rebuild the leaderboard and the pages now."""
        if not self.host.db.path.exists():
            return
        frozen = self.host.frozen
        built = await asyncio.to_thread(self._build, frozen)
        if built is None or (self.host.frozen and not frozen):  # frozen meanwhile: rebuilt once it is unfrozen
            self._dirty.set()
            return
        self.leaderboard, self.matches, self.slugs = built
        self.built_at = time.time()

    async def _refresher(self) -> None:
        while True:
            await self._dirty.wait()
            if self.host.frozen:  # the ladder shows what it showed at the freeze; rebuilt once it is unfrozen
                await asyncio.sleep(REFRESH_S)
                continue
            self._dirty.clear()
            started = time.monotonic()
            try:
                await self.refresh()
            except Exception:
                log.exception("rebuilding the league's site failed; trying again after the next match")
            wait = refresh_delay(time.monotonic() - started)
            if self._charts_kept and not self._charts_due:  # its charts were kept: they are drawn anew once they
                self._charts_due = True  # may be, whether or not a match ends by then
                due = self._charts_at + CHARTS_S - time.monotonic()
                asyncio.get_running_loop().call_later(max(due, 0.0), self._redraw_charts)
            await asyncio.sleep(wait)

    def _redraw_charts(self) -> None:
        self._charts_due = False
        self._dirty.set()

    # ------------------------------------------------------------------ serving

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/api/leaderboard", self._leaderboard)
        app.router.add_get("/api/bots", self._bots)
        app.router.add_get("/api/matches", self._matches)
        app.router.add_get("/api/live", self._live)
        app.router.add_get("/api/hands/{slug}/{file}", self._hands)
        app.router.add_get("/", self._index)
        app.router.add_get("/league.html", self._league_page)
        app.router.add_static("/", self.folder, show_index=False)
        return app

    async def start(self, host: str, port: int) -> int:
        """Build the pages once and serve them; returns the port."""
        await self.refresh()
        self._runner = web.AppRunner(self.app(), access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port)
        await site.start()
        server = site._server
        sockets = getattr(server, "sockets", None) or []
        self.port = sockets[0].getsockname()[1] if sockets else port
        self._task = asyncio.create_task(self._refresher())
        return self.port

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
        if self._runner is not None:
            await self._runner.cleanup()
        await asyncio.to_thread(self._remove_folder)

    def _remove_folder(self) -> None:
        """Remove the pages' folder once no build is writing into it (a build cancelled with the refresher goes on in
        its thread, and its swap would leave the folder behind, emptied of its owner file: never swept)."""
        with self._building:
            self._stopped = True
            scratch.remove(self.folder)

    async def _index(self, request: web.Request) -> web.StreamResponse:
        index = self.folder / "index.html"
        if not index.exists():
            return web.Response(text="the league's pages are being built; try again in a moment", status=503)
        return web.FileResponse(index)

    async def _leaderboard(self, request: web.Request) -> web.Response:
        data = self.leaderboard
        body = {"league": self.host.config.name, "frozen": self.host.frozen, "generated_at": data.get("generated_at"),
                "sessions": data.get("sessions", 0), "ranking": data.get("ranking"),
                "sorted_by": data.get("sorted_by"), "rating_system": data.get("rating_system"),
                "rows": data.get("rows", [])}
        return _json(body)

    async def _matches(self, request: web.Request) -> web.Response:
        return _json({"league": self.host.config.name, "matches": self.matches})

    async def _live(self, request: web.Request) -> web.Response:
        live = self._live_rows()
        return _json({"league": self.host.config.name, "paused": self.host.paused, "frozen": self.host.frozen,
                      "rated_matches": self.host.rated,
                      "live": live})

    async def _league_page(self, request: web.Request) -> web.Response:
        bots = self._bot_rows()
        live = self._live_rows()
        html = environment().get_template("league.html").render(
            root="", title=self.title, league=self.host.config.name, generated=time.time(), version=__version__,
            sections=True, live_site=True, bots=bots, connected=sum(b["connected"] for b in bots), live=live,
            paused=self.host.paused, frozen=self.host.frozen, finished=self.host.rated)
        return web.Response(text=html, content_type="text/html")

    def _read_block(self, match_id: str, slug: str, block: int) -> dict[str, Any] | None:
        """A block of a match's hands from the database (in a worker thread, with a read-only connection of its
        own); a finished match's is remembered."""
        with self._blocks_lock:
            kept = self._blocks.get((match_id, block))
            if kept is not None:
                self._blocks.move_to_end((match_id, block))
                return kept
        db = Database(self.host.db.path, read_only=True)
        try:
            data = match_data.match_data(db, match_id, slug)
            found = next(match_data.blocks(db, data, [block]), None)
        finally:
            db.close()
        if found is not None and data.finished:
            with self._blocks_lock:
                self._blocks[(match_id, block)] = found
                while len(self._blocks) > BLOCKS_KEPT:
                    self._blocks.popitem(last=False)
        return found

    async def _hands(self, request: web.Request) -> web.Response:
        slug, name = request.match_info["slug"], request.match_info["file"]
        parsed = _BLOCK_FILE.fullmatch(name)
        match_id = self.slugs.get(slug)
        if parsed is None or match_id is None:
            return web.Response(text=f"no match {slug!r} or no block {name!r} here: the league's pages name them "
                                "as api/hands/<match>/<block>.js", status=404)
        block = await asyncio.to_thread(self._read_block, match_id, slug, int(parsed[1]))
        if block is None:
            return web.Response(text=f"match {match_id!r} has no hand shown in block {parsed[1]}", status=404)
        if parsed[2] == "json":
            return _json(block)
        return web.Response(text=match_data.script(block), content_type="application/javascript")

    async def _bots(self, request: web.Request) -> web.Response:
        return _json({"league": self.host.config.name, "bots": self._bot_rows()})

    def _live_rows(self) -> list[dict[str, Any]]:
        now = time.time()
        return [{"match_id": match_id, "bots": list(m.bots), "hands_played": m.hands_played,
                 "hands_total": m.hands_total, "running_s": round(now - m.started, 1)}
                for match_id, m in sorted(self.host.live.items())]

    def _bot_rows(self) -> list[dict[str, Any]]:
        host = self.host  # games in the last hour from the database, not from the pages (rebuilt in the background)
        recent = {name: n for name, (n, _) in queries.bots_played(host.db, host.config.name, MatchKind.LEAGUE,
                                                                   since=time.time() - 3600).items()}
        rows = []
        for bot in host.registry.list():
            member = host.members.get(bot.name)
            resident = host.residents.get(bot.name)
            version = member.version if member is not None and member.live else ""
            if resident is not None:
                version = resident.version
            rating = host.ratings.rating(bot_key(bot.name, version)) if member or resident else None
            matches = (resident.matches if resident is not None else member.matches if member is not None
                       else host.played.get(bot.name, (0, 0.0))[0])
            playing = resident.playing if resident is not None else len(member.seats) if member else 0
            rows.append({
                "name": bot.name, "owner": bot.owner, "active": bot.active,
                "connected": bool(resident or (member and member.live)), "version": version,
                "hosted": bot.name in host.hosted, "playing": playing, "matches": matches,
                "games_last_hour": recent.get(bot.name, 0),
                "mu": rating.mu if rating else None, "sigma": rating.sigma if rating else None,
            })
        return rows


def _json(data: Any) -> web.Response:
    return web.Response(text=json.dumps(data, indent=1, default=str), content_type="application/json")
