"""The leaderboard checks itself: a published order must not contradict the chips.

After ranking, every pair of bots is compared with its head-to-head result: the bot ranked lower must not have
beaten the one above it by a margin whose 95% confidence interval excludes zero. Each such pair is reported (the
terminal, the JSON, the site), never hidden. Significant head-to-head results can also form a cycle (a beats b beats
c beats a): then no order agrees with all of them, and the cycle is named as such.

A head-to-head result is the pair's paired difference over the sessions they played together: per session half of
(a's mbb/hand − b's mbb/hand). Heads-up that is exactly a's result against b (the crosstable's); at a table of more
it says who did better at the same table, which a's result alone (won from everyone there) does not.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from arena.ratings.sessions import Session
from arena.ratings.stats import WinRate, win_rate


@dataclass(frozen=True, slots=True)
class Contradiction:
    """A pair ranked against its head-to-head result: ``below`` beat ``above`` (``result``, mbb/hand from
    ``below``'s side, its 95% CI above zero). ``in_cycle``: the two are part of a cycle of significant results."""

    above: str
    below: str
    result: WinRate
    in_cycle: bool

    def text(self) -> str:
        """The contradiction in words."""
        cycle = " (part of a cycle: no order can agree with every result)" if self.in_cycle else ""
        return (f"{self.above} is ranked above {self.below}, but {self.below} beat it head-to-head by "
                f"{self.result.mean:+.0f} mbb/hand (95% CI [{self.result.low:+.0f}, {self.result.high:+.0f}], "
                f"{self.result.sessions} sessions){cycle}")

    def as_json(self) -> dict[str, object]:
        return {"above": self.above, "below": self.below, "mbb_per_hand": self.result.mean,
                "ci95": [self.result.low, self.result.high], "sessions": self.result.sessions,
                "in_cycle": self.in_cycle}


@dataclass(frozen=True, slots=True)
class Consistency:
    """What the check found: pairs ranked against a significant head-to-head result, and cycles of significant
    results (each listed from its first bot round to it again: a beats b beats c beats a)."""

    contradictions: tuple[Contradiction, ...] = ()
    cycles: tuple[tuple[str, ...], ...] = ()

    @property
    def ok(self) -> bool:
        return not self.contradictions and not self.cycles

    def lines(self) -> list[str]:
        """What to tell a reader, one line each (none when the order agrees with every significant result)."""
        out = [f"head-to-head cycle: {' beats '.join((*cycle, cycle[0]))} (each significant at 95%)"
               for cycle in self.cycles]
        return out + [c.text() for c in self.contradictions]

    def as_json(self) -> dict[str, object]:
        return {"ok": self.ok, "contradictions": [c.as_json() for c in self.contradictions],
                "cycles": [list(cycle) for cycle in self.cycles]}


def head_to_head(sessions: Iterable[Session]) -> dict[str, dict[str, WinRate]]:
    """``table[a][b]``: half of a's minus b's mbb/hand per session they played together, with its 95% CI."""
    samples: dict[tuple[str, str], list[float]] = defaultdict(list)
    hands: dict[tuple[str, str], int] = defaultdict(int)
    for session in sessions:
        rates = {bot: session.mbb_per_hand(bot) for bot in session.chips}
        for a in rates:
            for b in rates:
                if a != b:
                    samples[a, b].append((rates[a] - rates[b]) / 2)
                    hands[a, b] += session.hands[a]
    table: dict[str, dict[str, WinRate]] = defaultdict(dict)
    for (a, b), values in samples.items():
        table[a][b] = win_rate(values, hands[a, b])
    return dict(table)


def _beats(table: Mapping[str, Mapping[str, WinRate]]) -> dict[str, list[str]]:
    """a -> the bots a beat significantly."""
    return {a: sorted(b for b, result in row.items() if result.low > 0) for a, row in table.items()}


def _components(graph: Mapping[str, list[str]]) -> list[list[str]]:
    """Strongly connected components (Tarjan's algorithm, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, child = work.pop()
            if child == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            successors = graph.get(node, [])
            if child < len(successors):
                work.append((node, child + 1))
                nxt = successors[child]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                out.append(sorted(component))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return out


def _cycle(graph: Mapping[str, list[str]], members: set[str]) -> tuple[str, ...]:
    """A shortest cycle through the component's first bot, staying inside the component."""
    start = min(members)
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for nxt in graph.get(node, []):
                if nxt not in members:
                    continue
                if nxt == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return tuple(reversed(path))
                if nxt not in previous:
                    previous[nxt] = node
                    following.append(nxt)
        frontier = following
    return (start,)


def check_order(order: Sequence[str], table: Mapping[str, Mapping[str, WinRate]]) -> Consistency:
    """Compare a ranking (best first) with the head-to-head ``table`` (``head_to_head``)."""
    graph = _beats(table)
    cycles: list[tuple[str, ...]] = []
    where: dict[str, int] = {}
    for number, component in enumerate(c for c in _components(graph) if len(c) > 1):
        cycles.append(_cycle(graph, set(component)))
        where.update(dict.fromkeys(component, number))
    contradictions = []
    for i, above in enumerate(order):
        for below in order[i + 1:]:
            result = table.get(below, {}).get(above)
            if result is not None and result.low > 0:
                same = above in where and where.get(above) == where.get(below)
                contradictions.append(Contradiction(above, below, result, same))
    return Consistency(tuple(contradictions), tuple(cycles))
