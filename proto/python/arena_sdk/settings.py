"""What ``run`` is told to do: the referee's address, the token or league key, the name, TLS, tables, batches and
the reconnect policy, from ``run``'s arguments, the command line and the environment (in that order of precedence,
except the name and version, which whoever launches the bot may override); and the gRPC channel they describe.

A missing address or token, or a setting that cannot be read, stops the program with a one-line usage error (exit
status 2, as argparse does); ``--help`` prints every setting and exits 0.
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

import grpc

from arena_sdk.bot import Bot
from arena_sdk.reconnect import Reconnect

log = logging.getLogger("arena_sdk")


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything ``run`` was told, read once: where, who, how many tables, batches or not, and reconnects."""

    address: str
    token: str
    name: str
    tls_ca: str | None
    max_tables: int
    batches: bool
    league: bool = False  # the token is a league's API key: play match after match on one stream
    version: str = ""
    reconnect: Reconnect = field(default_factory=Reconnect)  # a broken match stream is joined again


def batches_itself(bot: Bot) -> bool:
    """Whether the bot answers batches itself (it overrides ``act_batch``)."""
    return type(bot).act_batch is not Bot.act_batch


def _kebab(text: str) -> str:
    """``CallingStation`` -> ``calling-station``: a default display name from a class name."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", text).lower() or "bot"


def _usage_error(message: str) -> SystemExit:
    """Print a one-line usage error and build the SystemExit (status 2, as argparse does) to raise."""
    print(f"arena_sdk: {message}", file=sys.stderr)
    return SystemExit(2)


_HELP = """\
usage: {prog} [--address HOST:PORT] [--token TOKEN | --key KEY] [options]

Plays an arena match with the bot {bot} (arena_sdk); with a league's key, the league's matches until it ends.
Arguments win over the environment; a bot's own arguments, if it has any, are its own.

  --address HOST:PORT  ARENA_ADDRESS      the referee (required)
  --token TOKEN        ARENA_TOKEN        the seat's token for a match (the runner gives each bot its own)
  --key KEY            ARENA_KEY          a league's API key, instead of a token (arena bots add prints it)
  --name NAME          ARENA_BOT_NAME     the name in the Join (default: {name})
  --bot-version V      ARENA_BOT_VERSION  the version in the Join (a league rates each version apart)
  --tls-ca FILE        ARENA_TLS_CA       a root certificate: TLS instead of plaintext
  --max-tables N       ARENA_MAX_TABLES   tables played at once (default: the bot's max_tables, {tables})
  --batches            ARENA_BATCHES=1    ask for requests in batches (always with more than one table)
  --no-reconnect       ARENA_RECONNECT=0  do not join again when the stream breaks before MatchEnd
  --reconnect-s S      ARENA_RECONNECT_S  give up joining again S seconds after the break (default 60)
                       ARENA_LOG_LEVEL    INFO (default) or DEBUG (every action)

Exit status: 0 after MatchEnd, 1 when the match could not be played to its end, 2 for a usage error.
"""


def _help(bot: Bot, name: str | None) -> SystemExit:
    """Print what a bot's command line and environment may say (``--help``) and build the SystemExit (0)."""
    print(_HELP.format(prog=os.path.basename(sys.argv[0]) or "bot", bot=type(bot).__name__,
                       name=name or _kebab(type(bot).__name__), tables=bot.max_tables), end="")
    return SystemExit(0)


def read_settings(
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
) -> Settings:
    """``run``'s settings from its arguments, ``argv`` (default ``sys.argv``) and the environment; see ``run``."""
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
    parser.add_argument("-h", "--help", action="store_true")
    args, _unknown = parser.parse_known_args(list(sys.argv[1:] if argv is None else argv))
    if args.help:
        raise _help(bot, name)
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
               or batches_itself(bot))
    return Settings(address, token or key or "", name, tls_ca, max(1, int(tables)), batches, league=not token,
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


def setup_logging() -> None:
    """Log to stderr (level from ARENA_LOG_LEVEL, default INFO) unless the program configured logging itself."""
    if log.handlers or logging.getLogger().handlers:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("[arena_sdk] %(levelname)s %(message)s"))
    log.addHandler(handler)
    log.setLevel(os.environ.get("ARENA_LOG_LEVEL", "INFO").upper())


def open_channel(settings: Settings) -> grpc.aio.Channel:
    """The channel to the referee (grpc.aio: open it inside the event loop that plays on it): TLS when a root
    certificate is given, quick retries while it is not up yet."""
    options = [
        # Retry quickly while the referee is not up yet (it may start a moment after the bot).
        ("grpc.initial_reconnect_backoff_ms", 100),
        ("grpc.min_reconnect_backoff_ms", 100),
        ("grpc.max_reconnect_backoff_ms", 1000),
    ]
    if settings.tls_ca:
        with open(settings.tls_ca, "rb") as f:
            credentials = grpc.ssl_channel_credentials(root_certificates=f.read())
        return grpc.aio.secure_channel(settings.address, credentials, options=options)
    return grpc.aio.insecure_channel(settings.address, options=options)
