"""``arena bots submit``'s client: a bot's folder packed as an archive and uploaded to a league host's
``LeagueSubmissions`` service over gRPC, authenticated by the bot's API key (arena.league.submissions)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc

from arena.runner.archive import digest
from arena.text import for_terminal
from arena_sdk.pb import league_pb2, league_pb2_grpc

CHUNK = 32 * 1024  # bytes of the archive a message (the host takes messages of at most 64 KiB)
TIMEOUT_S = 900.0  # the upload and the host's validation together


class UploadError(RuntimeError):
    """No answer from the host (it cannot be reached, it takes no submissions, the time ran out), in words."""


class UploadRefused(UploadError):
    """The host answered and refused the call itself (an unknown, revoked or replaced key; a malformed upload), in
    its words: ``arena bots submit`` exits as for any refusal."""


NO_ANSWER = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.CANCELLED)


def chunks(data: bytes, command: str, version: str) -> Iterator[league_pb2.SubmissionChunk]:
    """The header, then the archive in pieces."""
    header = league_pb2.SubmissionHeader(command=command, version=version, size=len(data), sha256=digest(data))
    yield league_pb2.SubmissionChunk(header=header)
    for start in range(0, len(data), CHUNK):
        yield league_pb2.SubmissionChunk(data=data[start:start + CHUNK])


def upload(address: str, key: str, data: bytes, command: str, version: str = "",
           tls_ca: Path | None = None) -> league_pb2.SubmissionReply:
    """Send an archive to the host at ``address`` as the key's bot's new version; the host's reply."""
    if tls_ca is not None:
        channel = grpc.secure_channel(address, grpc.ssl_channel_credentials(root_certificates=tls_ca.read_bytes()))
    else:
        channel = grpc.insecure_channel(address)
    with channel:
        stub = league_pb2_grpc.LeagueSubmissionsStub(channel)
        try:
            reply: league_pb2.SubmissionReply = stub.Submit(
                chunks(data, command, version), metadata=(("authorization", f"Bearer {key}"),), timeout=TIMEOUT_S)
        except grpc.RpcError as exc:
            code, details = exc.code(), for_terminal(exc.details() or "")
            if code in NO_ANSWER:
                raise UploadError(f"no answer from a league host at {address} ({code.name}: {details})") from None
            if code is grpc.StatusCode.UNIMPLEMENTED:
                raise UploadError(f"the host at {address} takes no submissions (an older arena?)") from None
            raise UploadRefused(f"{details} ({code.name})") from None
    return reply
