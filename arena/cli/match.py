"""``arena match`` and ``arena serve``: one match over gRPC, with local bot commands or remote bots."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from arena.cli.leaderboard import console
from arena.cli.options import resolve_seed, sandbox_options, sandbox_policy, seed_options
from arena.engine import AnteMode, RuleError, Structure, TableConfig
from arena.records.db import Database, config_from_json
from arena.records.phh_sink import PhhDirSink
from arena.referee import ClockPolicy, HandSink, MatchResult, MatchSpec, MatchStatus
from arena.runner.bots import BotSpec, BotSpecError
from arena.runner.remote_match import play, prepare_match, run_local_match
from arena.transport.server import ServerError, ServerLimits

# ---------------------------------------------------------------------------------------------- matches


def _parse_stakes(text: str) -> tuple[int, int]:
    """``50/100`` -> (50, 100)."""
    small, sep, big = text.partition("/")
    try:
        if not sep:
            raise ValueError
        return int(small), int(big)
    except ValueError:
        raise click.BadParameter(f"{text!r}: expected SMALL/BIG, e.g. 50/100") from None


def _table_config(structure: str, stakes: str, ante: int, bb_ante: bool, reveal_all: bool) -> TableConfig:
    small, big = _parse_stakes(stakes)
    mode = AnteMode.NONE if not ante else (AnteMode.BIG_BLIND if bb_ante else AnteMode.EACH)
    try:
        return TableConfig(small, big, Structure(structure), ante, mode, reveal_all=reveal_all)
    except RuleError as exc:
        raise click.BadParameter(str(exc)) from None


def match_options(func: Callable[..., None]) -> Callable[..., None]:
    """Options shared by ``arena match`` and ``arena serve``."""
    options = [
        click.option("--hands", type=click.IntRange(min=1), default=1000, show_default=True,
                     help="Hands to play (rounded up to whole duplicate sets)."),
        click.option("--structure", type=click.Choice(["nl", "pl", "fl"]), default="nl", show_default=True,
                     help="No-limit, pot-limit or fixed-limit (R7)."),
        click.option("--stakes", default="50/100", show_default=True, help="Small/big blind (R3.1)."),
        click.option("--ante", type=click.IntRange(min=0), default=0, help="Ante per player (R3.2)."),
        click.option("--bb-ante", is_flag=True, help="The big blind posts the ante for the table (R3.2)."),
        click.option("--stack", type=click.IntRange(min=1), default=None,
                     help="Starting stack, reset every hand (default: 200 big blinds, R11.2)."),
        click.option("--muck/--reveal-all", "muck", default=False,
                     help="Let hands that cannot win be mucked at showdown (R8.4); default: reveal all."),
        click.option("--no-duplicate", is_flag=True, help="Deal a new deck every hand instead of duplicate sets."),
        click.option("--all-orders", is_flag=True, help="Duplicate over all seat orders (K!), not K rotations."),
        click.option("--per-action-ms", type=click.IntRange(min=1), default=2000, show_default=True),
        click.option("--time-bank-ms", type=click.IntRange(min=0), default=30000, show_default=True),
        click.option("--max-retries", type=click.IntRange(min=0), default=2, show_default=True,
                     help="Illegal actions refused per request before the time-out policy acts."),
        click.option("--max-violations", type=click.IntRange(min=0), default=20, show_default=True,
                     help="Violations that forfeit the match (0: never)."),
        click.option("--db", "db_path", type=click.Path(dir_okay=False), default=None,
                     help="SQLite file to record every hand in."),
        click.option("--phh-dir", type=click.Path(file_okay=False), default=None,
                     help="Write every hand as a PHH file under this folder."),
        click.option("--match-id", default=None, help="Identifier of the match (default: from the time)."),
        click.option("--json", "json_out", is_flag=True, help="Print the result as JSON instead of a table."),
        click.option("-v", "--verbose", count=True, help="Log the referee's work to stderr."),
    ]
    for option in reversed(options):
        func = option(func)
    return seed_options(func)


def _match_spec(kw: dict[str, Any], num_bots: int, seed: str | None = None) -> MatchSpec:
    config = _table_config(kw["structure"], kw["stakes"], kw["ante"], kw["bb_ante"], not kw["muck"])
    policy = ClockPolicy(kw["per_action_ms"], kw["time_bank_ms"], kw["max_retries"], kw["max_violations"],
                         kw.get("connect_timeout_ms", 10000))
    return MatchSpec(
        match_id=kw["match_id"] or time.strftime("m%Y%m%d-%H%M%S"),
        seed=seed or resolve_seed(kw["seed_file"]),
        hands=kw["hands"],
        config=config,
        starting_stack=kw["stack"] or 200 * config.big_blind,
        policy=policy,
        duplicate=not kw["no_duplicate"],
        all_orders=kw["all_orders"],
    )


def _sinks(kw: dict[str, Any]) -> tuple[list[HandSink], Database | None]:
    sinks: list[HandSink] = []
    db = Database(kw["db_path"]) if kw["db_path"] else None
    if db is not None:
        sinks.append(db)
    if kw["phh_dir"]:
        sinks.append(PhhDirSink(kw["phh_dir"]))
    return sinks, db


def print_result(result: MatchResult, big_blind: int, as_json: bool) -> None:
    """The result table (or JSON) of a match."""
    if as_json:
        click.echo(json.dumps({
            "match_id": result.match_id, "reason": result.reason, "hands_played": result.hands_played,
            "hands_total": result.hands_total, "seconds": round(result.seconds, 3), "seed": result.seed,
            "commitment": result.commitment, "big_blind": big_blind,
            "results": [dataclasses.asdict(r) for r in result.results],
        }, indent=2))
        return
    table = Table(title=f"match {result.match_id}: {result.hands_played}/{result.hands_total} hands, {result.reason}")
    for column in ("bot", "hands", "chips won", "mbb/hand", "mean think ms", "violations", "status"):
        table.add_column(column, justify="left" if column in ("bot", "status") else "right")
    for r in sorted(result.results, key=lambda r: -r.net):
        status = "forfeited" if r.forfeited else ("absent" if r.decisions == 0 and r.absent else "ok")
        details = ", ".join(f"{n} {k}" for k, n in (("timeouts", r.timeouts), ("illegal", r.illegal),
                                                     ("absent", r.absent)) if n)
        table.add_row(f"{r.name}{'@' + r.version if r.version else ''}", str(r.hands), f"{r.net:+,}",
                      f"{r.mbb_per_hand:+.1f}", f"{r.mean_think_ms:.1f}", str(r.violations) + (f" ({details})"
                      if details else ""), status)
    console().print(table)
    click.echo(f"seed {result.seed} (commitment {result.commitment}); {result.seconds:.1f} s, "
               f"{result.hands_played / max(result.seconds, 1e-9):.0f} hands/s")


@click.command()
@click.option("--bot", "bots", multiple=True, required=True, metavar="NAME=COMMAND",
              help="A bot to launch (repeat; at least two). It gets ARENA_ADDRESS and ARENA_TOKEN in its environment.")
@click.option("--seats", type=click.IntRange(2, 22), default=None, help="Seats at the table (default: one per bot).")
@click.option("--log-dir", type=click.Path(file_okay=False), default=None, help="Keep each bot's output here.")
@click.option("--resume", is_flag=True,
              help="Finish a match cut short (crash, Ctrl-C): same --db and --match-id; seed and table come from it.")
@match_options
@sandbox_options
def match(bots: tuple[str, ...], seats: int | None, log_dir: str | None, resume: bool, **kw: Any) -> None:
    """Play a duplicate match between local bot commands over gRPC and print the result.

    Example: arena match --bot caller='python sample_bots/python/calling_station.py'
    --bot equity='python sample_bots/python/equity_bot.py' --hands 200 --seed demo
    """
    _logging(kw["verbose"])
    try:
        specs = [BotSpec.parse(text) for text in bots]
    except BotSpecError as exc:
        raise click.BadParameter(str(exc)) from None
    if len(specs) < 2:
        raise click.UsageError("a match needs at least two --bot")
    if seats is not None and seats != len(specs):
        raise click.UsageError(f"--seats {seats} but {len(specs)} bots: give one --bot per seat")
    if len({s.name for s in specs}) != len(specs):
        raise click.UsageError("bot names must be different")
    sandbox = sandbox_policy(kw)
    sinks, db = _sinks(kw)
    recorded: set[int] = set()
    if resume:
        if db is None or not kw["match_id"]:
            raise click.UsageError("--resume needs --db and the --match-id of the match to finish")
        spec, recorded = _resumed(db, _match_spec(kw, len(specs), seed="resumed"), specs)
    else:
        spec = _match_spec(kw, len(specs))
        if db is not None and db.match_row(spec.match_id) is not None:
            raise click.ClickException(f"match {spec.match_id} is already in {db.path}: use --resume to finish it")
    if db is not None:
        db.start_match(spec, [(s.name, s.version, s.command) for s in specs], len(spec.plan(len(specs))))
        sandbox = sandbox.hiding(db.path, *db.vault.files)
    sandbox = sandbox.hiding(kw["seed_file"], kw["phh_dir"], log_dir)
    result = asyncio.run(
        run_local_match(spec, specs, sinks, Path(log_dir) if log_dir else None, recorded=recorded, sandbox=sandbox)
    )
    if db is not None:
        db.finish_match(result)
    print_result(result, spec.config.big_blind, kw["json_out"])


def _resumed(db: Database, spec: MatchSpec, bots: list[BotSpec]) -> tuple[MatchSpec, set[int]]:
    """The recorded match's spec (seed, table, length; the clock may change) and the hands already played."""
    row = db.match_row(spec.match_id)
    if row is None:
        raise click.ClickException(f"no match {spec.match_id} in {db.path} to resume")
    if MatchStatus(row["status"]).over:
        raise click.ClickException(f"match {spec.match_id} in {db.path} is over ({row['status']}): nothing to resume")
    players = [name for name, _ in db.participants(spec.match_id)]
    if players != [b.name for b in bots]:
        raise click.ClickException(f"match {spec.match_id} was played by {players}: give those --bot names in order")
    seed = db.match_seed(spec.match_id)
    if seed is None:
        raise click.ClickException(f"the seed of match {spec.match_id} is not in {db.vault.path}: cannot resume")
    resumed = dataclasses.replace(
        spec, seed=seed, hands=row["hands_total"], config=config_from_json(row["config"]),
        starting_stack=row["starting_stack"], duplicate=bool(row["duplicate"]), all_orders=bool(row["all_orders"]),
    )
    return resumed, db.recorded_hands(spec.match_id)


@click.command()
@click.option("--bot", "names", multiple=True, required=True, metavar="NAME",
              help="A seat for a remote bot (repeat); a token is printed for each.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=50051, show_default=True)
@click.option("--tls-cert", type=click.Path(exists=True, dir_okay=False), default=None, help="PEM certificate.")
@click.option("--tls-key", type=click.Path(exists=True, dir_okay=False), default=None, help="PEM private key.")
@click.option("--connect-timeout-s", type=click.IntRange(min=1), default=300, show_default=True,
              help="How long to wait for every bot to connect before dealing.")
@click.option("--remote-duplicate", is_flag=True,
              help="Deal every deck once per seat rotation although remote bots can remember the cards (only for "
                   "bots you trust not to).")
@click.option("--watch-token", default=None, envvar="ARENA_WATCH_TOKEN",
              help="Spectators must send this token as metadata 'authorization: Bearer TOKEN' "
                   "(default: $ARENA_WATCH_TOKEN, else none).")
@match_options
def serve(names: tuple[str, ...], host: str, port: int, tls_cert: str | None, tls_key: str | None,
          connect_timeout_s: int, remote_duplicate: bool, watch_token: str | None, **kw: Any) -> None:
    """Wait for remote bots to connect with the printed tokens, then play the match.

    Remote bots are dealt fresh decks: a remote process can remember every card it saw, so replaying a deck with
    the seats rotated (duplicate) would show it the other seat's cards in advance (--remote-duplicate overrides).
    """
    _logging(kw["verbose"])
    if len(names) < 2 or len(set(names)) != len(names):
        raise click.UsageError("give at least two different --bot names")
    if bool(tls_cert) != bool(tls_key):
        raise click.UsageError("--tls-cert and --tls-key go together")
    kw["connect_timeout_ms"] = connect_timeout_s * 1000
    if not kw["no_duplicate"] and not remote_duplicate:
        click.echo("remote bots get fresh decks, not duplicate ones: a remote bot can remember a deal and would know "
                   "the other seats' cards when it is replayed (--remote-duplicate to deal duplicate anyway)", err=True)
        kw["no_duplicate"] = True
    spec = _match_spec(kw, len(names))
    tls = (Path(tls_key).read_bytes(), Path(tls_cert).read_bytes()) if tls_cert and tls_key else None
    sinks, db = _sinks(kw)
    if db is not None:
        db.start_match(spec, [(n, "", "") for n in names], len(spec.plan(len(names))))

    async def serve_match() -> MatchResult:
        limits = ServerLimits(watch_token=watch_token)
        setup = await prepare_match(spec, names, sinks, host=host, port=port, tls=tls, limits=limits)
        click.echo(f"referee listening on {setup.server.address}; commitment {spec.commitment}")
        for seat in setup.seats:
            click.echo(f"  {seat.name}: ARENA_ADDRESS={setup.server.address} ARENA_TOKEN={seat.token}")
        try:
            return await play(setup)
        finally:
            await setup.server.stop()

    try:
        result = asyncio.run(serve_match())
    except ServerError as exc:
        raise click.ClickException(str(exc)) from None
    if db is not None:
        db.finish_match(result)
    print_result(result, spec.config.big_blind, kw["json_out"])


def _logging(verbosity: int) -> None:
    level = logging.WARNING if verbosity == 0 else (logging.INFO if verbosity == 1 else logging.DEBUG)
    logging.basicConfig(level=level, format="%(asctime)s %(name)s %(levelname)s %(message)s")


COMMANDS = [match, serve]
