"""``arena match`` and ``arena serve``: one match over gRPC, with local bot commands or remote bots."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import secrets
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

import click
from rich.table import Table

from arena.cli.exits import EXIT_BOT_FAILED, EXIT_INTERRUPTED, EXIT_OK, ArenaCommand
from arena.cli.leaderboard import console, open_db
from arena.cli.live import LiveLine
from arena.cli.options import (
    acpc_game,
    acpc_seats,
    checked_outputs,
    resolve_seed,
    sandbox_options,
    sandbox_policy,
    seed_options,
    settings_from_flags,
    settings_options,
)
from arena.cli.output import add_row, echo, secho
from arena.engine.config import MAX_SEATS, MIN_SEATS
from arena.ratings.estimators import Estimator
from arena.ratings.games import standings
from arena.ratings.scoring_worker import ScoringWorker
from arena.ratings.stats import WinRate
from arena.ratings.tally import SessionTally
from arena.records import LedgerError, queries
from arena.records.db import Database
from arena.records.ledger import Ledger
from arena.records.phh_sink import PhhDirSink
from arena.referee import GameKind, HandRecord, HandSink, MatchResult, MatchSpec
from arena.runner.bots import BotSpec, BotSpecError
from arena.runner.executor import LocalExecutor, MatchJob
from arena.runner.play import MatchRun
from arena.runner.remote_executors import ServedExecutor
from arena.runner.remote_match import MatchSetup
from arena.runner.settings import SETTINGS, MatchSettings, SettingsError, resume_conflicts, settings_of
from arena.text import for_terminal
from arena.transport.convert import printable
from arena.transport.endpoint import Endpoint
from arena.transport.server import ServerError, ServerLimits, reachable_addresses
from arena_sdk.pb import bot_pb2

# ---------------------------------------------------------------------------------------------- matches


MATCH_SETTINGS = [s.key for s in SETTINGS]
SERVE_SETTINGS = [s.key for s in SETTINGS if not s.key.startswith("sandbox.")]


def match_options(keys: list[str]) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Options shared by ``arena match`` and ``arena serve``: the settings, where hands go, the output."""

    def decorate(func: Callable[..., None]) -> Callable[..., None]:
        options = [
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
        return seed_options(settings_options(keys)(func))

    return decorate


MATCH_ID_MAX = 128


def _match_id(kw: dict[str, Any]) -> str:
    """The match's id: ``--match-id``, else one from the clock and four random hex digits (two matches started in
    the same second into one database are two matches, not one already there). Any text is a safe id (every path made
    from it is slugged, arena.text), but not control characters or more than 128 characters."""
    given = kw["match_id"]
    if given is None:
        return time.strftime("m%Y%m%d-%H%M%S-") + secrets.token_hex(2)
    if not given.strip() or len(given) > MATCH_ID_MAX or any(not c.isprintable() for c in given):
        raise click.BadParameter(f"{for_terminal(given, 60)!r}: an id of 1 to {MATCH_ID_MAX} printable characters",
                                 param_hint="--match-id")
    return str(given)


def _spec(settings: MatchSettings, match_id: str, seed: str, seats: int = 0) -> MatchSpec:
    try:
        return settings.spec(match_id, seed, seats)
    except (SettingsError, ValueError) as exc:
        raise click.UsageError(str(exc)) from None


def _sinks(kw: dict[str, Any]) -> list[HandSink]:
    """Where each hand goes besides the match's ledger entry: PHH files, if asked."""
    return [PhhDirSink(kw["phh_dir"])] if kw["phh_dir"] else []


def _open(ledger: Ledger, job: MatchJob, resume: bool = False) -> MatchRun:
    """The match open in the ledger; a refusal (a match recorded already, one to resume that is not there or is
    over, other bots) is an error in words."""
    try:
        return MatchRun(ledger, job, resume=resume)
    except LedgerError as exc:
        raise click.ClickException(str(exc)) from None


def _ci(rate: WinRate) -> str:
    if rate.sessions < 2:
        return "n/a"
    return f"[{rate.low:+,.0f}, {rate.high:+,.0f}]"


SCORING_NOTICE_HANDS = 2_000  # hands still to score after the last one that take seconds: say so meanwhile


def live_line(tally: SessionTally, names: Sequence[str], total: int, started: float) -> str:
    """hands, hands/s, ETA and each bot's mbb/hand ± its 95% CI half-width so far (over the complete sessions: none
    until the last rotation, played after the others, begins)."""
    elapsed = max(time.monotonic() - started, 1e-9)
    rate = tally.hands / elapsed
    eta = f"{(total - tally.hands) / rate:.0f} s" if rate > 0 else "?"
    head = f"hands {tally.hands:,}/{total:,} | {rate:.0f} hands/s | ETA {eta} | mbb/hand: "
    if not tally.sessions:
        return head + "once the deals' last rotation is played"
    bots = []
    for i, name in enumerate(names):
        w = tally.live_rate(i)
        spread = f" ±{(w.high - w.low) / 2:,.0f}" if w.sessions > 1 else ""
        bots.append(f"{name} {w.mean:+,.0f}{spread}")
    return head + ", ".join(bots)


def match_report(result: MatchResult, big_blind: int, tally: SessionTally | None,
                 final_hash: str | None = None) -> dict[str, Any]:
    """The match as JSON data: what the table shows, and what went wrong (the same keys in every command)."""
    failures = result.failures()
    code = EXIT_BOT_FAILED if failures else EXIT_OK
    rows = []
    for i, r in enumerate(result.results):
        row: dict[str, Any] = dataclasses.asdict(r)
        row["outcome"] = r.outcome.value
        row["failure"] = r.failure
        if tally is not None:
            w = tally.win_rate(i)
            row["sessions"] = w.sessions
            row["ci95"] = [w.low, w.high] if w.sessions > 1 else None
            for estimator, key in ((Estimator.ALLIN, "allin_ev"), (Estimator.AIVAT, "aivat")):
                ev = tally.win_rate(i, estimator)
                row[key] = {"mbb_per_hand": ev.mean if ev.sessions else None,
                            "ci95": [ev.low, ev.high] if ev.sessions > 1 else None}
        rows.append(row)
    summary = (f"match {result.match_id}: {result.hands_played}/{result.hands_total} hands, {result.reason}"
               + (f"; {len(failures)} bot failure(s)" if failures else ""))
    return {
        "summary": summary, "exit_code": code, "match_id": result.match_id, "status": result.reason.value,
        "hands": {"played": result.hands_played, "total": result.hands_total}, "seconds": round(result.seconds, 3),
        "seed": result.seed if result.reason.over else None, "commitment": result.commitment,
        "final_hash": final_hash, "big_blind": big_blind, "results": rows, "errors": failures,
    }


def games_report(result: MatchResult) -> dict[str, Any]:
    """A cash game's or a freezeout's games as JSON data: every game's places and chips, and each bot's standing
    (games, wins, in-the-money count, mean place: arena.ratings.games)."""
    names = [r.name for r in result.results]
    games = []
    for g in result.games:
        games.append({
            "game": g.game, "rotation": g.rotation, "hands": g.hands_played, "end": g.end.value,
            "players": [{"bot": names[p], "place": g.places[p], "hands": g.hands[p], "bought_in": g.bought_in[p],
                         "final_stack": g.final_stacks[p], "net": g.net(p), "eliminated_in_hand": g.eliminated[p]}
                        for p in range(len(names)) if g.hands[p]],
        })
    table = standings((names, g) for g in result.games)
    return {"kind": result.games[0].kind.value if result.games else "reset", "games": games,
            "standings": [table[name].as_json() for name in names if name in table]}


def print_games(result: MatchResult) -> None:
    """Each bot's standing over the match's games, and each game's finishing order (freezeout) or chips (cash)."""
    report = games_report(result)
    freezeout = report["kind"] == "freezeout"
    table = Table(title=f"{report['kind']}: {len(report['games'])} game(s)")
    columns = ("bot", "games", "wins", "ITM", "mean place", "chips won", "hands") if freezeout else \
        ("bot", "games", "chips won", "hands")
    for column in columns:
        table.add_column(column, justify="left" if column == "bot" else "right")
    rows = sorted(report["standings"], key=lambda r: (r["mean_place"] or 0, -r["net"]) if freezeout else -r["net"])
    for row in rows:
        mean = f"{row['mean_place']:.2f}" if row["mean_place"] is not None else "-"
        values = (row["bot"], str(row["games"]), str(row["wins"]), str(row["itm"]), mean, f"{row['net']:+,}",
                  f"{row['hands']:,}") if freezeout else (row["bot"], str(row["games"]), f"{row['net']:+,}",
                                                          f"{row['hands']:,}")
        add_row(table, *values)
    console().print(table)
    for game in report["games"]:
        if freezeout:
            order = sorted(game["players"], key=lambda p: p["place"] or 0)
            text = ", ".join(f"{p['place']}. {p['bot']}" for p in order)
        else:
            text = ", ".join(f"{p['bot']} {p['net']:+,}" for p in game["players"])
        echo(f"game {game['game']} rotation {game['rotation']} ({game['hands']} hands, {game['end']}): {text}")
    if freezeout:
        echo("places by R11.4 (eliminated in the same hand: the larger starting stack first; equal stacks "
                   "share); ITM: the top third of the field, at least the winner")


def print_result(result: MatchResult, big_blind: int, as_json: bool, tally: SessionTally | None = None,
                 final_hash: str | None = None) -> int:
    """The result table (or JSON) of a match with its final hash, and what went wrong on stderr; returns the exit
    status."""
    report = match_report(result, big_blind, tally, final_hash)
    if result.games:
        report["game"] = games_report(result)
    if as_json:
        echo(json.dumps(report, indent=2))
    else:
        if result.games:
            print_games(result)
        echo(report["summary"])
        table = Table()
        for column in ("bot", "hands", "mbb/hand", "95% CI", "ms", "viol.", "status"):
            table.add_column(column, justify="left" if column in ("bot", "status") else "right",
                             no_wrap=column != "bot")
        order = sorted(range(len(result.results)), key=lambda i: -result.results[i].net)
        for i in order:
            r = result.results[i]
            rate = tally.win_rate(i) if tally is not None else None
            add_row(table, f"{r.name}{'@' + r.version if r.version else ''}", f"{r.hands:,}", f"{r.mbb_per_hand:+,.0f}",
                          _ci(rate) if rate is not None else "n/a", f"{r.mean_think_ms:.1f}", str(r.violations),
                          r.outcome.value.replace("_", " "))
        console().print(table)
        if tally is not None and tally.sessions:
            for estimator, what in ((Estimator.ALLIN, "every all-in before the river scored by its expectation "
                                     "over the rest of the board"),
                                    (Estimator.AIVAT, "the luck of the cards and of the referee's draws taken out")):
                evs = [(result.results[i].name, tally.win_rate(i, estimator)) for i in order]
                echo(f"{estimator.label} ({what}): "
                           + ", ".join(f"{name} {ev.mean:+,.0f} {_ci(ev)}" for name, ev in evs))
        elapsed = max(result.seconds, 1e-9)
        seed = f"seed {result.seed}" if result.reason.over else "seed kept secret until the match is over"
        echo(f"{seed}; commitment {result.commitment}" + (f"; final hash {final_hash}" if final_hash else ""))
        what = ("mbb/hand: chips won per hand dealt, in the table's first big blinds" if result.games else
                "mbb/hand over duplicate sessions")
        echo(f"{result.seconds:.1f} s, {result.hands_played / elapsed:.0f} hands/s; {what} (ms: mean think "
                   "time; viol.: time-outs, illegal actions, disconnects)")
    for failure in report["errors"]:
        secho(f"error: {failure}", fg="red", err=True)
    return int(report["exit_code"])


@click.command(cls=ArenaCommand)
@click.option("--bot", "bots", multiple=True, required=True, metavar="NAME=COMMAND",
              help="A bot to launch (repeat; at least two). It gets ARENA_ADDRESS and ARENA_TOKEN in its environment.")
@click.option("--seats", type=click.IntRange(2, 22), default=None, help="Seats at the table (default: one per bot).")
@click.option("--log-dir", type=click.Path(file_okay=False), default=None, help="Keep each bot's output here.")
@click.option("--resume", is_flag=True,
              help="Finish a match cut short (crash, Ctrl-C): same --db and --match-id; seed and table come from it.")
@match_options(MATCH_SETTINGS)
@sandbox_options
def match(bots: tuple[str, ...], seats: int | None, log_dir: str | None, resume: bool, **kw: Any) -> None:
    """Play a duplicate match between local bot commands over gRPC and print the result.

    Example: arena match --bot caller='python sample_bots/python/calling_station.py'
    --bot equity='python sample_bots/python/equity_bot.py' --hands 200 --seed-file seed.txt
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
    if len(specs) > MAX_SEATS:
        raise click.UsageError(f"{len(specs)} bots: a table has {MIN_SEATS} to {MAX_SEATS} seats (R2.1)")
    settings = acpc_game(settings_from_flags(kw), len(specs))
    _check_game(settings, len(specs))
    sandbox = sandbox_policy(kw.pop("no_sandbox"), settings)
    if resume and (not kw["db_path"] or not kw["match_id"]):
        raise click.UsageError("--resume needs --db and the --match-id of the match to finish")
    sandbox = checked_outputs(sandbox, specs, Path.cwd(), {"--phh-dir": kw["phh_dir"], "--log-dir": log_dir},
                              {"--db": kw["db_path"]})
    db = open_db(kw["db_path"], create=True) if kw["db_path"] else None
    match_id = _match_id(kw)
    if resume:
        assert db is not None
        spec = _resumed(db, match_id, specs, settings)
    else:
        spec = _spec(settings, match_id, resolve_seed(kw["seed_file"]))
    acpc_seats(specs, spec, len(specs))
    job = MatchJob(spec, tuple(specs), sandbox=sandbox.hiding(kw["seed_file"]),
                   log_dir=Path(log_dir) if log_dir else None)
    run = _open(Ledger(db), job, resume)  # a resume is verified before it plays
    recorded = run.entry.played
    total = spec.hands_planned(len(specs))
    tally = None if spec.game.is_game else match_tally(spec, len(specs), db)
    try:
        if tally is not None and db is not None and recorded:
            tally.add_all(queries.hand_records(db, spec.match_id))
        started = time.monotonic()
        names = [s.name for s in specs]
        played = [len(recorded)]
        with LiveLine(not kw["json_out"]) as live:

            def hand_done(record: HandRecord) -> None:
                played[0] += 1
                if tally is None:
                    live.update(f"{spec.game.kind}: hands {played[0]:,} | hand {record.hand_number}: blinds "
                                f"{record.config.small_blind}/{record.config.big_blind}, {len(record.seating)} "
                                "players")
                    return
                tally.add(record)
                live.update(lambda: live_line(tally, names, total, started))  # made only when shown

            try:
                result = asyncio.run(run.play(LocalExecutor(), _sinks(kw), hand_done))
            except KeyboardInterrupt:
                _interrupted(f"{played[0]} hands recorded", db, spec.match_id)
        code = _report(run, result, kw["json_out"], tally)
    finally:
        if tally is not None:
            tally.close()
    raise SystemExit(code)


def _report(run: MatchRun, result: MatchResult, as_json: bool, tally: SessionTally | None) -> int:
    """Finish the match in its ledger (the whole match's result, a resumed match's earlier part added in) and print
    it with its final hash; the exit status."""
    played = run.finish(result)
    if tally is not None and tally.pending_hands >= SCORING_NOTICE_HANDS and not as_json:
        echo(f"scoring the last {tally.pending_hands:,} hands by all-in EV and AIVAT...", err=True)
    return print_result(played.result, run.job.spec.config.big_blind, as_json, tally, played.final_hash)


def match_tally(spec: MatchSpec, players: int, db: Database | None) -> SessionTally:
    """The tally of a reset match, its hands scored by worker processes as they finish (arena.ratings.
    scoring_worker: only hand numbers go to the workers when ``db`` records the match, which they read back)."""
    cross = spec.cross_table(players)
    scorer = ScoringWorker(spec.config.big_blind, cross, db.path if db is not None else None, spec.match_id)
    return SessionTally(players, spec.hands_per_deal(players), spec.config.big_blind, cross, scorer)


def _check_game(settings: MatchSettings, players: int) -> None:
    """A game the bots cannot play (a buy-in outside the range, a join list of the wrong length) is a usage error."""
    try:
        settings.check_game(players)
    except SettingsError as exc:
        raise click.UsageError(str(exc)) from None


def _resumed(db: Database, match_id: str, bots: list[BotSpec], settings: MatchSettings) -> MatchSpec:
    """The recorded match's spec (seed, table, length; the clock and the tables side by side may change). The
    ledger then checks it, the seed and every recorded hand against the match's commitment and hash chain."""
    info = queries.match_info(db, match_id)
    if info is None:
        raise click.ClickException(f"no match {match_id} in {db.path} to resume")
    if info.status.over:
        raise click.ClickException(f"match {match_id} in {db.path} is over ({info.status.value}): nothing to resume")
    players = [c.name for c in queries.participants(db, match_id)]
    if players != [b.name for b in bots]:
        raise click.ClickException(f"match {match_id} was played by {players}: give those --bot names in order")
    seed = queries.match_seed(db, match_id)
    if not seed:
        raise click.ClickException(f"the seed of match {match_id} is not in {db.vault.path}: cannot resume")
    recorded = info.spec(seed)
    conflicts = resume_conflicts(settings_of(recorded), settings, MatchSettings())
    if conflicts:
        raise click.UsageError("a resumed match keeps its schedule and table: " + "; ".join(conflicts))
    return dataclasses.replace(recorded, policy=settings.clock(), tables=settings.tables)


@click.command(cls=ArenaCommand)
@click.option("--bot", "names", multiple=True, required=True, metavar="NAME",
              help="A seat for a remote bot (repeat); a token is printed for each.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=50051, show_default=True)
@click.option("--tls-cert", type=click.Path(exists=True, dir_okay=False), default=None, help="PEM certificate.")
@click.option("--tls-key", type=click.Path(exists=True, dir_okay=False), default=None, help="PEM private key.")
@click.option("--remote-duplicate", is_flag=True,
              help="Deal every deck once per seat rotation although remote bots can remember the cards (only for "
                   "bots you trust not to).")
@click.option("--watch-token", default=None, envvar="ARENA_WATCH_TOKEN",
              help="Spectators must send this token as metadata 'authorization: Bearer TOKEN' "
                   "(default: $ARENA_WATCH_TOKEN, else none).")
@click.option("--seats", type=click.IntRange(2, 22), default=None,
              help="Seats per table (default: every bot at one table). Fewer seats than bots: each deal is played "
                   "at every table, duplicate across tables (bots / seats tables, at least two).")
@match_options(SERVE_SETTINGS)
def serve(names: tuple[str, ...], host: str, port: int, tls_cert: str | None, tls_key: str | None,
          remote_duplicate: bool, watch_token: str | None, seats: int | None, **kw: Any) -> None:
    """Wait for remote bots to connect with the printed tokens, then play the match.

    A remote process can remember every card it saw, so no remote bot is dealt the same deal twice: at one table the
    bots get fresh decks (--remote-duplicate replays each deck with the seats rotated anyway); with --seats fewer than
    the bots, each deal is played once at every table and each bot is compared with those that held the same cards
    at the other tables (duplicate across tables).
    """
    _logging(kw["verbose"])
    if len(names) < 2 or len(set(names)) != len(names):
        raise click.UsageError("give at least two different --bot names")
    if bool(tls_cert) != bool(tls_key):
        raise click.UsageError("--tls-cert and --tls-key go together")
    # remote bots are people's programs somewhere: give them five minutes to connect unless told otherwise
    base = MatchSettings(connect_timeout_ms=300_000)
    table = seats or len(names)
    settings = acpc_game(settings_from_flags(kw, base), table, base)
    _check_game(settings, len(names))
    if table > MAX_SEATS:
        raise click.UsageError(f"{table} bots at one table: a table has {MIN_SEATS} to {MAX_SEATS} seats (R2.1); "
                               "give --seats to play at several tables")
    cross = 0
    if table < len(names):
        if settings.game is not GameKind.RESET:
            raise click.UsageError(f"--seats {table}: a {settings.game} game is played at one table (R11.5: "
                                   "duplicate across tables is for the reset game)")
        if len(names) % table or len(names) < 2 * table:
            raise click.UsageError(f"--seats {table}: {len(names)} bots cannot fill two or more tables of {table} "
                                   "seats exactly")
        if not settings.duplicate:
            raise click.UsageError("--no-duplicate: tables of fewer seats than bots always play each deal at "
                                   "every table")
        cross = table
    elif settings.duplicate and not remote_duplicate:
        echo("remote bots get fresh decks, not duplicate ones: a remote bot can remember a deal and would know "
                   "the other seats' cards when it is replayed (--remote-duplicate to deal duplicate anyway)", err=True)
        settings = settings.replace(duplicate=False)
    spec = _spec(settings, _match_id(kw), resolve_seed(kw["seed_file"]), cross)
    tls = (Path(tls_key).read_bytes(), Path(tls_cert).read_bytes()) if tls_cert and tls_key else None
    db = open_db(kw["db_path"], create=True) if kw["db_path"] else None
    run = _open(Ledger(db), MatchJob(spec, tuple(BotSpec(n, "") for n in names)))

    def announce(endpoint: Endpoint, peer: str, join: bot_pb2.Join) -> None:
        said = " ".join(w for w in (printable(join.language) or "language not given", printable(join.bot_version)) if w)
        echo(f"{endpoint.name} connected from {peer} as {printable(join.bot_name)!r} ({said})", err=True)

    def ready(setup: MatchSetup) -> None:
        addresses = reachable_addresses(host, setup.server.port)
        echo(f"referee listening on {', '.join(addresses)}; commitment {run.entry.commitment}")
        for seat in setup.seats:
            echo(f"  {seat.name}: ARENA_ADDRESS={addresses[0]} ARENA_TOKEN={seat.token}")
            seat.endpoint.on_join = announce
        echo(f"waiting up to {settings.connect_timeout_ms / 1000:.0f} s for {len(setup.seats)} bots to connect",
             err=True)

    executor = ServedExecutor(host, port, tls, ServerLimits(watch_token=watch_token), ready)
    tally = None if spec.game.is_game else match_tally(spec, len(names), db)
    try:
        try:  # the tally hears of a hand after the database has it: the scoring worker reads it back from there
            result = asyncio.run(run.play(executor, _sinks(kw), tally.add if tally is not None else None))
        except ServerError as exc:
            raise click.ClickException(str(exc)) from None
        except KeyboardInterrupt:
            _interrupted("every finished hand is recorded", db, spec.match_id)
        code = _report(run, result, kw["json_out"], tally)
    finally:
        if tally is not None:
            tally.close()
    raise SystemExit(code)


def _interrupted(what: str, db: Database | None, match_id: str) -> NoReturn:
    """Ctrl-C during a match: what was kept, and with a database the ``--resume`` that finishes it; status 130."""
    secho(f"interrupted: {what}" + (f"; finish with --resume --db {db.path} --match-id {match_id}"
                                    if db is not None else ""), err=True, fg="yellow")
    raise SystemExit(EXIT_INTERRUPTED)


def _logging(verbosity: int) -> None:
    level = logging.WARNING if verbosity == 0 else (logging.INFO if verbosity == 1 else logging.DEBUG)
    logging.basicConfig(level=level, format="%(asctime)s %(name)s %(levelname)s %(message)s")
