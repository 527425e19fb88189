"""Hosted bots arrive here: ``LeagueSubmissions.Submit`` (proto/arena/v1/league.proto; ``arena bots submit`` is the
client) takes a bot's folder as an archive, authenticated by the bot's API key, and the host decides:

1. the key (metadata ``authorization: Bearer KEY``) must be a registered bot's, active: else ``UNAUTHENTICATED``
   before a byte of the archive is read;
2. the archive must fit the league's cap (``[submissions] max_mb``, default 50 MB): a header that says more is
   refused at once, and a stream that sends more than it said is cut off at the cap;
3. its bytes must be what the header said (length and SHA-256), and its members files and folders inside the bot's
   folder (arena.runner.archive: no ``..``, no absolute path, no link), unpacking to at most ``max_unpacked_mb``;
4. the bot must pass the validation of ``arena validate`` (arena.runner.validate) in the league's own sandbox, with
   the league's limits and clock, against the sample bots of ``validate_against``;
5. the version's name must be new for the bot, and the archive not one of its versions already.

Then the archive is stored by its SHA-256 beside the database (durably, before the reply), the version recorded,
and the host plays it from its next match. Every refusal is a reply with ``accepted = false`` and the reason in
words (and the validation's report when it ran). One submission is validated at a time.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from arena.league.host import LeagueHost
from arena.records import submissions
from arena.records.registry import RegisteredBot, RegistryError
from arena.records.submissions import SubmissionError
from arena.runner.archive import ArchiveRefused, digest, members, unpack
from arena.runner.validate import ValidationError, ValidationSettings, validate
from arena.text import TextLimitError, check_length
from arena.transport.connections import Claims
from arena_sdk.pb import league_pb2, league_pb2_grpc

Context = grpc.aio.ServicerContext[Any, Any]
MAX_COMMAND = 1000  # characters of a hosted bot's command
READ_S = 600.0  # the longest an upload may take, however slow its sender


@dataclass(frozen=True, slots=True)
class Answer:
    """What the host says to a submission."""

    accepted: bool
    bot: str
    reason: str
    version: str = ""
    sha256: str = ""
    report: str = ""
    verdict: int = 0

    def message(self) -> league_pb2.SubmissionReply:
        """The reply on the wire."""
        return league_pb2.SubmissionReply(accepted=self.accepted, bot=self.bot, version=self.version,
                                          sha256=self.sha256, reason=self.reason, report=self.report,
                                          verdict=self.verdict)


class SubmissionDesk:
    """Takes a bot's archive, checks and validates it, stores it and makes it the bot's new version (steps 3 to 5 of
    the module; the servicer does 1 and 2)."""

    def __init__(self, host: LeagueHost) -> None:
        self.host = host
        self._one = asyncio.Lock()  # one validation at a time: each runs sandboxed bots on the host's cores

    async def take(self, bot: RegisteredBot, command: str, version: str, data: bytes) -> Answer:
        """The host's answer to a submission of ``bot``: accepted as a new version, or refused with the reason."""
        host = self.host
        db = host.db
        sha256 = digest(data)

        def refuse(reason: str, report: str = "", verdict: int = 0) -> Answer:
            return Answer(False, bot.name, reason, version, sha256, report, verdict)

        if host.frozen:
            return refuse("the ladder is frozen for the finals: no new version may be submitted until it is unfrozen")
        if not command.strip() or len(command) > MAX_COMMAND or "\x00" in command:
            return refuse(f"the command must be 1 to {MAX_COMMAND} characters, without NUL")
        try:
            check_length(version, "version")
        except TextLimitError as exc:
            return refuse(str(exc))
        config = host.config.submissions
        try:
            await asyncio.to_thread(members, data, config.max_unpacked_bytes)
        except ArchiveRefused as exc:
            return refuse(str(exc))
        async with self._one:
            version = version or submissions.next_version(db, bot.name)
            if (taken := submissions.find(db, bot.name, version)) is not None:
                return refuse(f"version {version!r} of {bot.name} was submitted already (archive "
                              f"{taken.sha256[:12]}): give the new one another --version")
            same = next((s for s in submissions.submissions(db, bot.name) if s.sha256 == sha256), None)
            if same is not None:
                return refuse(f"this archive is version {same.version!r} of {bot.name} already (the same SHA-256): "
                              "nothing new to play")
            try:
                report = await self._validate(data, command)
            except (ValidationError, ArchiveRefused, OSError) as exc:
                return refuse(f"the host could not validate it: {exc}")
            if not report.ready:
                return refuse(f"the host's validation: not ready: {report.reason}", report.text(), report.exit_code)
            await asyncio.to_thread(host.store.put, data)  # durable before anything says it was accepted
            try:
                submission = submissions.add(db, bot.name, version, sha256, command, len(data), report.text())
            except (SubmissionError, RegistryError) as exc:
                return refuse(str(exc))
            host.host_version(submission)
        return Answer(True, bot.name, f"accepted: {bot.name}@{version} is hosted from now on (archive "
                      f"{sha256[:12]}, {len(data):,} bytes); it plays from its next match", version, sha256,
                      report.text())

    async def _validate(self, data: bytes, command: str) -> Any:
        """``arena validate`` on the archive, unpacked in a folder of its own, in the league's sandbox."""
        host = self.host
        config = host.config.submissions
        host.store.root.mkdir(mode=0o700, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".validating-", dir=host.store.root))
        try:
            folder = await asyncio.to_thread(unpack, data, staging / "bot", config.max_unpacked_bytes)
            settings = ValidationSettings(config.validate_against, config.validate_hands, host.config.match.clock(),
                                          host.sandbox.hiding(*host.ledger.hidden))
            return await validate(folder, command, settings)
        finally:
            shutil.rmtree(staging, ignore_errors=True)


class SubmissionServicer(league_pb2_grpc.LeagueSubmissionsServicer):
    """LeagueSubmissions over a running host (steps 1 and 2 of the module, then the desk)."""

    def __init__(self, host: LeagueHost, claims: Claims | None = None) -> None:
        self.host = host
        self.desk = SubmissionDesk(host)
        self.claims = claims if claims is not None else host.server.claims

    def add_to(self, server: grpc.aio.Server) -> str:
        league_pb2_grpc.add_LeagueSubmissionsServicer_to_server(self, server)
        return str(league_pb2.DESCRIPTOR.services_by_name["LeagueSubmissions"].full_name)

    async def Submit(self, request_iterator: Any, context: Context) -> league_pb2.SubmissionReply:
        sent = str(dict(context.invocation_metadata() or ()).get("authorization", ""))
        key = sent.removeprefix("Bearer ").strip()
        bot = self.host.registry.authenticate(key) if sent.startswith("Bearer ") else None
        if bot is None:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED,
                                "unknown, revoked or replaced API key: a submission needs its bot's key as metadata "
                                "'authorization: Bearer KEY' (arena bots submit --key)")
            raise AssertionError("unreachable")  # abort raises
        peer = context.peer()
        self.claims.hold(peer)  # an upload and its validation take longer than an idle connection is kept
        try:
            async with asyncio.timeout(READ_S):
                received = await self._receive(bot, request_iterator)
        except TimeoutError:
            received = Answer(False, bot.name, f"the upload took longer than {READ_S:g} s: refused")
        finally:
            self.claims.release(peer)
        if isinstance(received, Answer):
            return received.message()
        header, data = received
        self.claims.hold(peer)
        try:
            answer = await self.desk.take(bot, header.command, header.version, data)
        finally:
            self.claims.release(peer)
        return answer.message()

    async def _receive(self, bot: RegisteredBot, chunks: Any) -> Answer | tuple[league_pb2.SubmissionHeader, bytes]:
        """The header and the archive, or the refusal of an upload that is not what it must be (step 2)."""
        cap = self.host.config.submissions.max_bytes
        cap_words = f"the league's cap of {cap / 1024 / 1024:g} MB (submissions.max_mb)"
        header: league_pb2.SubmissionHeader | None = None
        data = bytearray()
        async for chunk in chunks:
            if header is None:
                if not chunk.HasField("header"):
                    return Answer(False, bot.name, "the first message of a submission holds its header: refused")
                header = chunk.header
                if header.size > cap:
                    return Answer(False, bot.name, f"the archive is {header.size / 1024 / 1024:.1f} MB, over "
                                                   f"{cap_words}: refused", sha256=header.sha256)
            elif chunk.HasField("header"):
                return Answer(False, bot.name, "a second header: refused")
            data += chunk.data
            if len(data) > header.size or len(data) > cap:
                return Answer(False, bot.name, f"more bytes than the header's {header.size:,} (or over "
                                               f"{cap_words}): refused")
        if header is None:
            return Answer(False, bot.name, "an empty submission: refused")
        if len(data) != header.size or digest(bytes(data)) != header.sha256:
            return Answer(False, bot.name, f"the archive arrived as {len(data):,} bytes that are not the "
                                           f"{header.size:,} bytes of SHA-256 {header.sha256[:12]} the header "
                                           "announced: refused (send it again)")
        return header, bytes(data)


__all__ = ["Answer", "SubmissionDesk", "SubmissionServicer"]
