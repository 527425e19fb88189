"""When a match's stream breaks, the SDK joins again with the same token: which ends of a stream are worth a new one,
and how long to keep trying.

The referee gives a seat to the newest stream that joins with its token (README "Tokens"), so a bot whose stream
broke (a pause longer than the keepalive, a network cut, a referee restarting its listener) takes its seat back;
the requests that were open meanwhile are played by the time-out policy. What must not be tried again is what a new
stream cannot change: the referee's MatchEnd, and a fatal Error (a bad token, a stream replaced by a newer one, an
unsupported protocol version), which would only loop.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

import grpc

__all__ = ["RECONNECT_FIRST_S", "RECONNECT_FOR_S", "RECONNECT_MAX_S", "Reconnect", "worth_a_new_stream"]

RECONNECT_FIRST_S = 0.25  # the first wait after a stream broke; doubled after each failed try, up to:
RECONNECT_MAX_S = 5.0
RECONNECT_FOR_S = 60.0  # tries stop this long after the stream broke

# Statuses a new stream cannot change: the referee refused this bot, its Join, or what it sent. A referee always
# sends a fatal Error before them, which ends the match for the bot by itself; these cover an Error that was lost.
_FINAL = frozenset({
    grpc.StatusCode.UNAUTHENTICATED,  # an unknown token
    grpc.StatusCode.ALREADY_EXISTS,  # a newer stream joined with the token: that one plays
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.FAILED_PRECONDITION,  # an unsupported protocol version, or no Join first
    grpc.StatusCode.INVALID_ARGUMENT,  # a message the referee could not read
    grpc.StatusCode.UNIMPLEMENTED,  # not an arena referee
    grpc.StatusCode.NOT_FOUND,
})


def worth_a_new_stream(code: grpc.StatusCode) -> bool:
    """Whether a stream that ended with ``code`` (and without a MatchEnd or a fatal Error) broke on the way, so that
    a new one may take the seat back: UNAVAILABLE (a dropped connection: keepalive, a cut, a restart), CANCELLED,
    INTERNAL, UNKNOWN, RESOURCE_EXHAUSTED (a rate limit) and the like; not the refusals in ``_FINAL``."""
    return code is not grpc.StatusCode.OK and code not in _FINAL


@dataclass(frozen=True, slots=True)
class Reconnect:
    """Bounded retries with exponential backoff: wait ``first_s``, then twice as long after each failed try, at most
    ``max_s`` (each wait varied by ±20%, so that the bots of a restarted referee do not all return at once); stop
    once ``for_s`` seconds have passed since the stream broke. ``enabled`` False never tries."""

    enabled: bool = True
    first_s: float = RECONNECT_FIRST_S
    max_s: float = RECONNECT_MAX_S
    for_s: float = RECONNECT_FOR_S

    def __post_init__(self) -> None:
        if not 0 < self.first_s <= self.max_s:
            raise ValueError(f"reconnect waits: first {self.first_s:g} s and most {self.max_s:g} s must satisfy "
                             "0 < first <= most")
        if self.for_s <= 0:
            raise ValueError(f"reconnect for {self.for_s:g} s: expected more than 0 (switch it off instead)")

    def waits(self) -> Iterator[float]:
        """The waits before each try, without end (the caller stops at ``for_s``)."""
        wait = self.first_s
        while True:
            yield wait * random.uniform(0.8, 1.2)
            wait = min(self.max_s, wait * 2)

    def describe(self) -> str:
        """The policy in words, for the log."""
        return (f"first after {self.first_s:g} s, then twice as long each time up to {self.max_s:g} s, "
                f"for at most {self.for_s:g} s")
