"""The one vocabulary for how a match stands, from the referee to the records, the ratings and the site."""

from __future__ import annotations

import enum


class MatchStatus(enum.StrEnum):
    """Where a match stands; stored as its value."""

    RUNNING = "running"  # being played, or cut short by a crash of the referee itself (resumable)
    COMPLETED = "completed"  # every scheduled hand was played
    STOPPED = "stopped"  # ended early on purpose: a comparison reached its verdict
    ABORTED = "aborted"  # cut short by an operator (Ctrl-C) or an error; resumable
    NO_SHOW = "no_show"  # a bot never connected, so no hand was dealt
    INTERRUPTED = "interrupted"  # a league match cut short when its host died: its finished hands stand, no more

    @property
    def over(self) -> bool:
        """Whether the match is over for good (its seed may be published; nothing more will be dealt)."""
        return self in (MatchStatus.COMPLETED, MatchStatus.STOPPED, MatchStatus.NO_SHOW, MatchStatus.INTERRUPTED)


class BotOutcome(enum.StrEnum):
    """How a match went for one bot; stored as its value. The worst that happened, in this order of precedence."""

    OK = "ok"  # played every decision it was asked
    NO_SHOW = "no_show"  # never connected
    CRASHED = "crashed"  # its process ended while the match ran
    FORFEITED = "forfeited"  # too many violations (time-outs, used-up retries)
    ABSENT = "absent"  # disconnected for some of its decisions, then (maybe) back

    @property
    def failed(self) -> bool:
        """Whether this outcome makes the match's command fail (a documented exit status)."""
        return self is not BotOutcome.OK


class DecisionHow(enum.StrEnum):
    """How one action at a table came about; stored as its value (``actions.how``)."""

    OK = "ok"  # the bot's own action
    TIMEOUT = "timeout"  # its clock ran out: the referee checked or folded for it (a violation)
    ILLEGAL = "illegal"  # its retries after illegal actions were used up: the same (a violation)
    ABSENT = "absent"  # it was not connected: the same (one violation per lost connection)
    FORFEITED = "forfeited"  # it had forfeited the match: asked nothing, played by the policy


class MatchKind(enum.StrEnum):
    """What a match was played for; stored as its value (with the event's name beside it)."""

    MATCH = "match"  # a single match (arena match, arena serve)
    TOURNAMENT = "tournament"  # one match of a round-robin (its tournament's name beside it)
    COMPARE = "compare"  # one match of a comparison (its comparison id beside it)
    LEAGUE = "league"  # one match of a league (arena host; the league's name beside it)
