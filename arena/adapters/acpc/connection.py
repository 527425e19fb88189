"""The TCP connection to an ACPC client, line by line: the bridge listens on a loopback port, the client connects
and says ``VERSION:2.0.0``, then gets MATCHSTATE lines ending with ``\\r\\n`` and answers some of them.

Lines from the client may end with ``\\n`` or ``\\r\\n`` (the reference client ends its version line with a bare
``\\n``). A line longer than ``MAX_LINE`` is dropped as garbage. The client closing the connection (or dying) is
``ClientGone``.
"""

from __future__ import annotations

import contextlib
import socket
import time

MAX_LINE = 65536  # far more than any state and action (the ACPC server's MAX_LINE_LEN is 5,000)
SEND_TIMEOUT_S = 30.0  # a client that reads nothing for this long (its receive buffer full) is gone


class ClientGone(ConnectionError):
    """The ACPC client closed its connection, or stopped reading it."""


class AcpcConnection:
    """One accepted client: ``send`` a state, ``read_line`` until a deadline."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._buffer = bytearray()
        self._lines: list[str] = []
        self.dropped = 0  # lines longer than MAX_LINE

    def send(self, lines: list[str]) -> None:
        """Send lines (each ends with ``\\r\\n``), in one write."""
        if not lines:
            return
        try:
            self.sock.settimeout(SEND_TIMEOUT_S)
            self.sock.sendall("".join(line + "\r\n" for line in lines).encode("ascii"))
        except TimeoutError:
            raise ClientGone(f"the ACPC client read nothing for {SEND_TIMEOUT_S:g} s") from None
        except OSError as exc:
            raise ClientGone(f"the ACPC client's connection failed: {exc}") from None

    def read_line(self, deadline: float) -> str | None:
        """The next line from the client (without its line end), or None if none came by ``deadline``
        (``time.monotonic``)."""
        while not self._lines:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                self.sock.settimeout(left)
                data = self.sock.recv(65536)
            except TimeoutError:
                return None
            except OSError as exc:
                raise ClientGone(f"the ACPC client's connection failed: {exc}") from None
            if not data:
                raise ClientGone("the ACPC client closed its connection")
            self._take(data)
        return self._lines.pop(0)

    def _take(self, data: bytes) -> None:
        buffer = self._buffer
        buffer += data
        while (end := buffer.find(b"\n")) >= 0:
            raw = bytes(buffer[:end])
            del buffer[: end + 1]
            if len(raw) > MAX_LINE:
                self.dropped += 1
                continue
            self._lines.append(raw.removesuffix(b"\r").decode("ascii", "replace"))
        if len(buffer) > MAX_LINE:  # a line with no end in sight: garbage
            buffer.clear()
            self.dropped += 1

    def close(self) -> None:
        """Close the connection (the client sees its end, as at the end of an ACPC match)."""
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()


def listen(host: str = "127.0.0.1") -> socket.socket:
    """A listening socket on a free port of ``host``."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    server = socket.socket(family, socket.SOCK_STREAM)
    server.bind((host, 0))
    server.listen(1)
    return server


__all__ = ["MAX_LINE", "AcpcConnection", "ClientGone", "listen"]
