"""``run(bot)``: connect to the referee, play the whole match on one gRPC stream, return the result.

One thread does everything: it reads the referee's messages in order and calls the bot; the bot's answers go
through a queue to the request stream that gRPC sends from. Several tables on one stream (``Bot.max_tables``)
need nothing more: each request names its table, and each answer echoes it. A bot that overrides ``act_batch`` asks
for batches and gets every request of a ``RefereeBatch`` in one call, answered in one ``ActionBatch``.

Network and protocol failures never raise: they are logged and end up in ``MatchResult.error``. Only a missing
address or token stops the program (exit status 2). A match's stream that breaks before its MatchEnd (a pause longer
than the referee's keepalive, a cut connection) is joined again with the same token (arena.sdk.reconnect), and play
goes on; a fatal Error from the referee (a bad token, a newer stream with the token) ends the match at once.

The path from a request to its answer is kept short, since it sets how fast a quick bot can play: the request is
read lazily (``Request``), the answer built in place and handed over through a ``SimpleQueue``.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import logging
import math
import os
import queue
import random
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import TypeVar

import grpc

from arena.sdk.actions import Action, Mixed, safe_action
from arena.sdk.bot import Bot
from arena.sdk.reconnect import Reconnect, worth_a_new_stream
from arena.sdk.request import Request
from arena.sdk.types import ActionKind
from arena.transport.pb import bot_pb2, bot_pb2_grpc, poker_pb2

__all__ = ["PROTOCOL_VERSION", "BotResult", "MatchEndReason", "MatchResult", "run"]

PROTOCOL_VERSION = 1
CONNECT_TIMEOUT_S = 10.0
RECONNECT_FIRST_S = 0.5  # a league bot's first wait before reconnecting; doubled each time, up to:
RECONNECT_MAX_S = 30.0
_DRAIN_TIMEOUT_S = 2.0  # after MatchEnd or a fatal Error, how long to wait for the referee to end the stream

log = logging.getLogger("arena.sdk")

_T = TypeVar("_T")


class MatchEndReason(IntEnum):
    """Why a match ended (arena.v1.MatchEndReason); UNSPECIFIED when it never properly ended (see ``error``)."""

    UNSPECIFIED = 0
    COMPLETED = 1
    FORFEIT = 2
    ABORTED = 3

    @classmethod
    def _missing_(cls, value: object) -> MatchEndReason:
        return cls.UNSPECIFIED


@dataclass(frozen=True, slots=True)
class BotResult:
    """One bot's result over the match (arena.v1.BotResult); ``is_you`` marks your own."""

    seat: int
    name: str
    net_chips: int
    hands_played: int
    violations: int = 0
    forfeited: bool = False
    is_you: bool = False


@dataclass(frozen=True, slots=True)
class MatchResult:
    """How the match ended for this bot: the referee's MatchEnd, or ``error`` if it never came; ``reconnects``:
    how many times the SDK took the seat back on a new stream after one broke."""

    reason: MatchEndReason
    message: str
    results: tuple[BotResult, ...] = ()
    match_id: str = ""
    error: str | None = None
    reconnects: int = 0

    @property
    def ok(self) -> bool:
        """Whether the match ended with a MatchEnd (whatever its reason)."""
        return self.error is None

    @property
    def exit_code(self) -> int:
        """Process exit status for a bot script: 0 after MatchEnd (reconnects or not), 1 otherwise
        (``raise SystemExit(r.exit_code)``)."""
        return 0 if self.ok else 1

    @property
    def me(self) -> BotResult | None:
        """Your own result, if the referee sent one."""
        return next((r for r in self.results if r.is_you), None)

    @classmethod
    def from_pb(cls, pb: bot_pb2.MatchEnd) -> MatchResult:
        """Read the protocol message."""
        results = tuple(
            BotResult(
                seat=r.seat,
                name=r.name,
                net_chips=int(r.net_chips),
                hands_played=int(r.hands_played),
                violations=r.violations,
                forfeited=r.forfeited,
                is_you=r.is_you,
            )
            for r in pb.results
        )
        return cls(MatchEndReason(pb.reason), pb.message, results, pb.match_id)

    @classmethod
    def failed(cls, error: str, match_id: str = "") -> MatchResult:
        """A match that ended without a MatchEnd."""
        return cls(MatchEndReason.UNSPECIFIED, error, (), match_id, error)


# ----------------------------------------------------------------------------------------------- configuration


@dataclass(frozen=True, slots=True)
class _Settings:
    address: str
    token: str
    name: str
    tls_ca: str | None
    max_tables: int
    batches: bool
    league: bool = False  # the token is a league's API key: play match after match on one stream
    version: str = ""
    reconnect: Reconnect = field(default_factory=Reconnect)  # a broken match stream is joined again


def _batches_itself(bot: Bot) -> bool:
    """Whether the bot answers batches itself (it overrides ``act_batch``)."""
    return type(bot).act_batch is not Bot.act_batch


def _kebab(text: str) -> str:
    """``CallingStation`` -> ``calling-station``: a default display name from a class name."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", text).lower() or "bot"


def _usage_error(message: str) -> SystemExit:
    """Print a one-line usage error and build the SystemExit (status 2, as argparse does) to raise."""
    print(f"arena.sdk: {message}", file=sys.stderr)
    return SystemExit(2)


def _settings(
    bot: Bot,
    address: str | None,
    token: str | None,
    name: str | None,
    tls_ca: str | None,
    argv: Sequence[str] | None,
    max_tables: int | None = None,
    key: str | None = None,
    version: str = "",
    reconnect: bool | None = None,
    reconnect_s: float | None = None,
) -> _Settings:
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--address")
    parser.add_argument("--token")
    parser.add_argument("--key")
    parser.add_argument("--bot-version")
    parser.add_argument("--name")
    parser.add_argument("--tls-ca")
    parser.add_argument("--max-tables")
    parser.add_argument("--batches", action="store_true")
    parser.add_argument("--no-reconnect", action="store_true")
    parser.add_argument("--reconnect-s")
    args, _unknown = parser.parse_known_args(list(sys.argv[1:] if argv is None else argv))
    env = os.environ
    address = address or args.address or env.get("ARENA_ADDRESS")
    token = token or args.token or env.get("ARENA_TOKEN")
    key = None if token else key or args.key or env.get("ARENA_KEY")  # a match's token wins over a league key
    # The name in the code is only a default: whoever launches the bot may rename it.
    name = args.name or env.get("ARENA_BOT_NAME") or name or _kebab(type(bot).__name__)
    tls_ca = tls_ca or args.tls_ca or env.get("ARENA_TLS_CA") or None
    version = args.bot_version or env.get("ARENA_BOT_VERSION") or version  # a league rates each version apart
    if not address:
        raise _usage_error("no referee address: pass --address HOST:PORT or set ARENA_ADDRESS")
    if not token and not key:
        raise _usage_error("no token or key: pass --token TOKEN or set ARENA_TOKEN for a match (the runner gives "
                           "each bot its own), or --key KEY / ARENA_KEY for a league (arena bots add prints it)")
    tables_text = args.max_tables or env.get("ARENA_MAX_TABLES") or None  # an empty variable is no setting
    if tables_text is not None:
        if not tables_text.strip().isdigit() or int(tables_text) < 1:
            raise _usage_error(f"--max-tables / ARENA_MAX_TABLES {tables_text!r}: expected a whole number, at least 1")
        max_tables = int(tables_text)
    tables = max_tables if max_tables is not None else bot.max_tables
    # batches cost a bot on several tables nothing (the SDK unpacks them) and save the referee a message per request
    batches = (args.batches or env.get("ARENA_BATCHES", "") in ("1", "true", "yes") or tables > 1
               or _batches_itself(bot))
    return _Settings(address, token or key or "", name, tls_ca, max(1, int(tables)), batches, league=not token,
                     version=version, reconnect=_reconnect_policy(args, reconnect, reconnect_s))


_YES = ("1", "true", "yes", "on")
_NO = ("0", "false", "no", "off")


def _reconnect_policy(args: argparse.Namespace, reconnect: bool | None, reconnect_s: float | None) -> Reconnect:
    """Whether and how long a broken match stream is joined again: ``--no-reconnect``, else ``ARENA_RECONNECT``,
    else ``reconnect``, else on; for ``--reconnect-s``, else ``ARENA_RECONNECT_S``, else ``reconnect_s``, else 60 s
    (whoever launches the bot may change what its code says)."""
    env = os.environ
    switch = (env.get("ARENA_RECONNECT") or "").strip().lower()
    if switch and switch not in _YES + _NO:
        raise _usage_error(f"ARENA_RECONNECT {switch!r}: expected 1 (reconnect after a broken stream) or 0 (do not)")
    enabled = not args.no_reconnect and (switch in _YES if switch else reconnect is not False)
    seconds_text = args.reconnect_s or env.get("ARENA_RECONNECT_S") or None
    seconds = Reconnect().for_s if reconnect_s is None else reconnect_s
    if seconds_text is not None:
        try:
            seconds = float(seconds_text)
        except ValueError:
            seconds = -1.0
    if not (math.isfinite(seconds) and seconds > 0):
        given = seconds_text if seconds_text is not None else seconds
        raise _usage_error(f"--reconnect-s / ARENA_RECONNECT_S / reconnect_s {given!r}: expected seconds, more than 0 "
                           "(how long to keep trying to join again after a broken stream)")
    return Reconnect(enabled=enabled, for_s=seconds)


def _setup_logging() -> None:
    """Log to stderr (level from ARENA_LOG_LEVEL, default INFO) unless the program configured logging itself."""
    if log.handlers or logging.getLogger().handlers:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("[arena.sdk] %(levelname)s %(message)s"))
    log.addHandler(handler)
    log.setLevel(os.environ.get("ARENA_LOG_LEVEL", "INFO").upper())


def _channel(settings: _Settings) -> grpc.Channel:
    options = [
        # Retry quickly while the referee is not up yet (it may start a moment after the bot).
        ("grpc.initial_reconnect_backoff_ms", 100),
        ("grpc.min_reconnect_backoff_ms", 100),
        ("grpc.max_reconnect_backoff_ms", 1000),
    ]
    if settings.tls_ca:
        with open(settings.tls_ca, "rb") as f:
            credentials = grpc.ssl_channel_credentials(root_certificates=f.read())
        return grpc.secure_channel(settings.address, credentials, options=options)
    return grpc.insecure_channel(settings.address, options=options)


# ----------------------------------------------------------------------------------------------- the match


class _Session:
    """One stream: the referee's messages in, the bot's hooks called, Actions out. A match's stream ends with its
    MatchEnd; a league's (``league``) plays match after match until the host ends it. ``broke_at``: for a stream
    that takes the seat back after another broke, when that one broke (``time.monotonic``)."""

    def __init__(self, bot: Bot, join: bot_pb2.Join, league: bool = False, match_id: str = "",
                 broke_at: float | None = None) -> None:
        self.bot = bot
        self.join = join
        self.league = league
        self.broke_at = broke_at
        self.matches = 0  # MatchEnds heard
        self.welcomed = False
        self.asked = 0  # ActionRequests received
        self.fatal: str | None = None  # a fatal Error the referee sent: do not reconnect
        self.broken: str | None = None  # why a match's stream broke before its MatchEnd, if a new one may help
        self.outbox: queue.SimpleQueue[bot_pb2.BotMessage | None] = queue.SimpleQueue()
        self.open: dict[str, Request] = {}  # table_id -> the latest request (kept for rejections)
        self.result: MatchResult | None = None
        self.match_id = match_id
        self._answers: list[bot_pb2.BotMessage] | None = None  # while a batch is handled: its answers, sent as one
        self._custom_batch = _batches_itself(bot)

    def _outgoing(self) -> Iterator[bot_pb2.BotMessage]:
        get = self.outbox.get
        while (msg := get()) is not None:
            yield msg

    def play(self, channel: grpc.Channel) -> MatchResult:
        stub = bot_pb2_grpc.BotServiceStub(channel)
        self.outbox.put(bot_pb2.BotMessage(join=self.join))
        call = stub.Play(self._outgoing())
        timer: threading.Timer | None = None
        try:
            for msg in call:
                self._handle(msg)
                if self.league and self.fatal is None:
                    continue  # a league's stream stays open across matches
                if self.result is not None and timer is None:
                    self.outbox.put(None)  # half-close: we have nothing more to say
                    timer = threading.Timer(_DRAIN_TIMEOUT_S, call.cancel)
                    timer.daemon = True
                    timer.start()
        except grpc.RpcError as e:
            why = f"{e.code().name}: {e.details() or ''}".rstrip(": ")
            if self.league and self.fatal is None:
                self.result = MatchResult.failed(f"the league's stream broke: {why}", self.match_id)
            elif not self.league and not self.matches and self.fatal is None and worth_a_new_stream(e.code()):
                self.broken = why  # no MatchEnd, no fatal Error (a rate limit's is not): a new stream may play on
                if self.result is None:
                    self.result = MatchResult.failed(f"the stream broke before MatchEnd: {why}", self.match_id)
            elif self.result is None:
                self.result = MatchResult.failed(f"the stream broke before MatchEnd: {why}", self.match_id)
        finally:
            self.outbox.put(None)
            if timer is not None:
                timer.cancel()
        if self.league:
            if self.result is None or (self.fatal is None and self.result.ok):
                self.result = MatchResult.failed("the host ended the league's stream", self.match_id)
            return self.result
        if self.result is None:
            self.result = MatchResult.failed("the referee ended the stream before MatchEnd", self.match_id)
        return self.result

    # ------------------------------------------------------------------ dispatch

    def _handle(self, msg: bot_pb2.RefereeMessage) -> None:
        which = msg.WhichOneof("msg")
        if which == "action_request":
            self._on_request(msg.action_request)
        elif which == "batch":
            self._on_batch(msg.batch)
        elif which == "action_rejected":
            self._on_rejected(msg.action_rejected)
        elif which == "hand_start":
            self._hook("on_hand_start", self.bot.on_hand_start, msg.hand_start)
        elif which == "hand_end":
            self.open.pop(msg.hand_end.table_id, None)
            self._hook("on_hand_end", self.bot.on_hand_end, msg.hand_end)
        elif which == "welcome":
            w = msg.welcome
            self.match_id = w.match_id
            self.welcomed = True
            tables = f"; {w.tables} tables at once" + (", in batches" if w.batches else "") if w.tables > 1 else ""
            if self.broke_at is None:
                log.info("joined match %s as %r: table %s, seat %d, %d hands%s", w.match_id, self.join.bot_name,
                         w.table_id, w.seat, w.hands_total, tables)
            else:
                log.warning("reconnected: rejoined match %s as %r %.1f s after the stream broke: table %s, seat %d%s",
                            w.match_id, self.join.bot_name, time.monotonic() - self.broke_at, w.table_id, w.seat,
                            tables)
            self._hook("on_welcome", self.bot.on_welcome, w)
        elif which == "match_end":
            self._hook("on_match_end", self.bot.on_match_end, msg.match_end)
            self.result = MatchResult.from_pb(msg.match_end)
            self.matches += 1
            if self.league:
                me = self.result.me
                log.info("match %s over%s; waiting for the next one", self.result.match_id,
                         f": you {me.net_chips:+d} chips in {me.hands_played} hands" if me else "")
        elif which == "error":
            self._on_error(msg.error)
        else:
            log.debug("ignoring a message this SDK does not know: %s", which)

    def _read_request(self, pb: bot_pb2.ActionRequest) -> Request | None:
        """The request, noted as its table's open one; None (answered check-if-free-else-fold) if unreadable."""
        try:
            request = Request(pb)
        except Exception:
            log.exception("cannot read request %d; answering check-if-free-else-fold", pb.request_id)
            kind = ActionKind.CHECK if pb.legal.can_check else ActionKind.FOLD
            self._send_pb(pb.table_id, pb.hand_id, pb.request_id, int(kind), 0)
            return None
        self.asked += 1
        self.open[request.table_id] = request
        return request

    def _on_request(self, pb: bot_pb2.ActionRequest) -> None:
        request = self._read_request(pb)
        if request is not None:
            action = self._decide("act", self.bot.act, request)
            self._send(request, action or safe_action(request))

    def _on_batch(self, batch: bot_pb2.RefereeBatch) -> None:
        """Every message of a batch in order; its requests answered together (``act_batch``), all its answers sent
        in one ActionBatch."""
        self._answers = []
        requests: list[Request] = []
        try:
            for inner in batch.messages:
                if inner.WhichOneof("msg") == "action_request":
                    request = self._read_request(inner.action_request)
                    if request is not None:
                        requests.append(request)
                elif inner.WhichOneof("msg") != "batch":  # never nested; one that is would be ignored
                    self._handle(inner)
            if requests:
                self._answer_all(requests)
        finally:
            answers, self._answers = self._answers, None
        if len(answers) == 1:
            self.outbox.put(answers[0])
        elif answers:
            out = bot_pb2.BotMessage()
            out.actions.actions.extend(a.action for a in answers)
            self.outbox.put(out)

    def _answer_all(self, requests: list[Request]) -> None:
        if not self._custom_batch:  # act on each, each failure on its own
            for request in requests:
                self._send(request, self._decide("act", self.bot.act, request) or safe_action(request))
            return
        try:
            actions = list(self.bot.act_batch(requests))
            if len(actions) != len(requests):
                raise ValueError(f"act_batch returned {len(actions)} actions for {len(requests)} requests")
        except Exception:
            log.exception("%s.act_batch raised; sending the safe action for all %d requests",
                          type(self.bot).__name__, len(requests))
            actions = [safe_action(r) for r in requests]
        for request, action in zip(requests, actions, strict=True):
            if not isinstance(action, (Action, Mixed)):
                log.error("%s.act_batch gave %r for request %d, not an Action; sending %s", type(self.bot).__name__,
                          action, request.request_id, safe_action(request))
                action = safe_action(request)
            self._send(request, action)

    def _on_rejected(self, rejection: bot_pb2.ActionRejected) -> None:
        request = self.open.get(rejection.table_id)
        if request is None or (request.hand_id, request.request_id) != (rejection.hand_id, rejection.request_id):
            log.warning("rejection for request %d, which is not open here: %s", rejection.request_id, rejection.message)
            return
        log.warning(
            "request %d: action rejected (%s, %d retries left): %s",
            rejection.request_id,
            rejection.rule,
            rejection.retries_left,
            rejection.message,
        )
        action = self._decide("on_rejected", functools.partial(self.bot.on_rejected, rejection), request)
        self._send(request, action or safe_action(request))

    def _on_error(self, error: bot_pb2.Error) -> None:
        code = bot_pb2.ErrorCode.Name(error.code) if error.code in bot_pb2.ErrorCode.values() else str(error.code)
        text = f"referee error {code}: {error.message}"
        self._hook("on_error", self.bot.on_error, error)
        if error.fatal:
            self.result = MatchResult.failed(text, self.match_id)
            if error.code != bot_pb2.ERROR_CODE_RATE_LIMITED:  # a league bot joins again later after that one
                self.fatal = text
        else:
            log.warning("%s", text)

    # ------------------------------------------------------------------ calling the bot safely

    def _hook(self, name: str, hook: Callable[[_T], object], msg: _T) -> None:
        try:
            hook(msg)
        except Exception:
            log.exception("%s.%s raised; carrying on", type(self.bot).__name__, name)

    def _decide(self, name: str, decide: Callable[[Request], object], request: Request) -> Action | Mixed | None:
        """The bot's answer, or None (meaning: send the safe action) if it raised or returned a non-Action."""
        try:
            action = decide(request)
        except Exception:
            log.exception(
                "%s.%s raised on request %d; sending %s",
                type(self.bot).__name__,
                name,
                request.request_id,
                safe_action(request),
            )
            return None
        if action is None and name == "on_rejected":
            return None
        if not isinstance(action, (Action, Mixed)):
            log.error(
                "%s.%s returned %r, not an Action; sending %s",
                type(self.bot).__name__,
                name,
                action,
                safe_action(request),
            )
            return None
        return action

    def _send(self, request: Request, action: Action | Mixed) -> None:
        log.debug("request %d: %s", request.request_id, action)
        if isinstance(action, Mixed):
            self._send_pb(request.table_id, request.hand_id, request.request_id, 0, 0, action)
            return
        amount = action.amount if action.kind is ActionKind.RAISE else 0
        self._send_pb(request.table_id, request.hand_id, request.request_id, int(action.kind), amount)

    def _send_pb(self, table_id: str, hand_id: str, request_id: int, kind: int, amount: int,
                 policy: Mixed | None = None) -> None:
        msg = bot_pb2.BotMessage()
        action = msg.action  # built in place: half the cost of building an Action and copying it in
        action.SetInParent()
        action.table_id = table_id
        action.hand_id = hand_id
        action.request_id = request_id
        action.kind = poker_pb2.ActionKind.ValueType(kind)
        action.amount = amount
        for choice, probability in policy.choices if policy is not None else ():
            action.policy.add(kind=poker_pb2.ActionKind.ValueType(int(choice.kind)), probability=probability,
                              amount=choice.amount if choice.kind is ActionKind.RAISE else 0)
        if self._answers is not None:
            self._answers.append(msg)
        else:
            self.outbox.put(msg)


def run(
    bot: Bot,
    *,
    address: str | None = None,
    token: str | None = None,
    name: str | None = None,
    version: str = "",
    argv: Sequence[str] | None = None,
    tls_ca: str | None = None,
    connect_timeout: float = CONNECT_TIMEOUT_S,
    max_tables: int | None = None,
    key: str | None = None,
    reconnect: bool | None = None,
    reconnect_s: float | None = None,
) -> MatchResult:
    """Play one match with ``bot`` and return its result; with a league's API key, play its matches until the
    league ends the stream.

    ``address`` and ``token`` come from the arguments, else ``--address``/``--token`` in ``argv`` (default
    ``sys.argv``), else the environment (``ARENA_ADDRESS``, ``ARENA_TOKEN``); if either is missing the program
    exits with status 2. The display name comes from ``--name``, else ``ARENA_BOT_NAME``, else ``name``, else the
    class name, so a launcher can rename a bot; the version from ``--bot-version``, else ``ARENA_BOT_VERSION``, else
    ``version``. TLS is used when a root certificate is given (``tls_ca``,
    ``--tls-ca`` or ``ARENA_TLS_CA``). Waits up to ``connect_timeout`` seconds for the referee to come up.
    The tables played at once are ``--max-tables``, else ``ARENA_MAX_TABLES``, else ``max_tables``, else
    ``bot.max_tables``; batches are asked for with more than one table, when the bot overrides ``act_batch``, or with
    ``--batches`` (``ARENA_BATCHES=1``).

    When the match's stream breaks before its MatchEnd (the referee's keepalive closed it while the process was
    stopped, the connection was cut), the SDK opens a new one with the same Join (token, name, version, tables,
    batches) and plays on: it waits 0.25 s, then twice as long after each failed try up to 5 s, and gives up
    ``reconnect_s`` (default 60) seconds after the break. Requests that were open meanwhile are played by the
    referee's time-out policy; ``on_welcome`` is called again with the new Welcome. ``--no-reconnect``,
    ``ARENA_RECONNECT=0`` or ``reconnect=False`` switch this off; ``--reconnect-s`` or ``ARENA_RECONNECT_S``
    override ``reconnect_s``. The referee's MatchEnd and its fatal Errors (a bad token, a newer stream with the same
    token, an unsupported protocol version) are never retried.

    With a key (``key``, ``--key`` or ``ARENA_KEY``, and no token) the bot joins a league (``arena host``): one
    stream plays match after match (each begins with a Welcome and ends with a MatchEnd); when the host goes away
    the bot reconnects, waiting 0.5 s, then twice as long each time up to 30 s; it stops only when the host ends
    its stream with a fatal Error (revoked or replaced key, kicked; a rate limit only makes it wait), returning
    that as the result's error.
    """
    settings = _settings(bot, address, token, name, tls_ca, argv, max_tables, key, version, reconnect, reconnect_s)
    _setup_logging()
    join = bot_pb2.Join(
        token=settings.token,
        bot_name=settings.name,
        bot_version=settings.version,
        protocol_version=PROTOCOL_VERSION,
        language="python",
        max_tables=settings.max_tables,
        batches=settings.batches,
    )
    if settings.league:
        return _play_league(bot, join, settings, connect_timeout)
    result = _play_match(bot, join, settings, connect_timeout)
    if result.ok:
        me = result.me
        summary = f"; you: {me.net_chips:+d} chips in {me.hands_played} hands" if me else ""
        again = f"; {result.reconnects} reconnect(s)" if result.reconnects else ""
        log.info("match %s over: %s%s%s", result.match_id, result.reason.name, summary, again)
    else:
        log.error("%s", result.error)
    return result


def _ready(channel: grpc.Channel, timeout: float) -> bool:
    """Whether the channel connects within ``timeout`` seconds."""
    future = grpc.channel_ready_future(channel)
    try:
        future.result(timeout=max(0.0, timeout))
    except grpc.FutureTimeoutError:
        future.cancel()
        return False
    return True


def _play_match(bot: Bot, join: bot_pb2.Join, settings: _Settings, connect_timeout: float) -> MatchResult:
    """Play a match's stream; after each break (no MatchEnd, no fatal Error) take the seat back on a new stream,
    with the same Join, while ``settings.reconnect`` allows."""
    log.info("connecting to the referee at %s as %r", settings.address, settings.name)
    with _channel(settings) as channel:
        if not _ready(channel, connect_timeout):
            return MatchResult.failed(f"cannot reach the referee at {settings.address} within {connect_timeout:g} s")
        session = _Session(bot, join)
        result = session.play(channel)
        reconnects = 0
        while session.broken is not None and settings.reconnect.enabled:
            rejoined = _rejoin(bot, join, channel, settings.reconnect, session)
            if isinstance(rejoined, str):
                result = MatchResult.failed(rejoined, session.match_id)
                break
            session = rejoined
            result = session.result or result  # ``_rejoin`` played it to its end
            reconnects += session.welcomed
        if session.broken is not None and not settings.reconnect.enabled:
            result = MatchResult.failed(f"{result.error}; not joining again: reconnecting is off (--no-reconnect, "
                                        "ARENA_RECONNECT=0 or reconnect=False)", session.match_id)
        return dataclasses.replace(result, reconnects=reconnects)


def _rejoin(bot: Bot, join: bot_pb2.Join, channel: grpc.Channel, policy: Reconnect,
            broken: _Session) -> _Session | str:
    """New streams with ``join`` after ``broken`` broke, waiting as ``policy`` says between tries: the first that
    played on (it was welcomed and asked to act, or heard its MatchEnd) or that ended for good (a fatal Error), each
    played to its end; or why it gave up. A stream that breaks again before any request is one more failed try, so
    that a referee that welcomes and then fails every stream is not tried forever."""
    broke_at = time.monotonic()
    why = broken.broken
    log.warning("the stream broke before MatchEnd (%s); reconnecting with the same token: %s", why,
                policy.describe())
    tries = 0
    for wait in policy.waits():
        left = policy.for_s - (time.monotonic() - broke_at)
        if left <= 0:
            break
        time.sleep(min(wait, left))
        tries += 1
        # no wait for the channel: a referee that is away fails the call at once (UNAVAILABLE), one more try
        session = _Session(bot, join, match_id=broken.match_id, broke_at=broke_at)
        session.play(channel)
        if session.broken is None or (session.welcomed and session.asked):
            return session
        why = session.broken
        log.warning("reconnect try %d failed (%s)%s", tries, why,
                    ": it broke again before any request" if session.welcomed else "")
    return (f"the stream broke before MatchEnd and {tries} tries to join again in {policy.for_s:g} s failed "
            f"(last: {why})")


def _play_league(bot: Bot, join: bot_pb2.Join, settings: _Settings, connect_timeout: float) -> MatchResult:
    """Play a league's matches on one stream, reconnecting with backoff whenever the host goes away, until the host
    ends the stream with a fatal Error (a revoked or replaced key, a kick) or the program is interrupted."""
    backoff = RECONNECT_FIRST_S
    matches = 0
    while True:
        log.info("connecting to the league at %s as %r", settings.address, settings.name)
        session = _Session(bot, join, league=True)
        with _channel(settings) as channel:
            try:
                grpc.channel_ready_future(channel).result(timeout=connect_timeout)
            except grpc.FutureTimeoutError:
                log.warning("cannot reach the league at %s; trying again in %.1f s", settings.address, backoff)
            else:
                result = session.play(channel)
                matches += session.matches
                if session.fatal is not None:
                    log.error("the league ended this bot's stream: %s (%d matches played)", session.fatal, matches)
                    return result
                if session.welcomed or session.matches:
                    backoff = RECONNECT_FIRST_S  # it was playing: the host just went away
                log.warning("%s; reconnecting in %.1f s", result.error or "the stream ended", backoff)
        time.sleep(backoff * random.uniform(0.8, 1.2))  # jitter: bots of a restarted host do not return at once
        backoff = min(RECONNECT_MAX_S, backoff * 2)
