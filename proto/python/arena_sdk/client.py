"""``run(bot)``: connect to the referee, play the whole match on one gRPC stream, return the result.

One thread does everything: an asyncio loop on grpc.aio reads the referee's messages in order, calls the bot, and
writes its answers on the same stream (``arena_sdk.session``; gRPC's synchronous stream handed each message between
three threads: its channel poller, the reader and the request iterator's consumer). Several tables on one stream
(``Bot.max_tables``) need nothing more: each request names its table, and each answer echoes it. With more than one
table the SDK asks for batches: every request of a ``RefereeBatch`` is answered (by ``act`` on each, or by a bot's
``act_batch`` in one call) and all the answers go back in one ``ActionBatch``, one write (``arena_sdk.dispatch``).

The bot's callbacks run on that loop, one message at a time, in order: a plain ``def`` is called, an ``async def``
awaited (``arena_sdk.callbacks``). A plain callback cannot run a loop of its own there (``asyncio.run``): asyncio
refuses, and the SDK's log says to declare it ``async def``, answering with the safe action as for any exception.

Network and protocol failures never raise: they are logged and end up in ``MatchResult.error``. Only a missing
address or token stops the program (exit status 2). A match's stream that breaks before its MatchEnd (a pause longer
than the referee's keepalive, a cut connection) is joined again with the same token (``arena_sdk.reconnect``), and play
goes on; a fatal Error from the referee (a bad token, a newer stream with the token) ends the match at once.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import logging
import random
import time
from collections.abc import Coroutine, Sequence
from typing import Any

import grpc

from arena_sdk.bot import Bot
from arena_sdk.pb import bot_pb2
from arena_sdk.reconnect import Reconnect
from arena_sdk.results import MatchResult
from arena_sdk.session import Session
from arena_sdk.settings import Settings, open_channel, read_settings, setup_logging

__all__ = ["PROTOCOL_VERSION", "run"]

PROTOCOL_VERSION = 1
CONNECT_TIMEOUT_S = 10.0
RECONNECT_FIRST_S = 0.5  # a league bot's first wait before reconnecting; doubled each time, up to:
RECONNECT_MAX_S = 30.0

log = logging.getLogger("arena_sdk")


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
    language: str = "python",
) -> MatchResult:
    """Play one match with ``bot`` and return its result; with a league's API key, play its matches until the
    league ends the stream. ``language`` is what the Join says the bot is written in (an adapter says what it
    adapts: the ACPC bridge says ``acpc``).

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
    settings = read_settings(bot, address, token, name, tls_ca, argv, max_tables, key, version, reconnect, reconnect_s)
    setup_logging()
    join = bot_pb2.Join(
        token=settings.token,
        bot_name=settings.name,
        bot_version=settings.version,
        protocol_version=PROTOCOL_VERSION,
        language=language,
        max_tables=settings.max_tables,
        batches=settings.batches,
    )
    if settings.league:
        return _run_loop(_play_league(bot, join, settings, connect_timeout))
    result = _run_loop(_play_match(bot, join, settings, connect_timeout))
    if result.ok:
        me = result.me
        summary = f"; you: {me.net_chips:+d} chips in {me.hands_played} hands" if me else ""
        again = f"; {result.reconnects} reconnect(s)" if result.reconnects else ""
        log.info("match %s over: %s%s%s", result.match_id, result.reason.name, summary, again)
    else:
        log.error("%s", result.error)
    return result


def _run_loop(play: Coroutine[Any, Any, MatchResult]) -> MatchResult:
    """``play`` on an event loop of its own; on a thread of its own when the caller's thread already runs a loop
    (a notebook, an asyncio program): ``run`` blocks until the match is over either way."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass  # the usual case; not played in this block, where every exception the bot's logged would chain to it
    else:
        with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="arena-sdk") as pool:
            return pool.submit(asyncio.run, play).result()
    return asyncio.run(play)


async def _ready(channel: grpc.aio.Channel, timeout: float) -> bool:
    """Whether the channel connects within ``timeout`` seconds."""
    try:
        await asyncio.wait_for(channel.channel_ready(), max(0.0, timeout))
    except TimeoutError:
        return False
    return True


async def _play_match(bot: Bot, join: bot_pb2.Join, settings: Settings, connect_timeout: float) -> MatchResult:
    """Play a match's stream; after each break (no MatchEnd, no fatal Error) take the seat back on a new stream,
    with the same Join, while ``settings.reconnect`` allows."""
    log.info("connecting to the referee at %s as %r", settings.address, settings.name)
    async with open_channel(settings) as channel:
        if not await _ready(channel, connect_timeout):
            return MatchResult.failed(f"cannot reach the referee at {settings.address} within {connect_timeout:g} s")
        session = Session(bot, join)
        result = await session.play(channel)
        reconnects = 0
        while session.broken is not None and settings.reconnect.enabled:
            rejoined = await _rejoin(bot, join, channel, settings.reconnect, session)
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


async def _rejoin(bot: Bot, join: bot_pb2.Join, channel: grpc.aio.Channel, policy: Reconnect,
                  broken: Session) -> Session | str:
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
        # a try made at the end of the time allowed is the last one (asyncio may wake a timer a hair early, which
        # would let one more try in after it)
        final = wait >= left
        await asyncio.sleep(left if final else wait)
        tries += 1
        # no wait for the channel: a referee that is away fails the call at once (UNAVAILABLE), one more try
        session = Session(bot, join, match_id=broken.match_id, broke_at=broke_at)
        await session.play(channel)
        if session.broken is None or (session.welcomed and session.asked):
            return session
        why = session.broken
        log.warning("reconnect try %d failed (%s)%s", tries, why,
                    ": it broke again before any request" if session.welcomed else "")
        if final:
            break
    return (f"the stream broke before MatchEnd and {tries} tries to join again in {policy.for_s:g} s failed "
            f"(last: {why})")


async def _play_league(bot: Bot, join: bot_pb2.Join, settings: Settings, connect_timeout: float) -> MatchResult:
    """Play a league's matches on one stream, reconnecting with backoff whenever the host goes away, until the host
    ends the stream with a fatal Error (a revoked or replaced key, a kick) or the program is interrupted."""
    backoff = RECONNECT_FIRST_S
    matches = 0
    while True:
        log.info("connecting to the league at %s as %r", settings.address, settings.name)
        session = Session(bot, join, league=True)
        async with open_channel(settings) as channel:
            if not await _ready(channel, connect_timeout):
                log.warning("cannot reach the league at %s; trying again in %.1f s", settings.address, backoff)
            else:
                result = await session.play(channel)
                matches += session.matches
                if session.fatal is not None:
                    log.error("the league ended this bot's stream: %s (%d matches played)", session.fatal, matches)
                    return result
                if session.welcomed or session.matches:
                    backoff = RECONNECT_FIRST_S  # it was playing: the host just went away
                log.warning("%s; reconnecting in %.1f s", result.error or "the stream ended", backoff)
        await asyncio.sleep(backoff * random.uniform(0.8, 1.2))  # jitter: a restarted host's bots return apart
        backoff = min(RECONNECT_MAX_S, backoff * 2)
