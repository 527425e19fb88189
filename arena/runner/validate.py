"""``arena validate``: what an author runs before submitting a bot, and what a league host runs on every submission.

The bot is started in the sandbox local bots always run in (its folder the one folder of its own it can read), plays
a short duplicate match against each of the sample bots chosen (one process per rotation, the rotations one after
the other, as every local match), and the report says in plain words whether it started, joined, answered every
request legally and in time, how long it took a decision and how much memory it held, and what it printed when it
failed. It builds nothing: what the folder holds is what runs.

Each way of failing has its exit status (``Verdict``), the first that applies in the order of the enum: a bot that
did not start (its process exited before it joined: a syntax error, a missing file or interpreter) is not also
reported for never joining, and so on.
"""

from __future__ import annotations

import asyncio
import enum
import secrets
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import arena
from arena import scratch
from arena.referee import ClockPolicy, DecisionHow, HandRecord, MatchResult, MatchSpec, ParticipantResult
from arena.runner.bots import BotProcess, BotSpec
from arena.runner.remote_match import lanes_for, launch, play_watched, prepare_match
from arena.runner.sandbox import SandboxPolicy, check_sandbox
from arena.transport import convert

SAMPLES = Path(arena.__file__).resolve().parent.parent / "sample_bots" / "python"
OPPONENTS = {  # the sample bots a bot can be validated against, and their commands in SAMPLES
    "caller": "calling_station.py",
    "random": "random_bot.py --seed 1",
    "equity": "equity_bot.py",
}
DEFAULT_OPPONENTS = ("caller", "random")
CANDIDATE = "candidate"  # the seat's name in the validation matches (what the bot calls itself is reported apart)
MB = 1024 * 1024
OUTPUT_LINES = 12  # lines of the bot's output shown when it failed
MEMORY_WORDS = ("MemoryError", "bad_alloc", "heap out of memory", "Cannot allocate memory", "out of memory")


class ValidationError(RuntimeError):
    """The validation itself could not run (no sandbox here, the sample bots missing): nothing is said of the bot."""


class Verdict(enum.Enum):
    """What a validation found, each with its exit status (``arena validate``'s, documented in the README)."""

    READY = 0
    DID_NOT_START = 10  # its process exited before it joined (syntax error, missing file, missing interpreter)
    NEVER_JOINED = 11  # its process ran but never joined within the join timeout
    OVER_LIMITS = 12  # arena ended it for going over a limit (its memory cap), or it ran out of memory
    CRASHED = 13  # its process exited, or its stream broke off, while it played
    ILLEGAL = 14  # it sent actions the rules refuse
    TOO_SLOW = 15  # its clock ran out (time-outs)

    @property
    def exit_code(self) -> int:
        """The status ``arena validate`` exits with."""
        return self.value

    @property
    def words(self) -> str:
        """The verdict in a few words."""
        return _WORDS[self]


_WORDS = {
    Verdict.READY: "ready",
    Verdict.DID_NOT_START: "did not start",
    Verdict.NEVER_JOINED: "never joined",
    Verdict.OVER_LIMITS: "went over its limits",
    Verdict.CRASHED: "crashed",
    Verdict.ILLEGAL: "sent illegal actions",
    Verdict.TOO_SLOW: "too slow",
}


@dataclass(frozen=True, slots=True)
class ValidationSettings:
    """How a bot is validated: the opponents (names of ``OPPONENTS``), the hands against each (rounded up to whole
    duplicate sets), the clock (its ``connect_timeout_ms`` is how long the bot is waited for) and the sandbox."""

    opponents: tuple[str, ...] = DEFAULT_OPPONENTS
    hands: int = 20
    clock: ClockPolicy = field(default_factory=ClockPolicy)
    sandbox: SandboxPolicy = field(default_factory=SandboxPolicy)

    def __post_init__(self) -> None:
        unknown = [o for o in self.opponents if o not in OPPONENTS]
        if unknown or not self.opponents:
            raise ValueError(f"opponents {', '.join(unknown) or 'none'}: choose from {', '.join(OPPONENTS)}")
        if self.hands < 1:
            raise ValueError(f"a validation plays at least one hand against each opponent, not {self.hands}")


@dataclass(slots=True)
class _Decisions:
    """The bot's decisions in the validation matches (a HandSink): how many, how long each took, what was refused."""

    participant: int = 0
    elapsed_ms: list[float] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    timeouts: int = 0
    illegal: int = 0
    absent: int = 0
    hands: int = 0

    def hand_finished(self, record: HandRecord) -> None:
        """Count the bot's decisions in one hand."""
        self.hands += 1
        for decision in record.decisions:
            if decision.participant != self.participant:
                continue
            self.rejected.extend(decision.rejected)
            if decision.how is DecisionHow.OK:
                self.elapsed_ms.append(decision.elapsed_ms)
            elif decision.how is DecisionHow.TIMEOUT:
                self.timeouts += 1
            elif decision.how is DecisionHow.ILLEGAL:
                self.illegal += 1
            elif decision.how is DecisionHow.ABSENT:
                self.absent += 1


@dataclass(frozen=True, slots=True)
class Played:
    """One validation match: its result, and what the bot's processes held and left behind."""

    opponent: str
    result: MatchResult
    peak_bytes: int  # the most memory one of the bot's processes held (its cgroup; 0: not measured here)
    limit_note: str  # why arena ended one of its processes, if it went over a limit
    output: tuple[str, ...]  # the last lines its processes wrote (stdout and stderr)
    processes: int  # how many processes of it were started (one per rotation played)

    @property
    def bot(self) -> ParticipantResult:
        """The validated bot's result."""
        return self.result.results[0]


@dataclass(frozen=True, slots=True)
class ValidationReport:
    """What a validation found: the verdict, why (one sentence), the report in plain words, and the bot's last
    output when it failed."""

    verdict: Verdict
    reason: str
    lines: tuple[str, ...]
    output: tuple[str, ...] = ()

    @property
    def ready(self) -> bool:
        """Whether the bot may be submitted (or, at a host, accepted)."""
        return self.verdict is Verdict.READY

    @property
    def exit_code(self) -> int:
        """``arena validate``'s exit status."""
        return self.verdict.exit_code

    def text(self) -> str:
        """The whole report, as printed."""
        head = f"{'ready' if self.ready else 'not ready'}: {self.reason}"
        parts = [head, *(f"  {line}" for line in self.lines)]
        if self.output:
            parts += ["  its last output:", *(f"    | {line}" for line in self.output)]
        parts.append(f"exit status {self.exit_code} ({self.verdict.words})")
        return "\n".join(parts)


def opponent_command(name: str) -> str:
    """The command of a sample opponent, by absolute path (it runs from the validated bot's folder)."""
    script, *args = OPPONENTS[name].split()
    path = SAMPLES / script
    if not path.is_file():
        raise ValidationError(f"the sample bot {name} is not at {path}: arena validate plays against the sample bots "
                              "of an arena checkout (sample_bots/python)")
    return " ".join(["python", str(path), *args])


async def validate(folder: Path, command: str, settings: ValidationSettings | None = None) -> ValidationReport:
    """Start ``command`` from ``folder`` in its sandbox, play the validation matches, and report (see the module)."""
    settings = settings or ValidationSettings()
    folder = folder.resolve()
    if not folder.is_dir():
        raise ValidationError(f"{folder} is not a folder")
    if not command.strip():
        raise ValidationError("the bot's command is empty")
    if settings.sandbox.enabled:
        check_sandbox()
    policy = settings.sandbox.binding(folder)
    played: list[Played] = []
    decisions = _Decisions()
    for opponent in settings.opponents:
        game = await _play(folder, command, opponent, settings, policy, decisions)
        played.append(game)
        verdict = _verdict(game, decisions)
        if verdict is not None:
            return _failed(verdict, game, played, decisions, settings)
    return _ready(played, decisions, settings)


async def _play(folder: Path, command: str, opponent: str, settings: ValidationSettings, policy: SandboxPolicy,
                decisions: _Decisions) -> Played:
    """One short duplicate match of the bot (participant 0) against a sample bot, in the sandbox, from ``folder``."""
    spec = MatchSpec(f"validate-{opponent}", secrets.token_hex(16), settings.hands, policy=settings.clock)
    bots = [BotSpec(CANDIDATE, command), BotSpec(opponent, opponent_command(opponent))]
    setup = await prepare_match(spec, [b.name for b in bots], [decisions], local=True, tcp=False,
                                lanes=lanes_for(spec, len(bots)))
    with scratch.scratch("arena-validate-") as logs:
        try:
            await launch(setup, bots, logs, folder, policy)
            result = await play_watched(setup)
        finally:
            await asyncio.gather(*(p.stop() for p in setup.processes))
            await setup.server.stop()
        _check_opponent(result, opponent, setup.processes)
        own = [p for p in setup.processes if p.spec.name == CANDIDATE]
        return Played(opponent, result, max((p.peak_memory_bytes for p in own), default=0),
                      next((p.limit_note for p in own if p.limit_note), ""), _output(own), len(own))


def _check_opponent(result: MatchResult, opponent: str, processes: Sequence[BotProcess]) -> None:
    """A validation says nothing of the bot when the sample bot it played failed (a ``ValidationError``): a sandbox
    too tight for any bot (a memory cap too low for Python and gRPC), a broken installation."""
    theirs = result.results[1]
    if result.results[0].connected and theirs.failure is not None:
        words = " | ".join(_output([p for p in processes if p.spec.name == opponent])[-3:])
        raise ValidationError(f"the sample bot {opponent} {theirs.failure}, so nothing can be said of the bot: are "
                              f"the sandbox's limits too tight for any bot? ({words or 'it wrote nothing'})")


def _output(processes: Sequence[BotProcess]) -> tuple[str, ...]:
    """The last lines the bot's processes wrote, the last process's last, control characters shown."""
    lines: list[str] = []
    for process in processes:
        lines += [convert.printable(line, 300) for line in process.tail(OUTPUT_LINES) if line.strip()]
    return tuple(lines[-OUTPUT_LINES:])


def _ran_out_of_memory(game: Played) -> bool:
    return bool(game.limit_note) or any(word in line for line in game.output for word in MEMORY_WORDS)


def _verdict(game: Played, decisions: _Decisions) -> Verdict | None:
    """What is wrong with the bot after one match (None: nothing), the first that applies (see ``Verdict``)."""
    bot = game.bot
    if not bot.connected:
        if bot.crashed is None:
            return Verdict.NEVER_JOINED
        return Verdict.OVER_LIMITS if _ran_out_of_memory(game) else Verdict.DID_NOT_START
    if bot.crashed is not None:
        return Verdict.OVER_LIMITS if _ran_out_of_memory(game) else Verdict.CRASHED
    if game.limit_note:
        return Verdict.OVER_LIMITS
    if bot.absent or decisions.absent:
        return Verdict.CRASHED
    if decisions.rejected or decisions.illegal:
        return Verdict.ILLEGAL
    if decisions.timeouts:
        return Verdict.TOO_SLOW
    return None


def _figures(played: Sequence[Played], decisions: _Decisions, settings: ValidationSettings) -> list[str]:
    """The report's lines that hold whatever the verdict: whom it played, its time and memory."""
    lines = []
    intro = next((i for g in played for i in g.bot.joined), None)
    if intro is not None:
        said = [f"version {convert.printable(intro.bot_version, 64)!r}" if intro.bot_version else "",
                f"language {convert.printable(intro.language, 32)!r}" if intro.language else ""]
        lines.append(f"it joined, saying: {', '.join(w for w in said if w) or 'no version, no language'}")
    for game in played:
        bot = game.bot
        processes = f"{game.processes} process{'' if game.processes == 1 else 'es'}"
        lines.append(f"against {game.opponent}: {bot.hands} hands, {bot.net:+,} chips, played by {processes} "
                     "of it (one per seat rotation, one after the other)")
    clock = settings.clock
    if decisions.elapsed_ms:
        mean = statistics.fmean(decisions.elapsed_ms)
        lines.append(f"time a decision: {mean:.1f} ms on average, {max(decisions.elapsed_ms):.1f} ms at most, over "
                     f"{len(decisions.elapsed_ms)} decisions (the clock allows {clock.per_action_ms} ms a decision "
                     f"and a bank of {clock.time_bank_ms} ms)")
    peak = max((g.peak_bytes for g in played), default=0)
    cap = settings.sandbox.limits.memory_mb
    if peak:
        lines.append(f"memory: {peak / MB:.0f} MB at most, all its processes together (the cap is "
                     f"{f'{cap} MB' if cap else 'off'}: sandbox.memory_mb)")
    else:
        lines.append("memory: not measured here (no cgroup for the bots on this host)")
    return lines


def _ready(played: Sequence[Played], decisions: _Decisions, settings: ValidationSettings) -> ValidationReport:
    count = len(decisions.elapsed_ms)
    opponents = " and ".join(g.opponent for g in played)
    reason = (f"it started, joined and answered all {count} requests legally and in time, in duplicate matches "
              f"against {opponents}")
    return ValidationReport(Verdict.READY, reason, tuple(_figures(played, decisions, settings)))


def _failed(verdict: Verdict, game: Played, played: Sequence[Played], decisions: _Decisions,
            settings: ValidationSettings) -> ValidationReport:
    bot = game.bot
    clock = settings.clock
    if verdict is Verdict.DID_NOT_START:
        reason = f"its process {_how(bot.crashed)} before it joined (a syntax error, a missing file or interpreter?)"
        if any("Permission denied" in line for line in game.output):
            reason += ("; the bot runs as an unprivileged user of its own, so its files must be readable by others "
                       "(chmod -R a+rX on its folder)")
    elif verdict is Verdict.NEVER_JOINED:
        reason = (f"its process ran but never joined within {clock.connect_timeout_ms / 1000:g} s "
                  "(clock.connect_timeout_ms): it must connect to ARENA_ADDRESS with ARENA_TOKEN")
    elif verdict is Verdict.OVER_LIMITS:
        cap = settings.sandbox.limits.memory_mb
        what = game.limit_note or (f"it ran out of memory under its cap of {cap} MB (sandbox.memory_mb: address "
                                   "space per process, memory of all its processes together)")
        reason = f"against {game.opponent} it was {what}" if game.limit_note else what
    elif verdict is Verdict.CRASHED:
        if bot.crashed is not None:
            reason = f"its process {_how(bot.crashed)} while it played against {game.opponent}"
        else:
            reason = (f"it was disconnected for {max(bot.absent, decisions.absent)} of its decisions against "
                      f"{game.opponent}")
    elif verdict is Verdict.ILLEGAL:
        refused = len(decisions.rejected)
        first = decisions.rejected[0] if decisions.rejected else "its retries were used up"
        reason = (f"{refused} of its actions against {game.opponent} were refused by the rules (the first: "
                  f"{convert.printable(first, 200)})")
        if decisions.illegal:
            reason += (f"; {decisions.illegal} decisions were played for it by the time-out policy after "
                       f"{clock.max_retries + 1} refusals each (clock.max_retries)")
    else:
        reason = (f"its clock ran out {decisions.timeouts} times against {game.opponent} ({clock.per_action_ms} ms "
                  f"a decision and a bank of {clock.time_bank_ms} ms: clock.per_action_ms, clock.time_bank_ms)")
    lines = _figures(played, decisions, settings)
    show = verdict in (Verdict.DID_NOT_START, Verdict.NEVER_JOINED, Verdict.OVER_LIMITS, Verdict.CRASHED)
    return ValidationReport(verdict, reason, tuple(lines), game.output if show else ())


def _how(crashed: str | None) -> str:
    """How a process ended, from the crash note (``exited with status 1; last output: ...``), without the output
    (shown apart)."""
    return (crashed or "exited").split("; last output:")[0]


__all__ = ["DEFAULT_OPPONENTS", "OPPONENTS", "ValidationError", "ValidationReport", "ValidationSettings", "Verdict",
           "opponent_command", "validate"]
