"""The Ray executor: every match a Ray task on some node of a cluster, its hands streamed back to the driver.

The task (``play_on_node``, a Ray streaming generator) starts ``python -m arena.runner.match_worker`` in a process
group of its own on the node it was given, hands it the ``MatchJob`` (seed included) through a pipe, and yields each
codec frame the worker writes: a hand, then the result. The worker plays the match as the local executor does, so the
referee and its sandboxed bots run on that node and talk over a Unix-domain socket there (no port is opened). When
the task ends, fails or is cancelled it kills that process group; when the Ray worker process or its node dies
instead, the match worker dies with it (a parent-death signal) and the bots with the match worker (bubblewrap's
``--die-with-parent``): Ray itself does not end the children of a worker it lost.

Tasks are never retried by Ray (a replay would send hands that are recorded already): the driver replays a lost
match itself, from its first hand not recorded (``arena.runner.tournament``).

A hosted bot (a league's submission: ``BotSpec.archive``) travels by its archive's SHA-256: the driver puts each
archive in Ray's object store once and hands the task a reference to it; the node unpacks it into its own cache
(``node_cache``) the first time one of its matches needs it, checked against the hash, and runs the bot from there,
so nothing but the cluster itself carries a bot's code to the nodes.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import ray
import ray.exceptions

from arena.referee import HandRecord, HandSink, MatchResult
from arena.runner.archive import ArchiveRefused, StoreError, SubmissionStore
from arena.runner.bots import BotSpec
from arena.runner.codec import MatchFailure, decode, decode_value, encode, encode_value, read_frames, write_frame
from arena.runner.executor import ExecutorError, ExecutorKind, MatchControl, MatchJob, WorkerLost

log = logging.getLogger("arena.runner")

USAGE_STATS = "RAY_USAGE_STATS_ENABLED"  # Ray's own usage statistics, sent to its makers unless set to 0
CPUS_PER_MATCH = 1.0  # what a match task asks of its node: the referee's loop (its bots mostly wait for it)


CACHE_ENV = "ARENA_SUBMISSION_CACHE"  # where a node keeps the hosted bots' archives and folders (default below)


def node_cache() -> SubmissionStore:
    """This node's cache of hosted bots: ``$ARENA_SUBMISSION_CACHE``, else ``~/.cache/arena/submissions``."""
    root = os.environ.get(CACHE_ENV) or str(Path.home() / ".cache" / "arena" / "submissions")
    Path(root).parent.mkdir(parents=True, exist_ok=True)
    return SubmissionStore(Path(root))


def _on_this_node(job: bytes, archives: dict[str, Any]) -> bytes:
    """The job with each hosted bot's folder made here from its archive (fetched from the object store by its
    reference when this node has not unpacked it yet)."""
    if not archives:
        return job
    value: MatchJob = decode_value(MatchJob, job)
    store = node_cache()

    def here(bot: BotSpec) -> BotSpec:
        if not bot.archive:
            return bot
        ref = archives[bot.archive]
        return dataclasses.replace(bot, folder=store.folder(bot.archive, fetch=lambda: bytes(ray.get(ref))))

    return encode_value(dataclasses.replace(value, bots=tuple(here(b) for b in value.bots)))


@ray.remote(num_returns="streaming", max_retries=0, num_cpus=CPUS_PER_MATCH)
def play_on_node(job: bytes, archives: dict[str, Any] | None = None) -> Iterator[bytes]:
    """Play one encoded ``MatchJob`` on this node (its hosted bots' archives by reference, by SHA-256); yield its
    frames (hands, then the result or the failure)."""
    try:
        job = _on_this_node(job, archives or {})
    except (StoreError, ArchiveRefused, OSError, ray.exceptions.RayError) as exc:
        yield encode(MatchFailure("", f"a hosted bot's folder cannot be made on {os.uname().nodename}: {exc}"))
        return
    worker = subprocess.Popen(
        [sys.executable, "-m", "arena.runner.match_worker", "--parent", str(os.getpid())],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True,
    )
    assert worker.stdin is not None and worker.stdout is not None
    try:
        write_frame(worker.stdin, job)
        worker.stdin.close()
        ended = False
        for frame in read_frames(worker.stdout):
            yield frame
            ended = ended or not isinstance(decode(frame), HandRecord)
        status = worker.wait()
        if not ended:
            yield encode(MatchFailure("", f"the match worker on {os.uname().nodename} exited with status {status} "
                                          "before the match ended", lost=status < 0))
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(worker.pid, signal.SIGKILL)  # the match's own group, whatever is left of it
        worker.wait()


class RayExecutor:
    """Plays matches as tasks on a Ray cluster (see the module's docstring)."""

    kind = ExecutorKind.RAY

    def __init__(self, address: str | None = None, archives: Callable[[str], bytes] | None = None) -> None:
        self.archives = archives  # a hosted bot's archive by its SHA-256 (the league's store)
        self._refs: dict[str, Any] = {}  # archives put in the object store, by SHA-256
        self._started = False
        os.environ.setdefault(USAGE_STATS, "0")  # arena reports nothing anywhere, nor does the Ray it starts
        if not ray.is_initialized():
            options: dict[str, Any] = {"logging_level": logging.ERROR, "log_to_driver": False}
            if not address and not os.environ.get("RAY_ADDRESS"):  # no cluster named: a new one here, for this run
                address = "local"
                options["include_dashboard"] = False
            try:
                ray.init(address=address or None, **options)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                where = address or os.environ.get("RAY_ADDRESS") or "this machine"
                raise ExecutorError(
                    f"cannot reach the Ray cluster at {where}: {exc} (a cluster started with `ray start` checks a "
                    "token: set RAY_AUTH_MODE=token here too, with the cluster's token in ~/.ray/auth_token or "
                    "RAY_AUTH_TOKEN)") from None
            self._started = True

    def matches_at_once(self, asked: int | None) -> int:
        """``workers`` when given, else one match per CPU of the cluster."""
        if asked:
            return asked
        cpus = float(ray.cluster_resources().get("CPU", 1))  # type: ignore[no-untyped-call]
        return max(1, int(cpus // CPUS_PER_MATCH))

    def _archives(self, job: MatchJob) -> dict[str, Any]:
        """A reference in the object store to each hosted bot's archive (put there once per archive)."""
        wanted = {bot.archive for bot in job.bots if bot.archive}
        if wanted and self.archives is None:
            raise ExecutorError("a hosted bot's archive cannot be shipped to the nodes: no store was given")
        for sha256 in wanted - self._refs.keys():
            assert self.archives is not None
            self._refs[sha256] = ray.put(self.archives(sha256))
        return {sha256: self._refs[sha256] for sha256 in wanted}

    async def play(self, job: MatchJob, sink: HandSink, control: MatchControl | None = None) -> MatchResult:
        """Submit the match as a task (spread over the nodes), write its hands as they come, return its result.
        Once ``control.stop`` is set the task is cancelled (the hands it streamed are written): ``WorkerLost``."""
        if control is not None and control.on_crash is not None:
            raise ExecutorError("a match on Ray cannot be watched for crashes (a comparison): play it with the local "
                                "executor")
        stream: Any = play_on_node.options(scheduling_strategy="SPREAD").remote(encode_value(job),
                                                                                self._archives(job))
        match_id = job.spec.match_id
        ended = False
        stopping = asyncio.ensure_future(self._cancel_when(control.stop, stream)) if control is not None else None
        try:
            async for ref in stream:
                message = decode(await ref)
                if isinstance(message, HandRecord):
                    stored = sink.hand_finished(message)
                    if stored is not None:  # the writer stores it after this turn: before the next one is read
                        await stored
                elif isinstance(message, MatchResult):
                    ended = True
                    return message
                elif isinstance(message, MatchFailure):
                    ended = True
                    if message.lost:  # killed with its node, before its Ray worker: lost like the worker itself
                        raise WorkerLost(f"match {match_id}: {message.error}")
                    raise ExecutorError(f"match {match_id} could not be played: {message.error}")
        except ray.exceptions.RayError as exc:
            ended = True
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            raise WorkerLost(f"match {match_id}: its Ray worker was lost ({type(exc).__name__}: {first})") from None
        finally:
            if stopping is not None:
                stopping.cancel()
            if not ended:  # the driver stopped listening (Ctrl-C, an error): the task ends, killing its match
                with contextlib.suppress(Exception):
                    ray.cancel(stream)
        raise WorkerLost(f"match {match_id}: its task ended without a result")

    @staticmethod
    async def _cancel_when(stop: asyncio.Event, stream: Any) -> None:
        await stop.wait()
        with contextlib.suppress(Exception):
            ray.cancel(stream)

    def close(self) -> None:
        """Disconnect from the cluster (or stop the one started here)."""
        if self._started and ray.is_initialized():
            ray.shutdown()
