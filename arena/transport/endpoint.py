"""Who a token or a key is, and its newest session: the one place where "the newest stream wins".

An ``Endpoint`` is what a Join names: a match seat's token, or a league bot's API key (arena.league), whose one
stream plays seats of many matches. It keeps its state (waiting, joined, gone, closed) as streams join and end, and
the session of the newest stream that joined. The seats played over it (``RemoteSeat``, one per table) hold no
connection state: they ask their endpoint for the session, and are told when a new one joins, to welcome it.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from collections.abc import Callable
from typing import Protocol

from arena.referee import Introduction, SeatUnavailable
from arena.transport.session import BotSession, Connection, error_message
from arena_sdk.pb import bot_pb2

log = logging.getLogger("arena.transport")

Refusal = tuple["bot_pb2.ErrorCode.ValueType", str, str]  # why a join is refused: error code, gRPC status, words


class Credential(enum.Enum):
    """What a Join's ``token`` field carries for an endpoint (the word its messages use)."""

    TOKEN = "token"  # a match seat's secret, made for the match
    KEY = "key"  # a league bot's API key (arena.records.registry)


class EndpointState(enum.Enum):
    """Where an endpoint stands with its bot."""

    WAITING = "waiting"  # no stream has joined with its token or key yet
    JOINED = "joined"  # the newest stream that joined is open: the bot is asked
    GONE = "gone"  # that stream ended: the time-out policy plays for the bot until a stream joins again
    CLOSED = "closed"  # a match seat's match is over: a stream that joins is welcomed and closed at once


class Welcomed(Protocol):
    """A seat played over an endpoint: told of every session that joins, to send it its Welcome."""

    def welcome(self, session: BotSession) -> None: ...


class Endpoint:
    """A token's or a key's presence at the referee. ``name`` is the name the operator (or the league's registry)
    gave it; ``lasting`` endpoints (a league bot's) outlive the matches played over them, the others close with
    their match. ``admit`` may refuse a Join before it takes over (a league's rate of joins, a frozen ladder)."""

    def __init__(self, name: str, credential: Credential = Credential.TOKEN, token: str = "", *,
                 lasting: bool = False, admit: Callable[[bot_pb2.Join], Refusal | None] | None = None) -> None:
        self.name = name
        self.credential = credential
        self.token = token  # a match seat's token ('' for a key: the registry checks those)
        self.lasting = lasting
        self.admit = admit
        self.state = EndpointState.WAITING
        self.session: BotSession | None = None  # the newest stream's, while it is open
        self.joins = 0  # streams that took over so far
        self.peer = ""  # where the newest stream came from
        self.introduction: Introduction | None = None  # what the newest Join said of the bot
        self.on_join: Callable[[Endpoint, str, bot_pb2.Join], None] | None = None  # told of every join
        self.on_change: Callable[[], None] | None = None  # told whenever a stream joins or ends
        self.seats: dict[Welcomed, None] = {}  # the seats played over it, in the order they came
        self.told_over = False  # its match ended while its stream was open: the stream carried the MatchEnd
        self._joined = asyncio.Event()

    @property
    def live(self) -> bool:
        """Whether the bot can be asked now (its newest stream is open)."""
        return self.state is EndpointState.JOINED

    def add(self, seat: Welcomed) -> None:
        """Play ``seat`` over this endpoint: it is welcomed on every session that joins from now on, and at once on
        the current one."""
        self.seats[seat] = None
        if self.session is not None:
            seat.welcome(self.session)

    def release(self, seat: Welcomed) -> None:
        """The match of ``seat`` is over. A lasting endpoint forgets the seat; a match seat's endpoint closes: its
        stream ends after what is queued (the MatchEnd), and a stream that joins later is welcomed and closed."""
        if self.lasting:
            self.seats.pop(seat, None)
            return
        self.state = EndpointState.CLOSED
        if self.session is not None:
            self.told_over = True
            self.session.conn.close()

    def attach(self, conn: Connection, join: bot_pb2.Join) -> None:
        """A stream joined with this endpoint's token or key. The newest stream wins: one still open (a connection
        cut silently, a bot that restarted) is told why and closed, its open requests end, and the new one plays
        every seat from now on. A Join that ``admit`` refuses is told why and closed; the current stream plays on."""
        refusal = self.admit(join) if self.admit is not None else None
        if refusal is not None:
            code, status, text = refusal
            conn.send(error_message(code, text, fatal=True))
            conn.close(status, text)
            return
        old, session = self.session, BotSession(conn, join)
        self.session = session
        if old is not None and old.conn is not conn:
            word = self.credential.value
            old.send(error_message(
                bot_pb2.ERROR_CODE_BAD_TOKEN,
                f"another connection joined with your {word}; this one is closed (the newest connection plays)",
                fatal=True,
            ))
            old.conn.close("ALREADY_EXISTS", f"replaced by a newer connection with the same {word}")
            old.fail(SeatUnavailable(f"{self.name} reconnected"))
        conn.on_close = lambda: self._ended(session)
        self.joins += 1
        self.peer = conn.peer
        self.introduction = Introduction(join.bot_name, join.bot_version, join.language)
        if self.state is not EndpointState.CLOSED:
            self.state = EndpointState.JOINED
        self._joined.set()
        if self.on_join is not None:
            self.on_join(self, conn.peer, join)
        for seat in list(self.seats):
            seat.welcome(session)
        if self.state is EndpointState.CLOSED:
            conn.close()
        self._changed()

    def detach(self, conn: Connection) -> None:
        """The stream of ``conn`` ended (the bot's side, or the network): if it was the newest, the bot is gone
        until a stream joins again."""
        if self.session is not None and self.session.conn is conn:
            self._ended(self.session)

    def end(self, code: str, text: str) -> None:
        """End the current stream with a fatal error (a revoked key, a kick); the bot may join again."""
        session = self.session
        if session is not None:
            session.send(error_message(bot_pb2.ERROR_CODE_BAD_TOKEN, text, fatal=True))
            session.conn.close(code, text)

    def _ended(self, session: BotSession) -> None:
        """``session``'s stream closed or ended: its open requests end; if it was the newest, the bot is gone."""
        if session is not self.session:
            return  # replaced already: its successor plays
        session.fail(SeatUnavailable(f"{self.name} disconnected"))
        self.session = None
        if self.state is EndpointState.JOINED:
            self.state = EndpointState.GONE
        self._joined.clear()
        self._changed()

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()

    async def wait_joined(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for a stream to be joined; whether one is."""
        try:
            await asyncio.wait_for(self._joined.wait(), timeout_s)
        except TimeoutError:
            if self.state is EndpointState.GONE:  # it played, then its stream ended: a crash, a cut connection
                log.warning("%s's stream ended and it did not join again within %.1f s; its seat is played by the "
                            "time-out policy", self.name, timeout_s)
            else:
                log.warning("%s did not connect within %.1f s; its seat is played by the time-out policy", self.name,
                            timeout_s)
        return self.live
