"""``arena league status|pause|resume|freeze|unfreeze|kick``: a running league host's admin calls (LeagueAdmin over
gRPC, with the admin token the host keeps in ``<database>.admin-token``)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import grpc
from google.protobuf import json_format

from arena.cli.output import echo
from arena.text import for_terminal
from arena_sdk.pb import league_pb2, league_pb2_grpc

Metadata = tuple[tuple[str, str | bytes], ...]
Call = Callable[[league_pb2_grpc.LeagueAdminStub, Metadata], league_pb2.LeagueStatus]


def _options(func: Callable[..., Any]) -> Callable[..., Any]:
    func = click.option("--address", default="127.0.0.1:50051", show_default=True,
                        help="The host's gRPC address (its league file's grpc).")(func)
    func = click.option("--token-file", type=click.Path(dir_okay=False, path_type=Path), default=None,
                        help="The admin token's file (default: $ARENA_ADMIN_TOKEN, else league.db.admin-token).")(func)
    func = click.option("--tls-ca", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
                        help="Root certificate of a host that serves TLS.")(func)
    return click.option("--json", "as_json", is_flag=True, help="Print the league's status as JSON.")(func)


def _token(token_file: Path | None) -> str:
    """The admin token: ``$ARENA_ADMIN_TOKEN``, else the token file's one line (a file that cannot be one, such as
    a script given by mistake, is refused here: gRPC would refuse the header with its own internal error)."""
    if token_file is None and os.environ.get("ARENA_ADMIN_TOKEN"):
        token, where = os.environ["ARENA_ADMIN_TOKEN"].strip(), "$ARENA_ADMIN_TOKEN"
    else:
        path = token_file or Path("league.db.admin-token")
        where = str(path)
        try:
            token = path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
            raise click.ClickException(f"cannot read the admin token from {path}: {reason} (the host writes it "
                                       "beside its database when it starts; pass --token-file or set "
                                       "ARENA_ADMIN_TOKEN)") from None
    if not token or not all(33 <= ord(c) <= 126 for c in token):
        raise click.ClickException(f"{where} does not hold an admin token: a token is one word of printable ASCII "
                                   "(the host writes it to league.db.admin-token beside its database)")
    return token


def _call(address: str, token_file: Path | None, tls_ca: Path | None, as_json: bool, call: Call) -> None:
    metadata: Metadata = (("authorization", f"Bearer {_token(token_file)}"),)
    if tls_ca is not None:
        channel = grpc.secure_channel(address, grpc.ssl_channel_credentials(root_certificates=tls_ca.read_bytes()))
    else:
        channel = grpc.insecure_channel(address)
    with channel:
        try:
            status = call(league_pb2_grpc.LeagueAdminStub(channel), metadata)
        except grpc.RpcError as exc:
            code = exc.code()
            details = exc.details()
            if code is grpc.StatusCode.UNAVAILABLE:
                raise click.ClickException(f"no league host answers at {address} ({for_terminal(details)})") from None
            if code is grpc.StatusCode.UNAUTHENTICATED:
                raise click.ClickException(f"the host at {address} refused the admin token given: it is not this "
                                           f"league's ({code.name}: {for_terminal(details)})") from None
            raise click.ClickException(f"{code.name}: {for_terminal(details)}") from None
    if as_json:
        echo(json.dumps(json_format.MessageToDict(status, always_print_fields_with_no_presence=True),
                              indent=2))
        return
    # each word a bot or an operator chose is escaped whole (a line break in it too: echo keeps those of a message)
    t = for_terminal
    if status.message:
        echo(t(status.message))
    state = ", ".join(word for word, on in (("paused", status.paused), ("frozen", status.frozen)) if on) or "running"
    echo(f"league {t(status.league)}: {state}; {status.matches_finished} matches finished, {len(status.live)} "
         f"in play, {len(status.bots)} bot{'' if len(status.bots) == 1 else 's'} connected")
    for bot in status.bots:
        echo(f"  {t(bot.name)} {t(bot.version)} from {t(bot.peer)}: {bot.playing} playing, {bot.matches} played")
    for live in status.live:
        echo(f"  {t(live.match_id)}: {' vs '.join(t(b) for b in live.bots)}, hand {live.hands_played} of "
             f"{live.hands_total}")


@click.group()
def league() -> None:
    """Admin calls to a running league host (arena host): status, pause, resume, freeze, unfreeze, kick."""


def _simple(name: str, help_text: str) -> click.Command:
    @_options
    def command(address: str, token_file: Path | None, tls_ca: Path | None, as_json: bool) -> None:
        _call(address, token_file, tls_ca, as_json,
              lambda stub, md: getattr(stub, name.capitalize())(league_pb2.AdminRequest(), metadata=md, timeout=10))

    command.__doc__ = help_text
    return click.command(name=name)(command)


for _name, _help in (
    ("status", "The league's state, the bots connected and the matches in play."),
    ("pause", "Start no new matches (those in play finish)."),
    ("resume", "Schedule matches again."),
    ("freeze", "Freeze the ladder for the finals: the published leaderboard stays, no new bot version joins."),
    ("unfreeze", "Publish again and let new versions join."),
):
    league.add_command(_simple(_name, _help))


@league.command()
@click.argument("bot")
@click.option("--reason", default="", help="What the bot is told.")
@_options
def kick(bot: str, reason: str, address: str, token_file: Path | None, tls_ca: Path | None, as_json: bool) -> None:
    """End BOT's stream now (it may join again unless its key is revoked: arena bots revoke)."""
    _call(address, token_file, tls_ca, as_json,
          lambda stub, md: stub.Kick(league_pb2.KickRequest(bot=bot, reason=reason), metadata=md, timeout=10))
