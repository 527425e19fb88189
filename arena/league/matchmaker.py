"""Who plays next: a pure function of the connected bots, their ratings and the clock.

The bot that has waited longest since its last match (one that never played first, then the fewest matches) is
seeded first, and its opponents are the ones that played least recently among those within a rating window around
it: ``window`` plus the two ratings' combined uncertainty (so bots with few games meet anyone), widening the longer
the seed waits. Never seeding by the highest uncertainty keeps the top bots from being
starved of games; a widening window means nobody waits forever for an opponent of its strength. At most one bot of
an owner sits at a table unless the league allows more, and a bot plays at most as many matches at once as it has
free slots (its Join's ``max_tables``, capped by the league).
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Candidate:
    """A connected bot, as the matchmaker sees it."""

    name: str
    owner: str
    mu: float
    sigma: float
    free: int  # matches it can start now
    waiting_since: float  # when it last became free to play (joined, or ended a match)
    last_played: float | None  # when its last match ended (None: it never played)
    matches: int  # matches it has played in this league


@dataclass(frozen=True, slots=True)
class Rules:
    """The league's matchmaking settings (arena.league.settings.Matchmaking, and the table's size)."""

    seats: int = 2
    window: float = 3.0
    widen_per_minute: float = 3.0
    same_owner: bool = False
    rest_s: float = 0.0


def window(rules: Rules, waited_s: float) -> float:
    """How far (in TrueSkill mu, beyond the two bots' combined uncertainty) an opponent may be from a bot that has
    waited ``waited_s`` seconds."""
    return rules.window + rules.widen_per_minute * max(0.0, waited_s) / 60.0


def _close(a: Candidate, b: Candidate, reach: float) -> bool:
    return abs(a.mu - b.mu) <= reach + math.hypot(a.sigma, b.sigma)


def _owners_clash(a: Candidate, b: Candidate, rules: Rules) -> bool:
    return not rules.same_owner and bool(a.owner) and a.owner == b.owner


def pick(candidates: list[Candidate], rules: Rules, now: float, budget: int) -> list[tuple[str, ...]]:
    """Up to ``budget`` tables of ``rules.seats`` bots to start now, seeded and filled as the module says."""
    free = {c.name: c.free for c in candidates}
    ready = [c for c in candidates if c.free > 0 and (c.last_played is None or now - c.last_played >= rules.rest_s)]

    def seniority(c: Candidate) -> tuple[float, int, str]:
        return (c.last_played if c.last_played is not None else float("-inf"), c.matches, c.name)

    ready.sort(key=seniority)
    tables: list[tuple[str, ...]] = []
    unmatched: set[str] = set()  # seeds that found no table this round
    while len(tables) < budget:
        seed = next((c for c in ready if free[c.name] > 0 and c.name not in unmatched), None)
        if seed is None:
            break
        reach = window(rules, now - seed.waiting_since)
        table = [seed]
        for other in sorted((c for c in ready if c.name != seed.name and free[c.name] > 0
                             and _close(seed, c, reach)),
                            key=lambda c: (*seniority(c)[:2], abs(c.mu - seed.mu), c.name)):
            if any(_owners_clash(other, sitting, rules) for sitting in table):
                continue
            table.append(other)
            if len(table) == rules.seats:
                break
        if len(table) < rules.seats:
            unmatched.add(seed.name)
            continue
        for bot in table:
            free[bot.name] -= 1
        tables.append(tuple(bot.name for bot in table))
    return tables
