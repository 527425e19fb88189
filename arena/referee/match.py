"""A match: a fixed set of bots, a number of hands dealt from a seed in duplicate rotations.

A match is played at one table, or at one table per rotation ("lanes"), the rotations one after the other: with one
seat object per bot for each rotation (for local bots, one process each, started when its rotation begins and gone
before the next one begins: ``SeatProcesses``), no seat ever sees the same deal twice and no two seats of one bot
that see the same deals are ever there at once, so a bot that remembers hands, or whose processes talk to each
other, gains nothing from it (RULES.md R11.5; the Annual Computer Poker Competition plays the halves of a duplicate
match one after the other and resets the bot in between for the same reason). Each rotation may be played on
several tables at once (``MatchSpec.tables``): the same seats, one connection per bot and rotation hosting them all,
each table taking the rotation's next hand when it is free. Hand numbers, decks and seats are those of the
duplicate schedule whichever way the match is played, so the records are the same.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import time
from collections import deque
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from arena.deals import DealPlan, commitment, cross_table_plan, deck_for_hand, duplicate_plan, policy_draw, rotations
from arena.deals.schedule import duplicate_plan_length
from arena.engine import ConfigError, TableConfig
from arena.engine.config import MAX_SEATS, MIN_SEATS
from arena.engine.units import mbb_per_hand
from arena.referee.clock import BotClock, ClockPolicy
from arena.referee.game import RESET, Game, GameHand, GameResult, GameRules
from arena.referee.gate import TableGate
from arena.referee.records import HandRecord, HandSink
from arena.referee.seat import Introduction, Seat
from arena.referee.status import BotOutcome, MatchStatus
from arena.referee.table import Participant, Player, SeatLink, TableRunner, Upcoming, notify

log = logging.getLogger("arena.referee")

DECKS_KEPT = 4096  # decks kept for a deal's other rotations: far more than the deals in play at once


class SeatProcesses(Protocol):
    """What starts and stops the bots behind a match's seats, one rotation ("lane") at a time (local bot processes,
    arena.runner.local_bots): ``start`` before the rotation's seats are waited for, ``stop`` once its hands are
    played and its seats told the match is over for them, returning only when its processes are gone."""

    async def start(self, lane: int) -> None:
        """Start the bot processes of the seats of ``lane``."""
        ...

    async def stop(self, lane: int) -> None:
        """Stop them, and return once they are gone (process group reaped, private folder deleted)."""
        ...


@dataclass(frozen=True, slots=True)
class MatchSpec:
    """What a match is: its table, its length, its seed and its game. In the reset game stacks reset to
    ``starting_stack`` every hand (R11.2); in a cash game or a freezeout (``game``, arena.referee.game) they carry
    over and ``hands`` is a cash game's length."""

    match_id: str
    seed: str
    hands: int
    config: TableConfig = field(default_factory=TableConfig)
    starting_stack: int = 20000
    policy: ClockPolicy = field(default_factory=ClockPolicy)
    duplicate: bool = True
    all_orders: bool = False
    table_id: str = "table-1"
    seats: int = 0  # seats per table; fewer than the bots: duplicate across tables (cross_table_plan)
    tables: int = 1  # tables played side by side by the same seats (each bot connection hosts that many)
    game: GameRules = RESET

    def __post_init__(self) -> None:
        if self.game.is_game and self.seats:
            raise ConfigError("R11.5", f"a {self.game.kind} game is played at one table: duplicate across tables "
                                       "(seats fewer than bots) is for the reset game")
        if self.hands < 1:
            raise ValueError(f"a match needs at least one hand, got {self.hands}")
        if self.tables < 1:
            raise ValueError(f"a match is played on at least one table at once, got {self.tables}")
        if self.starting_stack <= 0:
            raise ConfigError("R11.1", f"the starting stack must be positive, got {self.starting_stack}")

    @property
    def commitment(self) -> str:
        """The hash of the seed, publishable before the match (see arena.deals)."""
        return commitment(self.seed)

    def cross_table(self, num_bots: int) -> bool:
        """Whether the bots play at several tables, each deal once at every table (duplicate across tables)."""
        return 0 < self.seats < num_bots

    def plan(self, num_bots: int, start: int = 0) -> list[DealPlan]:
        """Every hand of the match in order (rounded up to whole duplicate sets); the reset game only (a game's
        hands depend on how its earlier hands went: ``games``)."""
        if self.game.is_game:
            raise ValueError(f"a {self.game.kind} game has no fixed schedule of hands")
        if self.cross_table(num_bots):
            tables = num_bots // self.seats
            deals = -(-self.hands // tables)
            return [p for p in cross_table_plan(num_bots, self.seats, deals, self.seed) if p.hand_number >= start]
        return list(duplicate_plan(num_bots, self.hands, self.all_orders, self.duplicate, start))

    def hands_planned(self, num_bots: int) -> int:
        """Hands the match plays: the schedule's (reset game), else the most its games can last."""
        if self.game.is_game:
            return self.game.games * self.game.stride(self.hands) * len(self.rotations(num_bots))
        if self.cross_table(num_bots):
            return len(self.plan(num_bots))
        return duplicate_plan_length(num_bots, self.hands, self.all_orders, self.duplicate)

    def games(self, num_bots: int) -> list[Game]:
        """Every game of the match (cash game or freezeout), game by game, each in every rotation (R11.5)."""
        orders = self.rotations(num_bots)
        return [Game(self.game, self.config, order, rotation, len(orders), game, self.seed, self.starting_stack,
                     self.hands)
                for game in range(self.game.games) for rotation, order in enumerate(orders)]

    def rotations(self, num_bots: int) -> list[tuple[int, ...]]:
        """The seat orders each deal is played in at one table (one without duplicate or across tables)."""
        if self.duplicate and not self.cross_table(num_bots):
            return rotations(num_bots, self.all_orders)
        return [tuple(range(self.table_seats(num_bots)))]

    def table_seats(self, num_bots: int) -> int:
        """Seats at each table."""
        return self.seats if self.cross_table(num_bots) else num_bots

    def hands_per_deal(self, num_bots: int) -> int:
        """How many hands one deal is played in: its rotations, or its tables."""
        if self.cross_table(num_bots):
            return num_bots // self.seats
        return len(self.rotations(num_bots))


@dataclass(frozen=True, slots=True)
class ParticipantResult:
    """One bot's result: chips won, mbb/hand, what went wrong."""

    name: str
    version: str
    net: int
    hands: int
    mbb_per_hand: float
    decisions: int
    mean_think_ms: float
    violations: int
    timeouts: int
    illegal: int
    absent: int
    forfeited: bool
    notes: tuple[str, ...]
    connected: bool = True  # whether the bot ever joined
    crashed: str | None = None  # how its process ended while the match ran, if it did
    joined: tuple[Introduction, ...] = ()  # what its bot said of itself when it joined (each different Join once)

    def after(self, earlier: ParticipantResult, big_blind: int) -> ParticipantResult:
        """This bot's result with an earlier part of the same match added in (a resume)."""
        hands = self.hands + earlier.hands
        decisions = self.decisions + earlier.decisions
        net = self.net + earlier.net
        think = self.mean_think_ms * self.decisions + earlier.mean_think_ms * earlier.decisions
        return dataclasses.replace(
            self, net=net, hands=hands, mbb_per_hand=mbb_per_hand(net, big_blind, hands),
            decisions=decisions, mean_think_ms=think / decisions if decisions else 0.0,
            violations=self.violations + earlier.violations, timeouts=self.timeouts + earlier.timeouts,
            illegal=self.illegal + earlier.illegal, absent=self.absent + earlier.absent,
            forfeited=self.forfeited or earlier.forfeited, notes=(*earlier.notes, *self.notes),
        )

    @property
    def outcome(self) -> BotOutcome:
        """The worst that happened to this bot in the match."""
        if not self.connected:
            return BotOutcome.NO_SHOW
        if self.crashed:
            return BotOutcome.CRASHED
        if self.forfeited:
            return BotOutcome.FORFEITED
        if self.absent:
            return BotOutcome.ABSENT
        return BotOutcome.OK

    @property
    def failure(self) -> str | None:
        """What went wrong with this bot, in words, if anything did."""
        outcome = self.outcome
        if outcome is BotOutcome.NO_SHOW:
            return "never connected" + (f" ({self.crashed})" if self.crashed else "")
        if outcome is BotOutcome.CRASHED:
            return f"crashed ({self.crashed})"
        if outcome is BotOutcome.FORFEITED:
            return f"forfeited after {self.violations} violations"
        if outcome is BotOutcome.ABSENT:
            return f"was disconnected for {self.absent} of its decisions"
        return None


@dataclass(frozen=True, slots=True)
class MatchResult:
    """How a match ended and each bot's result, in participant order."""

    match_id: str
    reason: MatchStatus
    hands_played: int
    hands_total: int
    seconds: float
    results: tuple[ParticipantResult, ...]
    commitment: str
    seed: str
    games: tuple[GameResult, ...] = ()  # a cash game's or a freezeout's games, game by game and rotation

    def failures(self) -> list[str]:
        """One line per bot that never connected, crashed, forfeited or dropped out."""
        return [f"{r.name} {r.failure} in match {self.match_id}" for r in self.results if r.failure]

    def after(self, earlier: Sequence[ParticipantResult], big_blind: int) -> MatchResult:
        """This result with what each bot did before a resume added in: the whole match's figures."""
        if not earlier:
            return self
        merged = tuple(r.after(e, big_blind) for r, e in zip(self.results, earlier, strict=True))
        return dataclasses.replace(self, results=merged)


class Match:
    """Runs a match to the end: every scheduled hand is played, whatever the bots do.

    ``seats`` gives each bot's name and either one seat, which then plays every rotation at one table, or one seat
    per rotation, each playing its rotation at a table of its own, the rotations one after the other (each seat is
    waited for when its rotation begins, and told the match is over for it when its rotation ends).
    ``unsafe_overlapping_halves`` plays the rotations all at once instead, as arena once did: then one bot's seats
    that see the same deals are there at the same time, and its processes can tell each other the cards (for the
    integrity tests' positive controls only; never a setting). ``recorded`` are hand numbers already played (a
    resumed match skips them); for a cash game or a freezeout, ``history`` gives each recorded hand's final stacks
    (per seat), from which its game is brought back to where it was (arena.referee.game).
    """

    def __init__(
        self,
        spec: MatchSpec,
        seats: Sequence[tuple[str, Seat | Sequence[Seat]]],
        sinks: Sequence[HandSink] = (),
        versions: Sequence[str] | None = None,
        recorded: Collection[int] = (),
        on_hand: Callable[[HandRecord], None] | None = None,
        history: Mapping[int, Sequence[int]] | None = None,
        unsafe_overlapping_halves: bool = False,
    ) -> None:
        table_seats = spec.table_seats(len(seats))
        if not MIN_SEATS <= table_seats <= MAX_SEATS:
            raise ConfigError("R2.1", f"a table has 2 to 22 seats, got {table_seats}")
        self.spec = spec
        lanes = [[s] if isinstance(s, Seat) else list(s) for _, s in seats]
        count = len(lanes[0])
        rotations = len(spec.rotations(len(seats)))
        if any(len(lane) != count for lane in lanes) or count not in (1, rotations):
            raise ValueError(f"give every bot one seat, or one seat per rotation ({rotations}); got {count}")
        self.participants = [
            Participant(name, version=(versions[i] if versions else ""), seats=lanes[i])
            for i, (name, _) in enumerate(seats)
        ]
        self.lanes = count
        self.overlapping = unsafe_overlapping_halves  # every lane at once: see the class docstring
        self.cross_tables = spec.hands_per_deal(len(seats)) if spec.cross_table(len(seats)) else 0
        if self.cross_tables and count != 1:
            raise ValueError("duplicate across tables needs one seat per bot")
        gates: dict[int, TableGate] = {}  # per seat object: shared by its Players at every table
        links: dict[int, SeatLink] = {}

        def player(participant: Participant, seat: Seat) -> Player:
            gate = gates.setdefault(id(seat), TableGate(seat)) if spec.tables > 1 else None
            link = links.setdefault(id(seat), SeatLink())
            return Player(participant, seat, BotClock(spec.policy), link=link, gate=gate)

        def name(base: str, k: int) -> str:
            return base if spec.tables == 1 else f"{base}.{k + 1}"

        draw = functools.partial(policy_draw, spec.seed)  # mixed actions drawn from the secret seed
        # groups[g][k]: the k-th table played side by side in group g (a lane; or one table per seat-group of a
        # deal across tables); each group plays its hands on as many tables as the match has at once
        self.groups: list[list[list[TableRunner]]] = []
        if self.cross_tables:  # every bot has one seat, at whichever table it sits this deal
            sides = []
            for k in range(spec.tables):  # a bot sits at one table of a deal: one clock for all of them
                players = [player(p, p.seats[0]) for p in self.participants]
                sides.append([TableRunner(spec.match_id, name(f"{spec.table_id}-t{table + 1}", k), spec.config,
                                          spec.policy, players, sinks, draw) for table in range(self.cross_tables)])
            self.groups = [sides]
        else:
            for lane in range(count):
                base = spec.table_id if count == 1 else f"{spec.table_id}-r{lane}"
                self.groups.append([[TableRunner(spec.match_id, name(base, k), spec.config, spec.policy,
                                                 [player(p, p.seats[lane]) for p in self.participants], sinks,
                                                 draw)]
                                    for k in range(spec.tables)])
        self.tables = [table for group in self.groups for side in group for table in side]
        self.recorded = frozenset(recorded)
        self._told: set[int] = set()  # seats told the match is over for them (by id)
        self.hands_played = 0
        self.on_hand = on_hand
        self._stop = asyncio.Event()
        self._stop_reason = MatchStatus.ABORTED
        self._crashed = asyncio.Event()
        self._dead: list[Seat] = []  # seats whose bot process ended (crashed with a seat named)
        self.games: list[Game] = []
        if spec.game.is_game:
            self.plan: list[DealPlan] = []
            self.games = spec.games(len(seats))
            self._bring_back(history or {})
            firsts = [hand.plan for hand in (g.next_hand() for g in self.games) if hand is not None]
        else:
            self.plan = [p for p in spec.plan(len(seats)) if p.hand_number not in self.recorded]
            firsts = self.plan
        # a deal's other rotations reuse its deck when they are played soon after it (one table, or lanes at once)
        self._hands_per_deal = spec.hands_per_deal(len(seats)) if not self.sequential else 1
        self._decks: dict[int, tuple[list[int], int]] = {}  # deals in play: deck, hands of it still to play
        for lane in range(count):  # each seat learns in its Welcome where it sits in its first hand
            for index, participant in enumerate(self.participants):
                first = next((p for p in firsts if (count == 1 or p.rotation == lane) and index in p.seating), None)
                if first is not None:
                    participant.seats[lane].first_seat(first.seating.index(index))

    def _bring_back(self, history: Mapping[int, Sequence[int]]) -> None:
        """Replay the recorded hands' final stacks into their games (a resume): each game is where it was."""
        missing = self.recorded - set(history)
        if missing:
            raise ValueError(f"the final stacks of recorded hands {sorted(missing)[:5]} are needed to resume a game")
        for game in self.games:
            while (hand := game.next_hand()) is not None and hand.plan.hand_number in self.recorded:
                game.record(history[hand.plan.hand_number])

    @property
    def hands_total(self) -> int:
        """Hands the match plays in all (whole duplicate sets), including those recorded before a resume; for
        games, the hands played once every game is over, else the most they can last."""
        if self.games:
            if all(g.over for g in self.games):
                return sum(g.index for g in self.games)
            return self.spec.hands_planned(len(self.participants))
        return len(self.recorded) + len(self.plan)

    @property
    def unfinished(self) -> bool:
        """Whether hands of the match are still to be played."""
        if self.games:
            return not all(g.over for g in self.games)
        return self.hands_played < len(self.plan)

    def connected(self, participant: int) -> bool:
        """Whether every seat of a participant is connected now."""
        return all(seat.connected for seat in self.participants[participant].seats)

    def crashed(self, participant: int, why: str, seat: Seat | None = None) -> None:
        """A bot's process ended while the match still runs: note it (its seats are played by the time-out policy
        from now on, as for any absent bot). ``seat`` is the seat that process played, when it played one."""
        p = self.participants[participant]
        p.crashed = why if p.crashed is None else p.crashed
        p.notes.append(f"crashed: {why}")
        self._dead.extend(p.seats if seat is None else [seat])
        self._crashed.set()  # a bot that dies before it joins need not be waited for

    def stop(self, reason: MatchStatus = MatchStatus.ABORTED) -> None:
        """Finish the hands in play, then end the match with ``reason`` (STOPPED when a comparison has decided)."""
        self._stop_reason = reason
        self._stop.set()

    @property
    def sequential(self) -> bool:
        """Whether the lanes are played one after the other (several lanes, not ``overlapping``)."""
        return self.lanes > 1 and not self.overlapping

    def stages(self) -> list[list[int]]:
        """The lanes played together, stage by stage: all of them at once (one lane; overlapping lanes), else one
        lane per stage in rotation order, leaving out lanes with nothing left to play (a resumed match)."""
        if not self.sequential:
            return [list(range(len(self.groups)))]
        return [[lane] for lane in range(self.lanes) if self._has_work(lane)]

    def _has_work(self, lane: int) -> bool:
        if self.games:
            return any(not g.over for g in self.games if g.rotation == lane)
        return any(p.rotation == lane for p in self.plan)

    async def run(self, processes: SeatProcesses | None = None) -> MatchResult:
        """Play every hand and tell the bots, stage by stage (``stages``): each stage starts its lanes' bots
        (``processes``), waits for them to connect (up to the policy's limit), plays its hands, tells its seats the
        match is over for them and stops their bots before the next stage starts. A match whose bots do not all
        connect for its first stage deals nothing (NO_SHOW); a bot that does not connect for a later one is played
        by the time-out policy there (absent); a match stopped early ends as ``stopped``."""
        started = time.monotonic()
        stages = self.stages()
        running: list[int] = []  # lanes whose bots were started and not yet stopped
        reason: MatchStatus | None = None
        if not stages:  # nothing left to play
            for participant in self.participants:
                participant.ever_connected = True
        for number, lanes in enumerate(stages):
            if self._stop.is_set():
                break
            if processes is not None:
                for lane in lanes:
                    running.append(lane)
                    await processes.start(lane)
            if number == 0:
                if not await self._begin(lanes):
                    reason = MatchStatus.NO_SHOW
                    break
            else:
                await self._rejoin(lanes)
            self._warn_few_tables(lanes)
            await asyncio.gather(*(self._play_group(group) for group in lanes))
            if number < len(stages) - 1:  # the next stage's seats play on; these are done
                await self._tell(lanes, self.result(self._end_reason(), time.monotonic() - started))
                if processes is not None:
                    for lane in lanes:
                        running.remove(lane)
                        await processes.stop(lane)
        elapsed = time.monotonic() - started
        result = self.result(reason or self._end_reason(), elapsed)
        await self._tell(None, result)
        if processes is not None and running:
            for lane in running:
                await processes.stop(lane)
            result = self.result(reason or self._end_reason(), elapsed)  # with a crash seen only as they stopped
        return result

    def _end_reason(self) -> MatchStatus:
        """COMPLETED, or why the match was stopped while hands were left."""
        return self._stop_reason if self._stop.is_set() and self.unfinished else MatchStatus.COMPLETED

    async def _begin(self, lanes: Sequence[int]) -> bool:
        """Wait for the first stage's seats; whether the match can begin (every bot joined). A bot still starting
        when another one died before joining is not to blame for the match not starting."""
        cut_short = await self._wait_for(lanes, give_up=True)
        for participant in self.participants:
            joined = all(participant.seats[lane].has_joined for lane in lanes)
            participant.ever_connected = joined or (cut_short and participant.crashed is None)
            if not joined:
                participant.notes.append("never connected" if not participant.ever_connected else
                                         "not waited for: another bot died before the match began")
        return not cut_short and all(p.ever_connected for p in self.participants)

    async def _rejoin(self, lanes: Sequence[int]) -> None:
        """Wait for a later stage's seats; a bot whose seat did not join is played by the time-out policy there."""
        await self._wait_for(lanes, give_up=False)
        for participant in self.participants:
            for lane in lanes:
                if not participant.seats[lane].has_joined:
                    participant.notes.append(f"its process for rotation {lane} never connected: the time-out "
                                             "policy played its seat there")

    async def _wait_for(self, lanes: Sequence[int], give_up: bool) -> bool:
        """Wait for the seats of ``lanes`` to connect, each up to the policy's limit; a seat whose bot died before it
        joined is not waited for (with ``give_up``, nor then are the others). Whether such a death happened."""
        timeout = self.spec.policy.connect_timeout_ms / 1000
        seats = {id(p.seats[lane]): p.seats[lane] for p in self.participants for lane in lanes}
        waits = {key: asyncio.ensure_future(seat.wait_connected(timeout)) for key, seat in seats.items()}
        crash: asyncio.Future[Any] = asyncio.ensure_future(self._crashed.wait())  # a bot's process ended
        died = False
        try:
            while True:
                dead = {id(seat) for seat in self._dead if not seat.has_joined} & waits.keys()
                for key in dead:
                    waits[key].cancel()
                died = died or bool(dead)
                pending = [f for f in waits.values() if not f.done()]
                if not pending or (died and give_up):
                    return died
                await asyncio.wait({*pending, crash}, return_when=asyncio.FIRST_COMPLETED)
                if crash.done():
                    self._crashed.clear()
                    crash = asyncio.ensure_future(self._crashed.wait())
        finally:
            crash.cancel()
            for waiting in waits.values():
                waiting.cancel()

    async def _tell(self, lanes: Collection[int] | None, result: MatchResult) -> None:
        """Tell the seats of ``lanes`` (None: every seat) not told yet that the match is over for them."""
        for index, participant in enumerate(self.participants):
            for lane, seat in enumerate(participant.seats):
                if (lanes is None or lane in lanes) and id(seat) not in self._told:
                    self._told.add(id(seat))
                    await notify(seat.match_finished(result, index), f"match end to {participant.name}")

    def _warn_few_tables(self, lanes: Sequence[int]) -> None:
        """Say so when a bot takes fewer tables at once than the match is played on: its hands (and those of the
        bots at its tables) are then played fewer at a time than asked."""
        if self.spec.tables == 1:
            return
        for participant in self.participants:
            most = min(participant.seats[lane].max_tables for lane in lanes)
            if most < self.spec.tables:
                log.warning("%s takes %d table(s) at once (its Join's max_tables), not %d: its hands are played %s",
                            participant.name, most, self.spec.tables,
                            "one after another" if most == 1 else f"{most} at a time")

    async def _play_group(self, group: int) -> None:
        """Play a lane's hands (every hand, with one lane; every deal, across tables) on its tables side by side:
        each table takes the next hand (or deal) in order when it is free."""
        sides = self.groups[group]
        if self.games:  # each table of the lane takes the lane's next game and plays it to its end
            games = deque(g for g in self.games if self.lanes == 1 or g.rotation == group)

            async def play_games(tables: list[TableRunner]) -> None:
                while games and not self._stop.is_set():
                    await self._play_game(tables[0], games.popleft())

            await asyncio.gather(*(play_games(tables) for tables in sides))
            return
        if self.cross_tables:
            by_deal: dict[int, list[DealPlan]] = {}
            for plan in self.plan:
                by_deal.setdefault(plan.deal, []).append(plan)
            work: deque[list[DealPlan]] = deque(by_deal[deal] for deal in sorted(by_deal))
        else:
            work = deque([plan] for plan in self.plan if self.lanes == 1 or plan.rotation == group)

        def upcoming() -> Upcoming | None:  # a table's next hand, taken ahead for a lane to go on to (the hand chain)
            if not work or self._stop.is_set():
                return None
            plan = work.popleft()[0]
            return plan, *self._dealt(plan)

        async def side(tables: list[TableRunner]) -> None:
            if not self.cross_tables:
                table = tables[0]
                table.upcoming = upcoming
                try:
                    while True:  # one hand at a time, in this task (no task of its own per hand)
                        # a hand a lane went on to is played even once the match is stopped: its bots are dealt in
                        hand = table.started_hand()
                        if hand is None and not self._stop.is_set():
                            hand = table.next_hand() or upcoming()
                        if hand is None:
                            break
                        await self._play(table, *hand)
                finally:
                    await table.drop_next()
                return
            while work and not self._stop.is_set():  # a deal at every table at once, each bot at one of them
                plans = work.popleft()
                await asyncio.gather(*(self._play(tables[plan.rotation], plan, *self._dealt(plan)) for plan in plans))

        await asyncio.gather(*(side(tables) for tables in sides))

    def _dealt(self, plan: DealPlan) -> tuple[list[int], list[int]]:
        """The deck and starting stacks of a planned hand."""
        kept = self._decks.get(plan.deal)  # each deal is played once per rotation (or table): derived once
        if kept is None:
            deck = deck_for_hand(self.spec.seed, plan.deal)
            if self._hands_per_deal > 1:
                self._decks[plan.deal] = (deck, self._hands_per_deal - 1)
                while len(self._decks) > DECKS_KEPT:
                    del self._decks[next(iter(self._decks))]
        else:
            deck, left = kept
            if left > 1:
                self._decks[plan.deal] = (deck, left - 1)
            else:
                del self._decks[plan.deal]
        return deck, [self.spec.starting_stack] * len(plan.seating)

    async def _play(self, table: TableRunner, plan: DealPlan, deck: Sequence[int], stacks: Sequence[int]) -> None:
        record = await table.play_hand(plan, deck, stacks)
        self.hands_played += 1
        if self.on_hand is not None:
            self.on_hand(record)

    async def _play_game(self, table: TableRunner, game: Game) -> None:
        """Play a game's hands one after another until it is over (or the match is stopped)."""
        while (hand := game.next_hand()) is not None and not self._stop.is_set():
            record = await self._play_game_hand(table, hand)
            game.record(record.final_stacks)

    async def _play_game_hand(self, table: TableRunner, hand: GameHand) -> HandRecord:
        deck = deck_for_hand(self.spec.seed, hand.plan.deal)
        record = await table.play_hand(hand.plan, deck, hand.stacks, hand.config, hand.entry_blinds)
        self.hands_played += 1
        if self.on_hand is not None:
            self.on_hand(record)
        return record

    def result(self, reason: MatchStatus, seconds: float) -> MatchResult:
        """The match's results so far."""
        big_blind = self.spec.config.big_blind
        results = tuple(
            ParticipantResult(
                name=p.name,
                version=p.version,
                net=p.net,
                hands=p.hands,
                mbb_per_hand=mbb_per_hand(p.net, big_blind, p.hands),
                decisions=p.decisions,
                mean_think_ms=(1000.0 * p.think_s / p.decisions) if p.decisions else 0.0,
                violations=p.violations,
                timeouts=p.timeouts,
                illegal=p.illegal,
                absent=p.absent,
                forfeited=p.forfeited,
                notes=tuple(p.notes),
                connected=p.ever_connected,
                crashed=p.crashed,
                joined=tuple(dict.fromkeys(i for i in (seat.introduction for seat in p.seats) if i is not None)),
            )
            for p in self.participants
        )
        return MatchResult(
            self.spec.match_id, reason, len(self.recorded) + self.hands_played, self.hands_total, seconds, results,
            self.spec.commitment, self.spec.seed, tuple(g.result() for g in self.games),
        )
