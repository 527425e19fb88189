"""The referee's gRPC server: BotService for bots (``bot_service``), ArenaService for people and tools
(``spectators``), plus the standard health and reflection services (so ``grpcurl`` can list and call everything).

Nothing a client does can stall a table or keep out a bot with a token (``ServerLimits`` and the throttles, in
``limits``; the warden that closes TCP connections that do not join, in ``connections``). The referee serves local
bots on a Unix-domain socket that only they can reach (no spectators there), and remote bots and spectators on TCP.
"""

from __future__ import annotations

import asyncio
import logging
import os
import resource
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from arena import scratch
from arena.referee.match import Match
from arena.transport import native_server
from arena.transport.bot_service import BotServicer, Resolver
from arena.transport.connections import Claims, ConnectionWarden, connection_ceiling, warden_available
from arena.transport.endpoint import Endpoint
from arena.transport.limits import PeerGuard, ServerLimits, TokenBucket
from arena.transport.remote import RemoteSeat
from arena.transport.spectators import ArenaServicer, MatchDirectory, MatchEntry
from arena_sdk.pb import arena_pb2, bot_pb2

log = logging.getLogger("arena.transport")

__all__ = ["Endpoint", "MatchDirectory", "RefereeServer", "ServerError", "ServerLimits", "TokenBucket",
           "port_is_free", "raise_open_files_limit", "reachable_addresses"]


class ServerError(RuntimeError):
    """The referee cannot start serving: the address is taken or the TLS material is unusable."""


def port_is_free(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be listened on (taken, not an address of this machine), or None."""
    if port == 0:
        return None
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        # as gRPC binds: a port whose last connections linger in TIME_WAIT (a host restarted at once) is free
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host.strip("[]"), port))
        except OSError as exc:
            return exc.strerror or str(exc)
    return None


def reachable_addresses(host: str, port: int) -> list[str]:
    """``host:port`` as remote bots can reach it: for a wildcard host, this machine's own addresses."""
    if host not in ("0.0.0.0", "::", "[::]", ""):
        return [f"{host}:{port}"]
    found: list[str] = []
    try:
        infos = socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)
    except OSError:
        infos = []
    for info in infos:
        address = str(info[4][0])
        if address not in found and not address.startswith("127."):
            found.append(address)
    return [f"{a}:{port}" for a in [*found, "127.0.0.1"]]


def raise_open_files_limit() -> int:
    """Raise this process's soft limit on open files to the hard limit (a referee holds a socket per connection)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 65536)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            return target
        except (ValueError, OSError):
            return soft
    return soft


class RefereeServer:
    """One referee process serving any number of matches.

    ``tcp``: listen on ``host:port`` (port 0 picks a free one) for remote bots and spectators. ``local``: also (or
    only) listen on a Unix-domain socket in a private folder, for the local bots the runner starts, which reach
    nothing else; spectators are never served there.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        tls: tuple[bytes, bytes] | None = None,
        limits: ServerLimits | None = None,
        *,
        tcp: bool = True,
        local: bool = False,
    ) -> None:
        self.host = host
        self.requested_port = port
        self.tls = tls
        self.limits = limits or ServerLimits()
        self.tcp = tcp
        self.local = local
        self.tokens: dict[str, Endpoint] = {}  # the match seats' tokens
        self.keys: Resolver | None = None  # a league host's: API keys -> its bots' endpoints (set before ``start``)
        # more services for the TCP server (a league's admin service): each adds itself, returns its full name
        self.services: list[Callable[[grpc.aio.Server], str]] = []
        self.directory = MatchDirectory()
        self.port = 0
        self.socket_path: Path | None = None
        self._socket_dir: Path | None = None
        self._servers: list[grpc.aio.Server | native_server.NativeBotServer] = []
        self.claims = Claims()  # the TCP connections that carry a joined stream or a spectator
        self.warden: ConnectionWarden | None = None  # closes the TCP connections that do not join (Linux)

    @property
    def address(self) -> str:
        """``host:port`` that remote bots and spectators connect to."""
        return f"{self.host}:{self.port}"

    @property
    def local_address(self) -> str:
        """The gRPC address of the Unix-domain socket for local bots (``unix:/path``)."""
        if self.socket_path is None:
            raise RuntimeError("this referee does not serve local bots")
        return f"unix:{self.socket_path}"

    def _options(self, tcp: bool) -> list[tuple[str, Any]]:
        limits = self.limits
        guarded = tcp and limits.guard_connections
        return [
            ("grpc.max_receive_message_length", limits.max_message_bytes),
            ("grpc.max_send_message_length", 16 * 1024 * 1024),
            ("grpc.so_reuseport", 0),
            ("grpc.keepalive_time_ms", int(limits.keepalive_s * 1000)),
            ("grpc.keepalive_timeout_ms", int(limits.keepalive_timeout_s * 1000)),
            # What closes a connection whose pings go unanswered (gRPC 1.85 waits for it, a minute by default,
            # whatever the keepalive timeout says: a silently cut connection would hold its seat that long)
            ("grpc.http2.ping_timeout_ms", int(limits.keepalive_timeout_s * 1000)),
            ("grpc.keepalive_permit_without_calls", 1),
            ("grpc.http2.min_ping_interval_without_data_ms", 5000),
            ("grpc.http2.max_ping_strikes", 2),
            ("grpc.max_connection_idle_ms", int(limits.idle_connection_s * 1000)),
            # with the warden, gRPC's own cap (which refuses the newest) only keeps the open files in bounds
            ("grpc.max_allowed_incoming_connections", connection_ceiling(limits) if tcp else limits.max_connections),
            ("grpc.max_concurrent_streams", limits.streams_per_connection),
            # a connection that never sends HTTP/2's settings (bare TCP, a stalled TLS handshake) is gone at once
            *([("grpc.server_handshake_timeout_ms", int(limits.join_timeout_s * 1000))] if guarded else []),
        ]

    def _bot_servicer(self, claims: Claims, guard: PeerGuard | None = None) -> BotServicer:
        tokens = self.tokens
        guard = guard or PeerGuard(self.limits, lambda: len(tokens))
        return BotServicer(tokens, self.limits, self.keys, guard, claims)

    async def _server(self, spectators: bool) -> grpc.aio.Server:
        server = grpc.aio.server(options=self._options(tcp=spectators))
        tokens = self.tokens
        guard = PeerGuard(self.limits, lambda: len(tokens))  # one per server: refusals in turn, for both services
        claims = self.claims if spectators else Claims()
        server.add_generic_rpc_handlers((self._bot_servicer(claims, guard).handler(),))
        names = [bot_pb2.DESCRIPTOR.services_by_name["BotService"].full_name]
        if spectators:
            server.add_generic_rpc_handlers((ArenaServicer(self.directory, self.limits, guard, claims).handler(),))
            names.append(arena_pb2.DESCRIPTOR.services_by_name["ArenaService"].full_name)
            names += [add(server) for add in self.services]
        health_servicer = health.aio.HealthServicer()  # type: ignore[attr-defined]
        health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
        for name in [*names, ""]:
            await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
        names += [health_pb2.DESCRIPTOR.services_by_name["Health"].full_name, reflection.SERVICE_NAME]
        reflection.enable_server_reflection(names, server)
        return server

    async def start(self) -> int:
        """Bind and start serving; returns the TCP port (0 when only the local socket is served)."""
        raise_open_files_limit()
        if self.local:
            self._socket_dir = scratch.scratch_folder("arena-referee-")
            self._socket_dir.chmod(0o700)
            self.socket_path = self._socket_dir / "referee.sock"
            address = f"unix:{self.socket_path}"
            if native_server.selected():  # the bots' service alone, from gRPC's C++ library (its module says why)
                native = native_server.NativeBotServer(self._bot_servicer(Claims()), address, self._options(False))
                await native.start()
                self._servers.append(native)
            else:
                server = await self._server(spectators=False)
                server.add_insecure_port(address)
                await server.start()
                self._servers.append(server)
            os.chmod(self.socket_path, 0o666)  # reachable by the bots' uids, only through the sandbox's bind
        if self.tcp:
            target = f"{self.host}:{self.requested_port}"
            free = port_is_free(self.host, self.requested_port)
            if free is not None:  # found before gRPC tries, so that its own log line does not come first
                await self.stop(0)
                raise ServerError(f"cannot listen on {target}: {free}")
            server = await self._server(spectators=True)
            try:
                if self.tls is not None:
                    key, cert = self.tls
                    self.port = server.add_secure_port(target, grpc.ssl_server_credentials([(key, cert)]))
                else:
                    self.port = server.add_insecure_port(target)
                await server.start()
            except RuntimeError as exc:
                await self.stop(0)
                reason = "port in use, or a bad TLS key/certificate?"
                raise ServerError(f"cannot listen on {target} ({reason}): {exc}") from None
            self._servers.append(server)
            if warden_available(self.limits):
                self.warden = ConnectionWarden(self.port, self.limits, self.claims)
                self.warden.start()
            elif self.limits.guard_connections:
                log.warning("no /proc/net/tcp here: gRPC's own cap of %d connections applies, and connections "
                            "without a call close only after %g s", self.limits.max_connections,
                            self.limits.idle_connection_s)
        return self.port

    def add_seat(self, seat: RemoteSeat) -> None:
        """Make a seat joinable with its token: a stream that joins with it plays the seat."""
        if seat.token in self.tokens:
            raise ValueError("duplicate token")
        self.tokens[seat.token] = seat.endpoint
        seat.endpoint.add(seat)

    def remove_seat(self, seat: RemoteSeat) -> None:
        """Forget a seat's token (its match is over: a long-lived server, a league's, would otherwise keep them all)."""
        if self.tokens.get(seat.token) is seat.endpoint:
            del self.tokens[seat.token]

    def add_match(self, match: Match, seats: list[RemoteSeat]) -> MatchEntry:
        """List a match on the spectator service (its hands are published if its sinks include ``sink``)."""
        return self.directory.add(match, seats)

    async def stop(self, grace_s: float = 1.0) -> None:
        """Stop serving, giving streams ``grace_s`` to finish; remove the local socket."""
        if self.warden is not None:
            self.warden.stop()
            self.warden = None
        servers, self._servers = self._servers, []
        await asyncio.gather(*(server.stop(grace_s) for server in servers))
        if self._socket_dir is not None:
            scratch.remove(self._socket_dir)
            self._socket_dir = None

