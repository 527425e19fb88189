"""The league's admin service (proto/arena/v1/league.proto, ``LeagueAdmin``): pause and resume scheduling, freeze
the ladder for the finals, kick a bot, read the league's status. Every call needs the admin token as metadata
``authorization: Bearer TOKEN``, compared in constant time; the token lives in a file only the host's user can read
(``admin_token_file``, default ``<database>.admin-token``, created at the first start).
"""

from __future__ import annotations

import hmac
import os
from pathlib import Path
from typing import Any

import grpc

from arena.league.host import LeagueHost
from arena.runner.remote_match import new_token
from arena_sdk.pb import league_pb2, league_pb2_grpc

Context = grpc.aio.ServicerContext[Any, Any]


def admin_token_path(db_path: Path, configured: Path | None) -> Path:
    """Where the admin token is kept."""
    return configured if configured is not None else db_path.with_name(db_path.name + ".admin-token")


def load_or_create_token(path: Path) -> str:
    """The admin token in ``path``; a fresh 256-bit one written there (mode 0600) if the file does not exist."""
    if path.exists():
        token = path.read_text(encoding="utf-8").strip()
        if len(token) < 16:
            raise ValueError(f"{path}: an admin token of at least 16 characters is needed")
        return token
    token = new_token()
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(token + "\n")
    return token


class AdminServicer(league_pb2_grpc.LeagueAdminServicer):
    """LeagueAdmin over a running host."""

    def __init__(self, host: LeagueHost, token: str) -> None:
        self.host = host
        self.token = token

    def add_to(self, server: grpc.aio.Server) -> str:
        league_pb2_grpc.add_LeagueAdminServicer_to_server(self, server)
        return str(league_pb2.DESCRIPTOR.services_by_name["LeagueAdmin"].full_name)

    async def _check(self, context: Context) -> None:
        sent = dict(context.invocation_metadata() or ()).get("authorization", "")
        expected = f"Bearer {self.token}"
        if not hmac.compare_digest(str(sent).encode(), expected.encode()):
            await context.abort(grpc.StatusCode.UNAUTHENTICATED,
                                "LeagueAdmin needs the league's admin token as metadata 'authorization: Bearer TOKEN'")

    def status(self, message: str = "") -> league_pb2.LeagueStatus:
        host = self.host
        return league_pb2.LeagueStatus(
            league=host.config.name, paused=host.paused, frozen=host.frozen, message=message,
            matches_finished=host.rated,
            bots=sorted([*(league_pb2.ConnectedBot(name=m.name, version=m.version, peer=m.peer, playing=len(m.seats),
                                                   matches=m.matches) for m in host.members.values() if m.live),
                         *(league_pb2.ConnectedBot(name=r.name, version=r.version, peer="hosted", playing=r.playing,
                                                   matches=r.matches) for r in host.residents.values())],
                        key=lambda bot: bot.name),
            live=[league_pb2.LiveMatch(match_id=match_id, bots=list(live.bots), hands_played=live.hands_played,
                                       hands_total=live.hands_total)
                  for match_id, live in sorted(host.live.items())],
        )

    async def Status(self, request: league_pb2.AdminRequest, context: Context) -> league_pb2.LeagueStatus:
        await self._check(context)
        return self.status()

    async def Pause(self, request: league_pb2.AdminRequest, context: Context) -> league_pb2.LeagueStatus:
        await self._check(context)
        self.host.paused = True
        return self.status(f"paused: no new matches start ({len(self.host.live)} in play finish)")

    async def Resume(self, request: league_pb2.AdminRequest, context: Context) -> league_pb2.LeagueStatus:
        await self._check(context)
        self.host.paused = False
        self.host.wake()
        return self.status("resumed: matches are scheduled again")

    async def Freeze(self, request: league_pb2.AdminRequest, context: Context) -> league_pb2.LeagueStatus:
        await self._check(context)
        self.host.freeze(True)
        return self.status("frozen: the published ladder stays as it is and no new bot version may join")

    async def Unfreeze(self, request: league_pb2.AdminRequest, context: Context) -> league_pb2.LeagueStatus:
        await self._check(context)
        self.host.freeze(False)
        return self.status("unfrozen: the ladder is published again, new versions may join")

    async def Kick(self, request: league_pb2.KickRequest, context: Context) -> league_pb2.LeagueStatus:
        await self._check(context)
        reason = request.reason or "kicked by the league's admin"
        if not self.host.kick(request.bot, reason):
            known = ", ".join(sorted(m.name for m in self.host.members.values() if m.live)) or "none"
            await context.abort(grpc.StatusCode.NOT_FOUND,
                                f"no connected bot {request.bot!r} (connected: {known})")
        return self.status(f"kicked {request.bot}: {reason}")
