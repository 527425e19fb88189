"""Connections to the referee's TCP port that have not joined are closed, and never crowd out one that has.

gRPC accepts every connection and only then hands its calls to the referee; its own cap on connections refuses the
newest, so idle connections that fill it keep out a bot that comes later with its token. The warden below takes
that job from gRPC: twice a second, from its own thread, off the referee's loop, it looks at this process's
connections to the port (its descriptors, /proc/self/fd, Linux) and shuts down those that carry no joined bot
stream, spectator or recent call: each once it has had ``join_timeout_s`` to join, and, while more than
``max_connections`` are waiting, the oldest as soon as they have had ``crowded_join_s``. A bot's connection joins
within milliseconds, so it is never the oldest waiting one; gRPC's own cap is raised to what the open-files limit
allows.
"""

from __future__ import annotations

import logging
import os
import resource
import socket
import stat
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

from arena.transport.limits import ServerLimits

log = logging.getLogger("arena.transport")

Address = tuple[str, int]  # a connection's remote end: (ip, port)
FILES_KEPT = 256  # open files kept for the referee's own use (records, logs, bots' pipes) beside its connections


def peer_address(peer: str) -> Address | None:
    """A gRPC peer (``ipv4:1.2.3.4:5678``, ``ipv6:[::1]:5678``) as (ip, port); None for a Unix socket's."""
    kind, _, rest = peer.partition(":")
    if kind not in ("ipv4", "ipv6"):
        return None
    host, _, port = rest.rpartition(":")
    try:
        return _plain(host.strip("[]")), int(port)
    except (OSError, ValueError):
        return None


def _plain(ip: str) -> str:
    """An IP address in one spelling for both sides (an IPv4 address mapped into IPv6 as IPv4)."""
    if ":" not in ip:
        return socket.inet_ntop(socket.AF_INET, socket.inet_pton(socket.AF_INET, ip))
    return _spelled(socket.inet_pton(socket.AF_INET6, ip))


_V4_MAPPED = bytes(10) + b"\xff\xff"


def _spelled(packed: bytes) -> str:
    """A packed address (4 or 16 bytes) as text, an IPv4 address mapped into IPv6 as IPv4."""
    if len(packed) == 4:
        return socket.inet_ntop(socket.AF_INET, packed)
    if packed[:12] == _V4_MAPPED:
        return socket.inet_ntop(socket.AF_INET, packed[12:])
    return socket.inet_ntop(socket.AF_INET6, packed)


class Claims:
    """Which connections (by remote address) hold a joined bot stream or a spectator, and when each was last used
    (the last ``USED_KEPT`` of them): written by the referee's loop as streams come and go, read by the warden's
    thread."""

    USED_KEPT = 4096

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: Counter[Address] = Counter()
        self._used: dict[Address, float] = {}

    def _use(self, address: Address) -> None:
        used = self._used
        used.pop(address, None)
        used[address] = time.monotonic()  # newest last: the oldest go first when there are too many
        if len(used) > self.USED_KEPT:
            del used[next(iter(used))]

    def hold(self, peer: str) -> None:
        """A stream on the connection of ``peer`` joined (or a spectator was admitted)."""
        address = peer_address(peer)
        if address is not None:
            with self._lock:
                self._held[address] += 1

    def release(self, peer: str) -> None:
        """That stream ended: the connection has ``join_timeout_s`` from now to carry another."""
        address = peer_address(peer)
        if address is not None:
            with self._lock:
                self._held[address] -= 1
                if self._held[address] <= 0:
                    del self._held[address]
                self._use(address)

    def touch(self, peer: str) -> None:
        """A call on the connection of ``peer`` (listing or reading matches)."""
        address = peer_address(peer)
        if address is not None:
            with self._lock:
                self._use(address)

    def snapshot(self, forget_before: float) -> tuple[set[Address], dict[Address, float]]:
        """The connections held now, and when the others were last used (forgetting uses before ``forget_before``)."""
        with self._lock:
            self._used = {a: t for a, t in self._used.items() if t >= forget_before}
            return set(self._held), dict(self._used)


@dataclass(frozen=True, slots=True)
class Accepted:
    """One connection this process accepted: its descriptor, its socket (device and inode), its remote end."""

    fd: int
    socket: tuple[int, int]
    address: Address


# descriptor: the file it held when looked at (device and inode: a file's inode may equal a socket's), and what it was
Known = dict[int, tuple[tuple[int, int], "Accepted | None"]]


def connections_to(port: int, known: Known | None = None) -> list[Accepted]:
    """The TCP connections this process holds on local ``port`` (its descriptors, looked at in place: no copy of
    the kernel's socket tables, whose size the whole host decides). ``known``, kept between calls, remembers what
    each descriptor was, so one still holding the same socket costs a single ``fstat``."""
    known = {} if known is None else known
    found = []
    listed = set()
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        listed.add(fd)
        try:
            status = os.fstat(fd)
        except OSError:
            continue
        ident = (status.st_dev, status.st_ino)
        seen = known.get(fd)
        if seen is not None and seen[0] == ident:
            connection = seen[1]
        else:
            connection = _accepted(fd, status, port)
            known[fd] = (ident, connection)
        if connection is not None:
            found.append(connection)
    for fd in [fd for fd in known if fd not in listed]:
        del known[fd]
    return found


def _accepted(fd: int, status: os.stat_result, port: int) -> Accepted | None:
    """Descriptor ``fd`` as a connection accepted on ``port``, or None."""
    if not stat.S_ISSOCK(status.st_mode):
        return None
    try:
        sock = socket.socket(fileno=fd)  # borrowed: detached below, never closed here
    except OSError:
        return None
    try:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and sock.type == socket.SOCK_STREAM \
                and sock.getsockname()[1] == port:
            ip, remote_port = sock.getpeername()[:2]
            return Accepted(fd, (status.st_dev, status.st_ino), (_plain(ip), remote_port))
    except OSError:
        pass  # a listening socket (no peer), or one closed meanwhile
    finally:
        sock.detach()
    return None


def shut_down(connection: Accepted) -> bool:
    """Shut down a connection (gRPC then sees it end and lets it go); False when its descriptor is no longer that
    socket (closed, and perhaps reused, since it was listed)."""
    try:
        duplicate = os.dup(connection.fd)
    except OSError:
        return False
    try:
        status = os.fstat(duplicate)
        if (status.st_dev, status.st_ino) != connection.socket or not stat.S_ISSOCK(status.st_mode):
            os.close(duplicate)
            return False
    except OSError:
        os.close(duplicate)
        return False
    with socket.socket(fileno=duplicate) as sock:  # closing it closes the duplicate only
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            return False
    return True


def connection_ceiling(limits: ServerLimits) -> int:
    """gRPC's own cap on connections: ``max_connections`` without the warden; with it, as many as the open-files
    limit leaves beside ``FILES_KEPT`` (the warden holds the waiting ones to ``max_connections`` itself)."""
    if not warden_available(limits):
        return limits.max_connections
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        soft = 1 << 20
    return max(limits.max_connections + 64, soft - FILES_KEPT)


def warden_available(limits: ServerLimits) -> bool:
    """Whether the warden runs: asked for, and this process's descriptors can be listed (/proc/self/fd, Linux)."""
    return limits.guard_connections and os.path.isdir("/proc/self/fd")


@dataclass(slots=True)
class WardenCounts:
    """What the warden has done so far."""

    sweeps: int = 0
    closed_late: int = 0  # connections that did not join within join_timeout_s
    closed_crowded: int = 0  # the oldest waiting ones, while more than max_connections waited
    seconds: float = 0.0  # the warden's CPU time, all sweeps together
    waiting: int = 0  # connections waiting to join at the last sweep
    errors: list[str] = field(default_factory=list)


class ConnectionWarden:
    """Closes the TCP connections to ``port`` that have not joined (see the module's docstring), from a thread of
    its own every ``period_s``."""

    def __init__(self, port: int, limits: ServerLimits, claims: Claims, period_s: float = 0.5) -> None:
        self.port = port
        self.limits = limits
        self.claims = claims
        self.period_s = period_s
        self.counts = WardenCounts()
        self._first_seen: dict[tuple[int, int], float] = {}  # socket: when the warden first saw the connection
        self._known: Known = {}  # what each descriptor of this process was at the last sweep
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start sweeping."""
        self._thread = threading.Thread(target=self._run, name=f"arena-warden-{self.port}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop sweeping (at once: the thread only waits between sweeps)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def _run(self) -> None:
        while not self._stop.wait(self.period_s):
            try:
                self.sweep()
            except Exception as exc:  # the warden must never take the referee down; say what went wrong, once
                if not self.counts.errors:
                    log.warning("the connection warden failed a sweep: %r", exc)
                self.counts.errors.append(repr(exc))

    def sweep(self) -> int:
        """One pass: close what has waited too long, or the oldest waiting while too many wait; how many closed."""
        started = time.thread_time()
        limits = self.limits
        now = time.monotonic()
        connections = {c.socket: c for c in connections_to(self.port, self._known)}
        held, used = self.claims.snapshot(now - limits.join_timeout_s)
        first_seen = self._first_seen
        for gone in [key for key in first_seen if key not in connections]:
            del first_seen[gone]
        late: list[Accepted] = []
        waiting: list[tuple[float, tuple[int, int]]] = []
        for key, connection in connections.items():
            seen = first_seen.setdefault(key, now)
            if connection.address in held:
                continue
            since = max(seen, used.get(connection.address, seen))
            if now - since >= limits.join_timeout_s:
                late.append(connection)
            else:
                waiting.append((since, key))
        crowded: list[Accepted] = []
        excess = len(waiting) - limits.max_connections
        if excess > 0:
            waiting.sort()
            crowded = [connections[key] for since, key in waiting[:excess] if now - since >= limits.crowded_join_s]
        closed = sum(shut_down(connection) for connection in [*late, *crowded])
        counts = self.counts
        counts.sweeps += 1
        counts.closed_late += len(late)
        counts.closed_crowded += len(crowded)
        counts.waiting = len(waiting) - len(crowded)
        counts.seconds += time.thread_time() - started
        return closed
