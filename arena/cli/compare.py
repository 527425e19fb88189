"""``arena compare``: is the candidate better than the baseline? Duplicate heads-up sessions between the two (and,
optionally, both against reference bots), judged by a sequential probability ratio test after every session and
stopped as soon as it decides (arena.ratings.sprt explains the statistics, arena.runner.compare the matches).

Exit status: 0 H1 accepted (the candidate is better), 1 H0 accepted (it is not), 3 inconclusive at the hand
limit, 2 on errors (bad arguments, a bot that crashed, forfeited or never connected, a failed verification), 5 when
the database's records are damaged.
``--json PATH`` writes everything for a CI job to read. Every hand is recorded in the database (``--db``), the
matches as kind ``compare`` with the comparison id as their tournament, and ``--verify ID`` recomputes a recorded
comparison's verdict from its hands.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import click
from click.core import ParameterSource

from arena.cli.exits import ArenaCommand
from arena.cli.leaderboard import open_db
from arena.cli.live import LiveLine as Progress
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
from arena.cli.output import echo, secho
from arena.deals import commitment
from arena.ratings.estimators import Estimator, per_hand
from arena.ratings.sessions import bot_key
from arena.ratings.sprt import (
    DEFAULT_ALPHA,
    DEFAULT_BETA,
    DEFAULT_MBB0,
    DEFAULT_MBB1,
    Sprt,
    SprtParams,
    Verdict,
    fixed_sessions,
    recorded_comparison,
    replay_comparison,
)
from arena.records import RecordsDamaged, RecordsError, queries
from arena.records.comparisons import comparison, record_comparison, record_outcome
from arena.records.db import Database
from arena.records.ledger import Ledger
from arena.referee import MatchResult, MatchSpec
from arena.runner.bots import BotSpec, BotSpecError
from arena.runner.compare import (
    ComparisonPlan,
    ComparisonRun,
    DealRound,
    RoundCollector,
    open_comparison,
    plan_comparison,
    run_local_comparison,
)
from arena.runner.sandbox import SandboxPolicy
from arena.runner.settings import GAME_SETTINGS, SETTINGS
from arena.transport.server import ServerLimits

DEFAULT_DB = "arena.db"
DEFAULT_MAX_HANDS = 20000
EXIT_H1, EXIT_H0, EXIT_ERROR, EXIT_INCONCLUSIVE, EXIT_DAMAGED = 0, 1, 2, 3, 5
# The bots are local commands the user started, and fast ones (a calling station answers in microseconds) send far
# more than the default 200 actions a second that guards a public referee against floods; so a local comparison
# allows 100 times as many.
LOCAL_LIMITS = ServerLimits(messages_per_second=20000.0, burst=40000)
# every setting but the match's length (--hands here is the most the test may play) and the duplicate scheme (a
# comparison is always heads-up duplicate)
COMPARE_SETTINGS = [s.key for s in SETTINGS if s.key not in ("hands", "duplicate", "all_orders") and s.key not in
                    GAME_SETTINGS]  # the SPRT counts duplicate pairs of reset hands


class CompareError(click.ClickException):
    """An error that ends ``arena compare`` with status 2 (click's own usage errors already do)."""

    exit_code = EXIT_ERROR


# ---------------------------------------------------------------------------------------------- the live line


def _fmt(x: float) -> str:
    return f"{x:+,.1f}" if math.isfinite(x) else ("+inf" if x > 0 else "-inf")


def status_line(test: Sprt, hands_played: int) -> str:
    """hands played, mbb/hand with its 95% CI, the LLR and its bounds."""
    est = test.running_estimate()  # constant time: the line is redrawn all along a long comparison
    ci = f"[{_fmt(est.low)}, {_fmt(est.high)}]" if est.sessions > 1 else "[n/a]"
    return (
        f"hands {hands_played:,} | sessions {est.sessions:,} | candidate {_fmt(est.mean)} mbb/hand, 95% CI {ci} "
        f"| LLR {test.llr:+.2f} in ({test.params.lower:+.2f}, {test.params.upper:+.2f})"
    )


# ---------------------------------------------------------------------------------------------- the report


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _verdict_text(verdict: str, candidate: str, baseline: str, params: SprtParams) -> str:
    if verdict == Verdict.H1:
        return (f"H1 accepted: {candidate} is better than {baseline} "
                f"(mean >= {params.mbb1:g} mbb/hand is more likely than mean <= {params.mbb0:g})")
    if verdict == Verdict.H0:
        return (f"H0 accepted: {candidate} is not better than {baseline} "
                f"(mean <= {params.mbb0:g} mbb/hand is more likely than mean >= {params.mbb1:g})")
    if verdict == "inconclusive":
        return (f"inconclusive: the hand limit came before a decision between mean <= {params.mbb0:g} and "
                f">= {params.mbb1:g} mbb/hand; allow more --hands, or widen --mbb0/--mbb1")
    return "error: the comparison did not run as it should (see errors)"


def _exit_code(verdict: str) -> int:
    return {Verdict.H1.value: EXIT_H1, Verdict.H0.value: EXIT_H0, "inconclusive": EXIT_INCONCLUSIVE}.get(
        verdict, EXIT_ERROR
    )


def build_report(
    test: Sprt,
    *,
    comparison_id: str,
    bots: Sequence[dict[str, str]],
    hands_per_round: int,
    hands_played: int,
    max_hands: int,
    seed: str,
    errors: Sequence[str] = (),
    matches: Sequence[dict[str, Any]] = (),
    seconds: float = 0.0,
    db_path: str | None = None,
    verified: bool | None = None,
) -> dict[str, Any]:
    """Everything ``--json`` writes: the verdict and exit code, the estimate with its 95% CI, the LLR and its
    bounds, the hands used, the bots, the matches and their records."""
    state = test.state()
    params = test.params
    if errors:
        verdict = "error"
    elif test.decided:
        verdict = test.verdict.value
    else:
        verdict = "inconclusive"
    est = state.estimate
    spread = max(est.sd, params.sd_floor)
    fixed = fixed_sessions(params, spread) * hands_per_round if state.sessions > 1 else None
    return {
        "comparison_id": comparison_id,
        "verdict": verdict,
        "exit_code": _exit_code(verdict),
        "summary": _verdict_text(verdict, bots[0]["key"], bots[1]["key"], params),
        "test_verdict": test.verdict.value,
        "candidate": bots[0],
        "baseline": bots[1],
        "references": list(bots[2:]),
        "test": {
            "h0": f"mean <= {params.mbb0:g} mbb/hand",
            "h1": f"mean >= {params.mbb1:g} mbb/hand",
            "mbb0": params.mbb0,
            "mbb1": params.mbb1,
            "alpha": params.alpha,
            "beta": params.beta,
            "lower_bound": params.lower,
            "upper_bound": params.upper,
            "sd_floor": params.sd_floor,
            "min_sessions": params.min_sessions,
            "llr": "n (M1 - M0)(2 mean - M0 - M1) / (2 s^2), s^2 the sample variance (floored)",
        },
        "llr": state.llr,
        "sessions": state.sessions,
        "decided_after_sessions": test.decided_at or None,
        "estimate": {
            "mbb_per_hand": est.mean,
            "ci95": [_finite(est.low), _finite(est.high)],
            "sd": est.sd,
        },
        "hands": {"used": state.hands, "played": hands_played, "max": max_hands, "per_session": hands_per_round},
        "fixed_length_hands": None if fixed is None else math.ceil(fixed),
        "seed": seed,
        "commitment": commitment(seed),
        "seconds": round(seconds, 3),
        "db": db_path,
        "verified": verified,
        "matches": list(matches),
        "errors": list(errors),
    }


def print_report(report: dict[str, Any], err: bool) -> None:
    """The human summary: the verdict, the estimate with its CI, the hands used."""
    est = report["estimate"]
    low, high = est["ci95"]
    ci = f"[{_fmt(low)}, {_fmt(high)}]" if low is not None and high is not None else "[n/a]"
    hands = report["hands"]
    sessions = report["sessions"]
    lines = [
        report["summary"],
        "estimate: none, no duplicate session was completed" if not sessions else
        f"estimate: {_fmt(est['mbb_per_hand'])} mbb/hand, 95% CI {ci}, over {sessions:,} duplicate "
        f"session{'' if sessions == 1 else 's'}"
        + (f" ({Estimator(report['estimator']).label})" if report.get("estimator", "raw") != "raw" else ""),
        f"hands: {hands['used']:,} used ({hands['played']:,} played, limit {hands['max']:,}); LLR "
        f"{report['llr']:+.2f}, bounds ({report['test']['lower_bound']:+.2f}, {report['test']['upper_bound']:+.2f})",
    ]
    if report["fixed_length_hands"] is not None and report["verdict"] in ("H0", "H1"):
        lines.append(f"a fixed-length test with the same alpha and beta would need about "
                     f"{report['fixed_length_hands']:,} hands at this spread")
    for error in report["errors"]:
        lines.append(f"error: {error}")
    if report["verified"] is not None:
        lines.append(f"verified from the hands in {report['db']}: "
                     + ("the same verdict as recorded" if report["verified"] else "NOT the verdict recorded"))
    elif report["db"]:
        lines.append(f"recorded in {report['db']} as comparison {report['comparison_id']} "
                     f"(seed {report['seed']}); {report['seconds']:.1f} s")
    lines += [f"final hash {m['match_id']}: {m['final_hash']}" for m in report["matches"] if m.get("final_hash")]
    for line in lines:
        echo(line, err=err)


def _write_json(report: dict[str, Any], path: str | None) -> str | None:
    """``report`` written to ``path`` (``-``: standard output); why it could not be, if it could not."""
    if path is None:
        return None
    text = json.dumps(report, indent=2)
    if path == "-":
        echo(text)
        return None
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text + "\n")
    except OSError as exc:
        return f"cannot write --json {path}: {exc.strerror or exc}"
    return None


def _finish(report: dict[str, Any], json_path: str | None) -> NoReturn:
    """The report printed and written; status 2 if the JSON could not be written (the CI job would not see it)."""
    failed = _write_json(report, json_path)
    print_report(report, err=json_path == "-")
    if failed is not None:
        secho(f"error: {failed}", fg="red", err=True)
        sys.exit(EXIT_ERROR)
    sys.exit(report["exit_code"])


def _fail(message: str, json_path: str | None) -> NoReturn:
    """An error before any result: a short JSON for the CI job, the message, status 2."""
    if json_path is not None:
        _write_json({"verdict": "error", "exit_code": EXIT_ERROR, "errors": [message]}, json_path)
    raise CompareError(message)


def _damaged(exc: RecordsDamaged, json_path: str | None) -> NoReturn:
    """Records damaged or edited: a short JSON for the CI job, the message naming table and hand, status 5."""
    message = f"records damaged: {exc}"
    if json_path is not None:
        _write_json({"verdict": "error", "exit_code": EXIT_DAMAGED, "errors": [message]}, json_path)
    secho(f"error: {message}", fg="red", err=True)
    raise SystemExit(EXIT_DAMAGED)


# ---------------------------------------------------------------------------------------------- helpers


def _parse_bot(text: str, option: str) -> BotSpec:
    try:
        return BotSpec.parse(text)
    except BotSpecError as exc:
        raise click.BadParameter(str(exc).replace("--bot", option), param_hint=option) from None


def _unused_id(db: Database, wanted: str | None) -> str:
    if wanted is not None:
        if queries.event_taken(db, wanted):
            raise click.UsageError(f"comparison {wanted!r} is already recorded in {db.path}; choose another --id")
        return wanted
    base = time.strftime("c%Y%m%d-%H%M%S")
    cid, n = base, 1
    while queries.event_taken(db, cid):
        n += 1
        cid = f"{base}-{n}"
    return cid


def _match_json(result: MatchResult, status: str, final_hash: str | None) -> dict[str, Any]:
    keep = ("name", "version", "net", "hands", "mbb_per_hand", "decisions", "mean_think_ms", "violations",
            "timeouts", "illegal", "absent", "forfeited")
    return {
        "match_id": result.match_id, "status": status, "hands_played": result.hands_played,
        "commitment": result.commitment, "final_hash": final_hash,
        "results": [{k: v for k, v in dataclasses.asdict(r).items() if k in keep} for r in result.results],
    }


def _logging(verbosity: int) -> None:
    level = logging.WARNING if verbosity == 0 else (logging.INFO if verbosity == 1 else logging.DEBUG)
    logging.basicConfig(level=level, format="%(asctime)s %(name)s %(levelname)s %(message)s")


# ---------------------------------------------------------------------------------------------- the command


@click.command(cls=ArenaCommand)
@click.option("--candidate", metavar="NAME=COMMAND", help="The new version (NAME@VERSION=COMMAND to record a version).")
@click.option("--baseline", metavar="NAME=COMMAND", help="The version to beat.")
@click.option("--reference", "references", multiple=True, metavar="NAME=COMMAND",
              help="A fixed reference bot both also play against, on the same cards (repeat).")
@click.option("--hands", "max_hands", type=click.IntRange(min=2), default=DEFAULT_MAX_HANDS, show_default=True,
              help="Most hands to play, over all matches; inconclusive (status 3) if the test has not decided.")
@click.option("--mbb0", type=float, default=DEFAULT_MBB0, show_default=True,
              help="H0: the candidate's mean is at most this many mbb/hand.")
@click.option("--mbb1", type=float, default=DEFAULT_MBB1, show_default=True,
              help="H1: its mean is at least this many mbb/hand (the edge worth detecting).")
@click.option("--alpha", type=float, default=DEFAULT_ALPHA, show_default=True,
              help="Highest acceptable chance of declaring a candidate better when it is not.")
@click.option("--beta", type=float, default=DEFAULT_BETA, show_default=True,
              help="Highest acceptable chance of missing a candidate better by M1 or more.")
@click.option("--estimator", type=click.Choice([e.value for e in Estimator]), default=Estimator.AIVAT.value,
              show_default=True,
              help="What the test counts: the chips as dealt (raw), all-in EV (every all-in before the river scored "
                   "by its expectation over the rest of the board), or AIVAT (the luck of the cards and of the "
                   "referee's draws taken out). All three are unbiased; AIVAT by default: heads-up it needed 25-67% "
                   "fewer hands for the same interval between different sample bots (README, Ratings), and it "
                   "trusts nothing a bot says.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False, allow_dash=True), default=None,
              metavar="PATH", help="Write the outcome as JSON to PATH ('-': standard output).")
@click.option("--db", "db_path", type=click.Path(dir_okay=False), default=DEFAULT_DB, show_default=True,
              help="SQLite file every hand is recorded in.")
@click.option("--id", "comparison_id", default=None,
              help="Name of the comparison (default: from the time); its matches are ID-h2h, ID-ref1-candidate...")
@click.option("--verify", "verify_id", default=None, metavar="ID",
              help="Play nothing: recompute the verdict of recorded comparison ID from its hands in --db.")
@click.option("--log-dir", type=click.Path(file_okay=False), default=None, help="Keep each bot's output here.")
@click.option("-q", "--quiet", is_flag=True, help="No live line.")
@click.option("-v", "--verbose", count=True, help="Log the referee's work to stderr.")
@seed_options
@settings_options(COMPARE_SETTINGS)
@sandbox_options
@click.pass_context
def compare(ctx: click.Context, /, candidate: str | None, baseline: str | None, references: tuple[str, ...],
            max_hands: int, seed_file: Path | None, mbb0: float, mbb1: float, alpha: float, beta: float,
            estimator: str, json_path: str | None, db_path: str, comparison_id: str | None, verify_id: str | None,
            log_dir: str | None, quiet: bool, verbose: int, **kw: Any) -> None:
    """Is the candidate better than the baseline? Plays duplicate heads-up sessions and stops as soon as a
    sequential probability ratio test (H0: mean <= M0 against H1: mean >= M1, in mbb/hand) decides.

    Exit status: 0 H1 accepted (better), 1 H0 accepted (not better), 3 inconclusive at the hand limit, 2 errors,
    5 records damaged.

    Example: arena compare --candidate new='python my_bot.py' --baseline old='python old_bot.py'
    --hands 20000 --json compare.json
    """
    _logging(verbose)
    try:
        params = SprtParams(mbb0, mbb1, alpha, beta)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    if verify_id is not None:
        explicit = {name for name in ("mbb0", "mbb1", "alpha", "beta")
                    if ctx.get_parameter_source(name) is not ParameterSource.DEFAULT}
        _verify(verify_id, db_path, params, explicit, json_path)  # with the estimator the comparison used
    if candidate is None or baseline is None:
        raise click.UsageError("give --candidate NAME=COMMAND and --baseline NAME=COMMAND (or --verify ID)")
    bots = [_parse_bot(candidate, "--candidate"), _parse_bot(baseline, "--baseline")]
    bots += [_parse_bot(text, "--reference") for text in references]
    keys = [bot_key(b.name, b.version) for b in bots]
    if len(set(keys)) != len(keys):
        raise click.UsageError(f"the bots need different names (or versions): {', '.join(keys)}")
    settings = acpc_game(settings_from_flags(kw), 2)
    sandbox = sandbox_policy(kw.pop("no_sandbox"), settings)
    sandbox = checked_outputs(sandbox, bots, Path.cwd(), {"--log-dir": log_dir},
                              {"--db": db_path, "--json": None if json_path == "-" else json_path})
    config = settings.table_config()
    acpc_seats(bots, MatchSpec("compare", "", 1, config=config, starting_stack=settings.starting_stack()), 2)
    db = open_db(db_path, create=True)
    try:
        cid = _unused_id(db, comparison_id)
        plan = plan_comparison(cid, resolve_seed(seed_file), max_hands, len(references), config,
                               settings.starting_stack(), settings.clock(), settings.tables)
        sandbox = sandbox.hiding(db.path, *db.vault.files, seed_file)
        report = _play(plan, bots, keys, params, db, db_path, Path(log_dir) if log_dir else None, quiet, sandbox,
                       Estimator(estimator))
    except click.ClickException:
        raise
    except RecordsDamaged as exc:
        _damaged(exc, json_path)
    except Exception as exc:  # anything that stops the comparison itself is an error for the CI job, not a crash
        logging.getLogger("arena.compare").debug("comparison failed", exc_info=True)
        _fail(f"the comparison failed: {exc!r}", json_path)
    finally:
        db.close()
    _finish(report, json_path)


def _play(plan: ComparisonPlan, bots: list[BotSpec], keys: list[str], params: SprtParams, db: Database,
          db_path: str, log_dir: Path | None, quiet: bool, sandbox: SandboxPolicy,
          estimator: Estimator = Estimator.RAW) -> dict[str, Any]:
    runs = open_comparison(plan, bots, Ledger(db), sandbox, log_dir=log_dir)
    bot_info = [{"key": k, "name": b.name, "version": b.version, "command": b.command} for k, b in zip(
        keys, bots, strict=True)]
    meta: dict[str, Any] = {"params": dataclasses.asdict(params), "bots": bot_info, "max_hands": plan.max_hands,
                            "estimator": estimator.value}
    record_comparison(db, plan.comparison_id, meta, [(p.match_id, *p.role) for p in plan.pairings])
    test = Sprt(params)
    with Progress(not quiet) as progress:
        collector: RoundCollector

        def on_round(completed: DealRound) -> bool:
            test.add_round(completed.head_to_head, completed.references, completed.hands)
            progress.update(lambda: status_line(test, collector.hands_played))  # made only when shown
            return test.decided

        collector = RoundCollector(plan, on_round, per_hand(estimator))
        run: ComparisonRun = asyncio.run(
            run_local_comparison(plan, runs, collector, log_dir=log_dir, limits=LOCAL_LIMITS)
        )
        progress.update(status_line(test, collector.hands_played))
    errors = list(run.failures)
    if errors and log_dir is None:
        errors.append("run again with --log-dir DIR to keep each bot's output")
    matches = [_match_json(p.result, p.result.reason, p.final_hash) for p in run.played]
    report = build_report(
        test, comparison_id=plan.comparison_id, bots=bot_info, hands_per_round=plan.hands_per_round,
        hands_played=run.hands_played, max_hands=plan.max_hands, seed=plan.seed, errors=errors,
        matches=matches, seconds=run.seconds,
        db_path=db_path,
    )
    report["estimator"] = estimator.value
    record_outcome(db, plan.comparison_id, {"verdict": report["verdict"], "test_verdict": test.verdict.value,
                                            "sessions": test.sessions, "llr": test.llr})
    return report


def _verify(comparison_id: str, db_path: str, params: SprtParams, explicit: set[str],
            json_path: str | None) -> NoReturn:
    """Recompute a recorded comparison's test from its hands; status 2 if it disagrees with what was recorded."""
    try:
        db = Database(db_path, read_only=True)
    except RecordsDamaged as exc:
        _damaged(exc, json_path)
    except RecordsError as exc:
        _fail(str(exc), json_path)
    try:
        recorded_info = comparison(db, comparison_id)
        meta = {**recorded_info.params, **recorded_info.outcome} if recorded_info is not None else {}
        try:
            recorded = recorded_comparison(db, comparison_id, Estimator(meta.get("estimator", Estimator.RAW.value)))
        except (KeyError, ValueError) as exc:
            _fail(str(exc.args[0]) if exc.args else repr(exc), json_path)
        stored = meta.get("params", {})
        given = dataclasses.asdict(params)
        merged = {k: (given[k] if k in explicit or k not in stored else stored[k]) for k in given}
        params = SprtParams(**merged)
        test = replay_comparison(recorded, params)
        bots = meta.get("bots") or [{"key": k} for k in (recorded.candidate, recorded.baseline, *recorded.references)]
        infos = {m: info for m in recorded.match_ids if (info := queries.match_info(db, m)) is not None}
        played = sum(queries.hands_recorded(db, m) for m in recorded.match_ids)
    except RecordsDamaged as exc:
        _damaged(exc, json_path)
    except RecordsError as exc:
        _fail(str(exc), json_path)
    finally:
        db.close()
    errors = []
    if "test_verdict" in meta and not explicit:
        if meta["test_verdict"] != test.verdict.value or meta.get("sessions") != test.sessions:
            errors.append(f"the recorded hands give {test.verdict.value} after {test.sessions} sessions, but "
                          f"{meta['test_verdict']} after {meta.get('sessions')} was reported")
        elif meta.get("verdict") == "error":
            errors.append("the comparison was recorded with errors (a bot crashed, forfeited or never connected)")
    hands_per_round = 2 * len(recorded.match_ids)
    report = build_report(
        test, comparison_id=comparison_id, bots=bots, hands_per_round=hands_per_round, hands_played=played,
        max_hands=int(meta.get("max_hands", played)), seed=infos[recorded.match_ids[0]].seed if infos else "",
        errors=errors, db_path=db_path,
        matches=[{"match_id": m, "status": i.status.value, "commitment": i.commitment,
                  "final_hash": i.final_hash or None} for m, i in infos.items()],
        verified=not errors,
    )
    report["estimator"] = meta.get("estimator", Estimator.RAW.value)
    _finish(report, json_path)


if __name__ == "__main__":  # ``python -m arena.cli.compare``, the same command as ``arena compare``
    compare()
