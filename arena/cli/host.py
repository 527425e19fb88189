"""``arena host league.toml --db league.db``: run a league until stopped (Ctrl-C or SIGTERM)."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import signal
from typing import Any

import click

from arena.cli.bots import DEFAULT_LEAGUE_DB
from arena.cli.exits import ArenaCommand
from arena.cli.leaderboard import open_db
from arena.cli.options import ConfigurationError
from arena.cli.output import echo
from arena.league.admin import AdminServicer, admin_token_path, load_or_create_token
from arena.league.host import HostError, LeagueHost
from arena.league.settings import LeagueConfig, LeagueConfigError, address
from arena.league.submissions import SubmissionServicer
from arena.league.web import LeagueSite
from arena.records.db import Database
from arena.records.registry import Registry
from arena.referee import MatchResult
from arena.runner.archive import SubmissionStore
from arena.runner.executor import ExecutorError, ExecutorKind, LocalExecutor, MatchExecutor, make_executor
from arena.transport.server import ServerError, reachable_addresses


@click.command(cls=ArenaCommand)
@click.argument("config_path", metavar="LEAGUE.toml", type=click.Path(dir_okay=False))
@click.option("--db", "db_path", default=DEFAULT_LEAGUE_DB, show_default=True, type=click.Path(dir_okay=False),
              help="The league's database (its registered bots and every match).")
@click.option("--grpc", "grpc_address", default=None, metavar="HOST:PORT", help="Override the file's grpc address.")
@click.option("--http", "http_address", default=None, metavar="HOST:PORT",
              help="Override the file's http address ('off': no site).")
@click.option("--executor", "executor_name", type=click.Choice([k.value for k in ExecutorKind]), default=None,
              help="Where matches of hosted bots only are played: here, or on a Ray cluster (default: the file's "
                   "executor, else local).")
@click.option("--ray-address", default=None, metavar="HEAD:PORT",
              help="The Ray cluster to use with --executor ray (default: the file's ray_address, else RAY_ADDRESS, "
                   "else a Ray instance started here).")
@click.option("-v", "--verbose", count=True, help="Log more (-v: every match, -vv: debug).")
def host(config_path: str, db_path: str, grpc_address: str | None, http_address: str | None,
         executor_name: str | None, ray_address: str | None, verbose: int) -> None:
    """Run a league: registered bots connect with their API keys (arena bots add), or are submitted and run here
    (arena bots submit); they are matched continuously, rated after every match, and published live on the http
    address."""
    level = logging.WARNING if verbose == 0 else (logging.INFO if verbose == 1 else logging.DEBUG)
    logging.basicConfig(level=level, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    try:
        config = LeagueConfig.from_toml(config_path)
        if grpc_address:
            config = _replace(config, grpc=address(grpc_address, "--grpc"))
        if http_address:
            config = _replace(config, http=None if http_address == "off" else address(http_address, "--http"))
        if executor_name:
            config = _replace(config, executor=ExecutorKind(executor_name))
        if ray_address:
            config = _replace(config, ray_address=ray_address)
    except LeagueConfigError as exc:
        raise ConfigurationError(str(exc)) from None
    tls = None
    if config.tls_cert is not None and config.tls_key is not None:
        try:
            tls = (config.tls_key.read_bytes(), config.tls_cert.read_bytes())
        except OSError as exc:
            raise ConfigurationError(f"{config_path}: [tls]: cannot read {exc.filename}: {exc.strerror}") from None
    db = open_db(db_path, create=True)
    registered = Registry(db).list()
    try:
        executor = league_executor(config, SubmissionStore.beside(db.path, config.submissions.max_unpacked_bytes))
    except ExecutorError as exc:
        db.close()
        raise click.ClickException(str(exc)) from None
    try:
        asyncio.run(_serve(config, db, tls, len([b for b in registered if b.active]), db_path, executor))
    except (ServerError, HostError) as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        executor.close()
        db.close()


def _replace(config: LeagueConfig, **changes: Any) -> LeagueConfig:
    return dataclasses.replace(config, **changes)


def league_executor(config: LeagueConfig, store: SubmissionStore) -> MatchExecutor:
    """Where the league plays its tables of hosted bots: here, or on Ray (its tasks fetch each bot's archive from
    ``store`` by its SHA-256 when their node lacks it)."""
    if config.executor is ExecutorKind.LOCAL:
        if config.ray_address:
            raise ExecutorError("--ray-address (ray_address) is for --executor ray")
        return LocalExecutor()
    return make_executor(ExecutorKind.RAY, config.ray_address, archives=store.read)


async def _serve(config: LeagueConfig, db: Database, tls: tuple[bytes, bytes] | None, active: int,
                 db_path: str, executor: MatchExecutor) -> None:
    league = LeagueHost(config, db, tls=tls, executor=executor)
    token_path = admin_token_path(db.path, config.admin_token_file)
    try:
        admin = AdminServicer(league, load_or_create_token(token_path))
    except (OSError, ValueError) as exc:
        raise click.ClickException(f"the admin token: {exc}") from None
    league.server.services.append(admin.add_to)
    league.server.services.append(SubmissionServicer(league).add_to)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await league.start()
    site = None
    try:
        for match_id in league.interrupted:
            echo(f"match {match_id} was cut short when the host last stopped: it ends as interrupted (its "
                       "finished hands stand, its seed is published)", err=True)
        scheme = "TLS" if tls else "no TLS"
        addresses = reachable_addresses(config.grpc[0], league.server.port)
        echo(f"league {config.name}: bots connect to {', '.join(addresses)} ({scheme}) with "
                   f"ARENA_ADDRESS=... ARENA_KEY=<their key>, or are submitted with arena bots submit --address "
                   f"{addresses[0]} --key <their key> --folder DIR --command CMD")
        if league.residents:
            echo(f"{len(league.residents)} hosted bots play here: {', '.join(sorted(league.residents))} (matches of "
                 f"hosted bots only on the {config.executor.value} executor)", err=True)
        echo(f"admin: arena league status --address {addresses[0]} --token-file {token_path}")
        if config.http is not None:
            site = LeagueSite(league)
            try:
                port = await site.start(*config.http)
            except OSError as exc:
                raise ServerError(f"cannot serve the live site on {config.http[0]}:{config.http[1]}: "
                                  f"{exc.strerror or exc} (http = \"off\" in the league file, or --http off, "
                                  "runs without it)") from None
            echo(f"live site: http://{config.http[0]}:{port}/  (JSON: /api/leaderboard, /api/bots, "
                       "/api/matches, /api/live)")
        if not active:
            echo(f"no bots are registered yet: arena bots add NAME --db {db_path} prints the key a bot "
                       "connects with", err=True)
        else:
            echo(f"{active} registered bots; matches of {config.match.hands} hands start as soon as "
                       f"{config.seats} of them are connected", err=True)

        def announce(result: MatchResult) -> None:
            nets = ", ".join(f"{r.name} {r.net:+d}" for r in result.results)
            echo(f"{result.match_id} {result.reason.value}: {result.hands_played} hands; {nets}")

        league.on_match_end.append(announce)
        await league.run(stop)
        echo("stopping: the matches in play end as interrupted (their finished hands are recorded)", err=True)
    finally:
        await league.stop()
        if site is not None:
            await site.stop()
