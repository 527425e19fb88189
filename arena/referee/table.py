"""Playing one hand at one table: ask the seat to act, enforce the clock and the retries, never wait on a bot
longer than its clock allows, and hand the finished hand to the records before telling the bots.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import math
import time
from collections import deque
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, field

from arena import switches
from arena.deals import DealPlan
from arena.engine import Action, ActionKind, EventKind, Hand, IllegalActionError, LegalActions, TableConfig
from arena.engine.view import PublicHistories, SeatView, seat_view
from arena.referee import fast
from arena.referee.clock import BotClock, ClockPolicy, TurnTimer
from arena.referee.gate import TableGate
from arena.referee.lane import LaneHandle, LanePlace
from arena.referee.records import Answer, Commented, Decision, DecisionRecord, HandRecord, HandSink, MixedAction
from arena.referee.seat import HandStart, InvalidAction, Seat, SeatUnavailable
from arena.referee.status import DecisionHow

log = logging.getLogger("arena.referee")

NOTIFY_TIMEOUT_S = 2.0
REQUESTS_PER_HAND = 1000  # more decisions than one hand can have (22 seats x 4 streets x a few raises)
MAX_CHOICES = 64  # actions in one mixed action (proto Action.policy)
Draw = Callable[[int, int], float]  # (hand number, events so far) -> a uniform number in [0, 1) (deals.policy_draw)
Upcoming = tuple[DealPlan, Sequence[int], Sequence[int]]  # a hand to play next: its plan, deck and stacks


@dataclass(slots=True)
class Participant:
    """A bot in a match, over all the tables (lanes) it plays at: what happened to it so far."""

    name: str
    version: str = ""
    net: int = 0
    hands: int = 0
    decisions: int = 0
    think_s: float = 0.0
    violations: int = 0
    timeouts: int = 0
    illegal: int = 0
    absent: int = 0
    forfeited: bool = False
    ever_connected: bool = False
    crashed: str | None = None
    notes: list[str] = field(default_factory=list)
    seats: list[Seat] = field(default_factory=list)  # its seat at every table, to tell each of a forfeit


@dataclass(slots=True)
class SeatLink:
    """Whether a seat's bot was connected when last asked, for all the tables it plays at: a bot that drops is one
    violation, and is waited for once, however many tables it plays at."""

    was_connected: bool = True
    awaiting_reconnect: bool = False


@dataclass(slots=True)
class Player:
    """A participant's seat at one table: the seat object that answers there, and its clock."""

    participant: Participant
    seat: Seat
    clock: BotClock
    link: SeatLink = field(default_factory=lambda: SeatLink())  # shared by the seat's Players at every table
    gate: TableGate | None = None  # with several tables: the seat's places, shared by its Players at every table

    @property
    def name(self) -> str:
        return self.participant.name


async def notify(call: Awaitable[None], what: str, seat: Seat | None = None) -> None:
    """Deliver a notification to a seat without letting a slow or broken bot hold up the table (a seat whose
    notifications only queue a message, ``Seat.notifications_queue``, needs no time limit)."""
    if seat is not None and seat.notifications_queue:
        try:
            await call
        except Exception as exc:
            log.warning("notification %s failed: %r", what, exc)
        return
    try:
        # The call runs in this task (no task of its own, as wait_for would make): most seats only queue a message
        async with asyncio.timeout(NOTIFY_TIMEOUT_S):
            await call
    except Exception as exc:  # a seat's failure to listen must never stop the match
        log.warning("notification %s failed: %r", what, exc)


_LIVE_POSTS = (EventKind.POST_SMALL_BLIND, EventKind.POST_BIG_BLIND, EventKind.POST_ENTRY_BLIND)
# The compiled engine encodes a request's view itself (Hand.view_wire); the Python reference does not
_VIEW_WIRE: Callable[..., bytes] | None = getattr(Hand, "view_wire", None)


def posted(hand: Hand) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Each seat's bet and committed chips once the forced bets are posted, before anyone acts: blinds count toward
    the bet, antes only toward the committed chips (R3.1, R3.2)."""
    bets = [0] * hand.num_seats
    committed = [0] * hand.num_seats
    for event in hand.events:
        if event.kind in _LIVE_POSTS:
            bets[event.seat] += event.amount
        elif event.kind is not EventKind.POST_ANTE:
            break  # the posts come first, then the deal
        committed[event.seat] += event.amount
    return tuple(bets), tuple(committed)


@dataclass(slots=True)
class _Answer:
    """What waiting for a seat's action came to."""

    how: DecisionHow = DecisionHow.OK
    action: Action | None = None
    event_index: int = 0
    rejected: list[str] = field(default_factory=list)
    policy: tuple[tuple[Action, float], ...] = ()
    comment: str = ""


@dataclass(slots=True)
class Armed:
    """The table's next hand, armed in the lane of the hand in play (the hand chain: arena.referee.lane): made, and
    its HandStarts encoded, before the lane went on to it; once it did, its play and the fast path that adopted the
    lane (``started``)."""

    upcoming: Upcoming
    hand: Hand
    hand_id: str
    names: tuple[str, ...]
    lane: LaneHandle
    started_at: float = 0.0
    play: HandPlay | None = None
    run: fast.FastRun | None = None

    @property
    def started(self) -> bool:
        """Whether the lane went on to it."""
        return self.run is not None


@dataclass(slots=True)
class HandPlay:
    """One hand in play at a table: the hand, who sits where, and its decisions so far."""

    hand: Hand
    hand_id: str
    plan: DealPlan
    seating: tuple[int, ...]
    names: tuple[str, ...]
    stacks: Sequence[int]
    decisions: list[DecisionRecord] = field(default_factory=list)
    timeouts: frozenset[int] = frozenset()  # event indexes of the actions the referee made for a seat
    histories: PublicHistories = field(default_factory=PublicHistories)
    told: bool = False  # the bots have their HandEnds already (a lane went on to the next hand: the hand chain)

    def add(self, record: DecisionRecord) -> None:
        self.decisions.append(record)
        if record.how != "ok":
            self.timeouts = self.timeouts | {record.event_index}


class TableRunner:
    """Plays hands at one table for a fixed list of players (one per participant, in participant order), whose
    seats rotate from hand to hand."""

    def __init__(
        self,
        match_id: str,
        table_id: str,
        config: TableConfig,
        policy: ClockPolicy,
        players: Sequence[Player],
        sinks: Sequence[HandSink] = (),
        draw: Draw | None = None,
    ) -> None:
        self.match_id = match_id
        self.draw = draw  # for mixed actions; without it a table refuses them
        self.table_id = table_id
        self.config = config
        self.policy = policy
        self.players = list(players)
        self.sinks = list(sinks)
        self._request_ids = itertools.count(1)  # replaced per hand; see play_hand
        self.fast = fast.fast_loop()  # common decisions played as the Actions are read (arena.referee.fast)
        self._chain = switches.HAND_CHAIN.value() == "on"
        self._stored: bool | None = None  # whether a sink stores the hands (``chains``), once asked
        self._loop: asyncio.AbstractEventLoop | None = None
        # the hand chain (arena.referee.lane): where the table's next hand comes from when a lane is to go on to it
        # (set by the match where each table takes the next hand in turn), that hand once taken, and armed
        self.upcoming: Callable[[], Upcoming | None] | None = None
        self.reserved: Upcoming | None = None
        self._ahead: deque[Armed] = deque()  # hands a lane went on to (started) or will (the last, if not started)
        self._held: list[TableGate] = []  # the seats' places a hand a lane went on from passes to the next
        self._gates = [player.gate for player in self.players if player.gate is not None]  # (fixed for the match)
        self._names: dict[tuple[int, ...], tuple[str, ...]] = {}  # the seats' names by seating, for the hand chain

    def next_hand(self) -> Upcoming | None:
        """The hand this table took already for a lane that did not go on to it, which it plays next (between hands,
        a hand armed and not gone on to is one: the lane that ended without it gave it back, ``disarm``)."""
        return self.reserved

    def started_hand(self) -> Upcoming | None:
        """The hand a lane went on to (its HandStarts written), if any: the table's next hand, whatever else."""
        if self._ahead and self._ahead[0].started:
            return self._ahead[0].upcoming
        return None

    async def drop_next(self) -> None:
        """The match is over: a hand a lane went on to is withdrawn, as a stopped table's hand is, and the seats'
        places it held given back."""
        ahead, self._ahead = self._ahead, deque()
        self.reserved = None
        for armed in ahead:
            armed.lane.recall(True)
        held, self._held = self._held, []
        for gate in reversed(held):
            await gate.__aexit__(None, None, None)

    def chains(self) -> bool:
        """Whether a lane may go on to this table's next hand: the fast path plays, the match gives the next hand
        ahead (``upcoming``), and nothing a finished hand goes to is durable storage (a sink's ``durable``, True
        unless it says otherwise): a chained hand's bots hear its result before the sinks have it, which the records'
        rule allows only where nothing is stored. With several tables, the hand gone on to keeps the seats' places
        (``TableGate``): each bot is in as many hands as before."""
        if self.upcoming is None:
            return False
        stored = self._stored
        if stored is None:  # the sinks are the table's for the whole match: asked once
            stored = self._stored = any(getattr(sink, "durable", True) is not False for sink in self.sinks)
        return self.fast and self._chain and not stored

    def arm_next(self, play: HandPlay, lane: LaneHandle) -> None:
        """Arm ``lane`` (which asks every seat of ``play``) with the table's next hand, if it chains (``chains``) and
        every seat can be asked by that lane in it; else the next hand, if one was taken, is played as usual."""
        self._arm(play.seating, lane)

    def _arm(self, seating: tuple[int, ...], lane: LaneHandle) -> None:
        """``arm_next`` for a lane whose hand is seated as ``seating`` (the hand in play, or the one it went on to).
        A failure to arm is logged and the next hand played as usual: the chain only saves time."""
        try:
            self._try_arm(seating, lane)
        except Exception:
            log.exception("table %s: the next hand could not be armed in the lane; it is dealt as usual", self.table_id)

    def _try_arm(self, seating: tuple[int, ...], lane: LaneHandle) -> None:
        if (self._ahead and not self._ahead[-1].started) or not self.chains():
            return
        for gate in self._gates:
            if gate.waiting:
                return  # another table waits for a seat's place: this one gives it back at the hand's end
        upcoming = self.reserved
        if upcoming is None:
            assert self.upcoming is not None
            upcoming = self.upcoming()
            if upcoming is None:
                return
        self.reserved = upcoming
        plan, deck, stacks = upcoming
        if sorted(plan.seating) != sorted(seating):
            return
        hand_id = f"{self.match_id}-{plan.hand_number}"
        names = self._names.get(plan.seating)
        if names is None:
            names = self._names[plan.seating] = tuple(self.players[p].name for p in plan.seating)
        hand = Hand(self.config, list(stacks), deck, button=plan.button)
        start_wire = getattr(hand, "start_wire", None)
        if start_wire is None:
            return
        places: list[LanePlace] = []
        starts: list[bytes] = []  # each seat's HandStart, encoded (the lane writes them: the seats are told only
        for seat, p in enumerate(plan.seating):  # that they hold a seat in it, ``Seat.hand_chained``)
            player = self.players[p]
            asked = player.seat
            if (not asked.wire_requests or not asked.opens_requests or asked.reads_view
                    or player.participant.forfeited or not asked.connected):
                return
            place = asked.lane_place(self.table_id, hand_id, stacks[seat], hand)
            if place is None:
                return
            places.append(place)
            starts.append(start_wire(seat, self.table_id, hand_id, plan.hand_number, names))
        from_seats = [seating.index(p) for p in plan.seating]
        if lane.arm(hand, hand_id, places, starts, from_seats, plan.hand_number * REQUESTS_PER_HAND + 1):
            self.reserved = None
            self._ahead.append(Armed(upcoming, hand, hand_id, names, lane))

    def chained(self, play: HandPlay) -> None:
        """The lane finished ``play``'s hand and went on to the one armed: the bots have its HandEnds."""
        play.told = True
        if not self._ahead or self._ahead[-1].started:
            return
        armed = self._ahead[-1]
        armed.started_at = time.time()
        # its fast path adopts the lane now, not once this table's task has recorded this hand: the lane plays the
        # next hand meanwhile, and what it says of it (the request it leaves open when it ends, for the session to
        # take the bot's answer to) must have an owner at once; it arms the hand after it too
        plan, _, stacks = armed.upcoming
        for seat, p in enumerate(plan.seating):  # (each bot has the hand's HandStart from the lane by now)
            self.players[p].seat.hand_chained(seat)
        armed.play = HandPlay(armed.hand, armed.hand_id, plan, plan.seating, armed.names, stacks)
        self._request_ids = itertools.count(plan.hand_number * REQUESTS_PER_HAND + 1)  # the lane goes on from there
        armed.run = fast.FastRun(self, armed.play, armed.lane)
        armed.run.start()

    def disarm(self) -> None:
        """The lane ended without going on to the hand armed: that hand is played as any other."""
        if self._ahead and not self._ahead[-1].started:
            self.reserved = self._ahead.pop().upcoming

    async def play_hand(self, plan: DealPlan, deck: Sequence[int], stacks: Sequence[int],
                        config: TableConfig | None = None, entry_blinds: Collection[int] = ()) -> HandRecord:
        """Play one hand to the end and return its record (already handed to every sink). With several tables,
        each seat's place is taken first (``TableGate``): no bot is in more hands at once than it takes. A game's
        hand may have a table of its own (a freezeout's blind level) and seats that post the entry blind (R2.4).
        """
        gates = [g for g in (self.players[p].gate for p in sorted(plan.seating)) if g is not None]
        if not gates:
            return await self._play_hand(plan, deck, stacks, config or self.config, entry_blinds)
        entered, self._held = self._held, []  # the places of the hand a lane went on from are this hand's
        try:  # in the participants' order, the same at every table: no two tables wait on each other
            for gate in gates[len(entered):]:
                await gate.__aenter__()
                entered.append(gate)
            record = await self._play_hand(plan, deck, stacks, config or self.config, entry_blinds)
            if self._ahead and self._ahead[0].started:  # a lane went on to the next hand: it keeps the places
                self._held, entered = entered, []
            return record
        finally:
            for gate in reversed(entered):
                await gate.__aexit__(None, None, None)

    async def _play_hand(self, plan: DealPlan, deck: Sequence[int], stacks: Sequence[int], config: TableConfig,
                         entry_blinds: Collection[int]) -> HandRecord:
        if self._ahead and self._ahead[0].started and self._ahead[0].upcoming[0] is plan:
            return await self._play_chained(self._ahead.popleft())
        if self.reserved is not None and self.reserved[0] is plan:
            self.reserved = None
        hand_id = f"{self.match_id}-{plan.hand_number}"
        seating = plan.seating
        names = tuple(self.players[p].name for p in seating)
        started = time.time()
        await self._check_connections([self.players[p] for p in seating])
        hand = Hand(config, list(stacks), deck, button=plan.button, entry_blinds=entry_blinds)
        bets, committed = posted(hand)
        after_posts = tuple(stack - chips for stack, chips in zip(stacks, committed, strict=True))
        start_wire = getattr(hand, "start_wire", None)  # the compiled engine encodes a seat's HandStart
        for seat, p in enumerate(seating):
            player = self.players[p]
            player.participant.hands += 1
            start = HandStart(
                self.match_id, self.table_id, hand_id, plan.hand_number, seat, plan.button, hand.hole[seat],
                after_posts, names, bets, committed,
                start_wire(seat, self.table_id, hand_id, plan.hand_number, names)
                if start_wire is not None and player.seat.wire_requests else b"",
            )
            await notify(player.seat.hand_started(start), f"hand start to {player.name}", player.seat)
        play = HandPlay(hand, hand_id, plan, seating, names, stacks)
        # Request ids depend only on the hand, so a resumed match asks exactly what an uninterrupted one did
        self._request_ids = itertools.count(plan.hand_number * REQUESTS_PER_HAND + 1)
        return await self._played(play, config, deck, started)

    async def _play_chained(self, armed: Armed) -> HandRecord:
        """The hand a lane went on to (the hand chain): its HandStarts are out and its first request asked (its
        seats were told they hold a seat in it, ``Seat.hand_chained``), so its fast path (which adopted the lane
        when it went on to the hand: ``chained``) is waited for."""
        plan, deck, _ = armed.upcoming
        play, run = armed.play, armed.run
        assert play is not None and run is not None
        for p in plan.seating:
            self.players[p].participant.hands += 1
        handover = await run.wait()
        if handover is not None:
            play.add(await self._finish(play, handover))
        return await self._played(play, self.config, deck, armed.started_at)

    async def _played(self, play: HandPlay, config: TableConfig, deck: Sequence[int], started: float) -> HandRecord:
        """The hand played to its end, recorded, handed to the sinks, and told to the seats (unless a lane told
        them)."""
        hand, plan, seating, stacks, names = play.hand, play.plan, play.seating, play.stacks, play.names
        while hand.to_act is not None:
            if self.fast and fast.can_open(self, play):
                handover = await fast.FastRun(self, play).run()
                if handover is not None:
                    play.add(await self._finish(play, handover))
                continue
            play.add(await self._decide(play, hand.to_act))
        assert hand.payoffs is not None
        result = HandRecord(
            match_id=self.match_id,
            table_id=self.table_id,
            hand_id=play.hand_id,
            hand_number=plan.hand_number,
            deal=plan.deal,
            rotation=plan.rotation,
            seating=seating,
            button=plan.button,
            config=config,
            starting_stacks=tuple(stacks),
            deck=tuple(deck),
            hole=tuple(hand.hole),
            board=tuple(hand.board),
            events=tuple(hand.events),
            payoffs=tuple(hand.payoffs),
            final_stacks=tuple(hand.stacks),
            decisions=play.decisions,
            names=names,
            started_at=started,
            finished_at=time.time(),
            end_wire=() if play.told else self._end_wire(play),
            packed_events=packed() if (packed := getattr(hand, "packed_events", None)) else b"",  # for scoring
        )
        for sink in self.sinks:  # durable before any other sink, bot or spectator hears the result
            stored = sink.hand_finished(result)
            if stored is not None:
                await stored
        for seat, p in enumerate(seating):  # the match's live figures (the spectator service) count it only now
            self.players[p].participant.net += hand.payoffs[seat]
        for seat, p in enumerate(seating):
            player = self.players[p]
            if not play.told:
                await notify(player.seat.hand_finished(result, seat), f"hand end to {player.name}", player.seat)
        result.end_wire = ()  # told: a record kept (a test's, a caller's) keeps no more bytes than before
        result.packed_events = b""
        return result

    def _end_wire(self, play: HandPlay) -> tuple[bytes, ...]:
        """The compiled engine's encoding of every seat's HandEnd message (``Hand.end_wire``), when a seat is sent
        its messages as bytes; else empty (the Python engine has none: arena.transport.wire encodes it)."""
        end_wire = getattr(play.hand, "end_wire", None)
        if end_wire is None or not any(self.players[p].seat.wire_requests for p in play.seating):
            return ()
        return end_wire(play.timeouts, self.table_id, play.hand_id)  # type: ignore[no-any-return]

    async def _check_connections(self, players: list[Player]) -> None:
        """Before a hand: a bot that lost its connection is a violation, and is given a moment to rejoin."""
        waits = []
        for player in players:
            if player.participant.forfeited:
                continue
            if not player.seat.connected:
                await self._lost(player, "disconnected")
                if player.link.awaiting_reconnect:
                    waits.append(player.seat.wait_connected(self.policy.reconnect_grace_ms / 1000))
            player.link.awaiting_reconnect = False
        if waits:
            await asyncio.gather(*waits)
        for player in players:
            if player.seat.connected:
                player.link.was_connected = True

    async def _lost(self, player: Player, what: str) -> None:
        """Note a lost connection once (one violation), and wait for the bot to rejoin before the next hand."""
        if player.link.was_connected:
            player.link.was_connected = False
            player.link.awaiting_reconnect = True
            await self._violation(player.participant, what)

    def loop(self) -> asyncio.AbstractEventLoop:
        """The loop the table plays in, asked of asyncio once (``asyncio.get_running_loop`` makes a getpid system
        call each time)."""
        loop = self._loop
        if loop is None:
            loop = self._loop = asyncio.get_running_loop()
        return loop

    def next_request_id(self) -> int:
        """The id of the hand's next request (``plan.hand_number * REQUESTS_PER_HAND`` + 1, 2, ...)."""
        return next(self._request_ids)

    def continue_request_ids(self, next_id: int) -> None:
        """The hand's next request is ``next_id``: requests were made elsewhere (a lane: arena.referee.lane), or the
        id given last was not used."""
        self._request_ids = itertools.count(next_id)

    async def _decide(self, play: HandPlay, seat: int) -> DecisionRecord:
        """Get one action from the seat to act, or make the time-out policy's action for it: the request, the wait
        under the bot's clock, then the outcome (clock charged, violations counted, the bot told)."""
        hand = play.hand
        index = play.seating[seat]
        player = self.players[index]
        participant = player.participant
        legal = hand.legal_actions()
        fallback = Action(ActionKind.CHECK) if legal.can_check else Action(ActionKind.FOLD)
        request_id = self.next_request_id()
        if participant.forfeited:
            return self._fallback(hand, seat, index, request_id, fallback, 0.0, DecisionHow.FORFEITED, ())
        if not player.seat.connected:
            await self._lost(player, "disconnected")
            participant.absent += 1
            return self._fallback(hand, seat, index, request_id, fallback, 0.0, DecisionHow.ABSENT, ())
        decision = self.decision(play, seat, player, request_id, legal)
        answer = await self._wait(player, decision, hand, seat)
        return await self._outcome(player, decision, answer, hand, seat, index, fallback)

    async def _finish(self, play: HandPlay, handover: fast.Handover) -> DecisionRecord:
        """A decision the fast path opened and handed back (``arena.referee.fast``): waited for and concluded as
        ``_decide`` does, from what the seat answered first."""
        answer = await self._wait(handover.player, handover.decision, play.hand, handover.seat, handover.first)
        return await self._outcome(handover.player, handover.decision, answer, play.hand, handover.seat,
                                   handover.index, handover.fallback)

    def decision(self, play: HandPlay, seat: int, player: Player, request_id: int, legal: LegalActions,
                 timer: TurnTimer | None = None) -> Decision:
        """The request to ``seat`` (its view, its clock), timed from now, or by ``timer`` (a request the fast path
        made already: arena.referee.fast)."""
        hand = play.hand
        if timer is None:
            timer = TurnTimer(player.clock.allowance_s())
        view_wire = _VIEW_WIRE if player.seat.wire_requests else None
        if view_wire is not None and not player.seat.reads_view:  # the rest of the view is in view_wire's bytes
            view = SeatView(seat, hand.num_seats, hand.button, hand.street, hand.hole[seat], (), (), (), (), (), (),
                            seat, legal, (), hand.config)
        else:
            view = seat_view(hand, seat, play.histories.of(hand.events, seat), legal)
        decision = Decision(
            match_id=self.match_id,
            table_id=self.table_id,
            hand_id=play.hand_id,
            hand_number=play.plan.hand_number,
            request_id=request_id,
            view=view,
            names=play.names,
            starting_stack=play.stacks[seat],
            action_ms_left=int(min(timer.allowance_s * 1000, self.policy.per_action_ms)),
            bank_ms_left=int(player.clock.bank_ms),
            timeouts=play.timeouts,
            timer=timer,
        )
        if view_wire is not None:
            decision.view_wire = view_wire(hand, seat, play.names, play.timeouts, decision.action_ms_left,
                                            decision.bank_ms_left)
        return decision

    async def _wait(self, player: Player, decision: Decision, hand: Hand, seat: int,
                    first: Answer | BaseException | None = None) -> _Answer:
        """Ask the seat until it gives a legal action, its retries are used up, its clock runs out or it is gone.
        ``first``: what the seat answered a request the fast path sent (or the error instead), taken as the first
        answer (no request is sent for it)."""
        timer = decision.timer
        answer = _Answer()
        retries_left = self.policy.max_retries
        retry = False
        while True:
            try:
                action: Answer
                if first is not None:
                    given, first = first, None
                    if isinstance(given, BaseException):
                        raise given
                    action = given
                elif timer.remaining() <= 0:
                    raise TimeoutError
                # A TimeoutError here is the bot's clock running out. The deadline follows the timer, which starts
                # when the request leaves the referee; the seat's call runs in this task (wait_for would give it a
                # task of its own, and a loop turn more for every answer)
                elif player.seat.times_itself:
                    action = await player.seat.decide(decision, retry)
                else:
                    async with asyncio.timeout(None) as deadline:
                        timer.watch(deadline)
                        action = await player.seat.decide(decision, retry)
                comment = ""
                if isinstance(action, Commented):
                    comment = action.comment
                    action = action.answer
                policy: tuple[tuple[Action, float], ...] = ()
                if isinstance(action, MixedAction):
                    policy = action.choices
                    action = self._drawn(action, hand, decision.hand_number)
                if not isinstance(action, Action):
                    raise InvalidAction(f"R6.1: {action!r} is not an action")
                answer.event_index = len(hand.events)  # the action's own event; dealing and showdown may follow
                hand.act(seat, action)
                answer.action = action
                answer.policy = policy
                answer.comment = comment
                return answer
            except TimeoutError:
                if timer.give_back():  # once: the answer may be here already, waiting for the referee to read it
                    retry = True  # (the referee's delay is not the bot's); wait again without sending anything
                    continue
                answer.how = DecisionHow.TIMEOUT
                return answer
            except SeatUnavailable:
                answer.how = DecisionHow.ABSENT
                return answer
            except (IllegalActionError, InvalidAction) as exc:
                answer.rejected.append(str(exc))
                if retries_left == 0:
                    answer.how = DecisionHow.ILLEGAL
                    return answer
                retries_left -= 1
                retry = True
                await notify(player.seat.rejected(decision, exc, retries_left), f"rejection to {player.name}",
                             player.seat)
            except Exception as exc:  # an in-process bot that raises is a broken bot, not a broken referee
                log.warning("seat %s failed to decide: %r", player.name, exc)
                answer.rejected.append(f"error: {exc!r}")
                answer.how = DecisionHow.ILLEGAL
                return answer

    def _drawn(self, mixed: MixedAction, hand: Hand, hand_number: int) -> Action:
        """The action the referee draws from a mixed one, after checking it (``InvalidAction`` names the fault)."""
        if self.draw is None:
            raise InvalidAction("Action.policy: this table does not take mixed actions; send one action")
        check_policy(mixed, hand.legal_actions())
        return drawn_action(mixed.choices, self.draw(hand_number, len(hand.events)))

    async def _outcome(self, player: Player, decision: Decision, answer: _Answer, hand: Hand, seat: int, index: int,
                       fallback: Action) -> DecisionRecord:
        """Charge the clock, count what went wrong, apply the policy's action when the bot's did not count."""
        timer = decision.timer
        participant = player.participant
        how = answer.how
        elapsed = timer.charged() if how is DecisionHow.TIMEOUT else max(0.0, timer.elapsed() - timer.given_back)
        player.clock.charge(elapsed)
        participant.decisions += 1
        participant.think_s += elapsed
        rejected = tuple(answer.rejected)
        if how is DecisionHow.OK and answer.action is not None:
            return DecisionRecord(seat, index, decision.request_id, answer.action, elapsed * 1000, how,
                                  answer.event_index, rejected, answer.policy, answer.comment)
        if how is DecisionHow.TIMEOUT:
            participant.timeouts += 1
        elif how is DecisionHow.ILLEGAL:
            participant.illegal += 1
        record = self._fallback(hand, seat, index, decision.request_id, fallback, elapsed, how, rejected)
        await notify(player.seat.timed_out(decision, fallback, how), f"time-out to {player.name}", player.seat)
        if how is DecisionHow.ABSENT:
            participant.absent += 1
            await self._lost(player, "disconnected during its turn")
        else:
            await self._violation(participant, how)
        return record

    def _fallback(
        self,
        hand: Hand,
        seat: int,
        index: int,
        request_id: int,
        action: Action,
        elapsed: float,
        how: DecisionHow,
        rejected: tuple[str, ...],
    ) -> DecisionRecord:
        """Apply the time-out policy's action: check if that is free, else fold."""
        event_index = len(hand.events)
        hand.act(seat, action)
        return DecisionRecord(seat, index, request_id, action, elapsed * 1000, how, event_index, rejected)

    async def _violation(self, participant: Participant, what: str) -> None:
        """Count a violation; forfeit the match at the table's limit (the bot is then played by the policy). A bot
        that has forfeited already (at another of its tables, while this request was out) is not counted again."""
        if participant.forfeited:
            return
        participant.violations += 1
        participant.notes.append(what)
        limit = self.policy.max_violations
        if limit and participant.violations >= limit and not participant.forfeited:
            participant.forfeited = True
            reason = f"{participant.name} forfeits after {participant.violations} violations (last: {what})"
            participant.notes.append("forfeited")
            log.warning(reason)
            for seat in participant.seats:
                await notify(seat.forfeited(reason), f"forfeit to {participant.name}")


def check_policy(mixed: MixedAction, legal: LegalActions) -> None:
    """Refuse a mixed action that is not a probability distribution over distinct legal actions (proto
    Action.policy), naming the fault and, for an action that is not allowed, its rule (R6.1, R7)."""
    choices = mixed.choices
    if not 1 <= len(choices) <= MAX_CHOICES:
        raise InvalidAction(f"Action.policy: {len(choices)} actions; a mixed action has 1 to {MAX_CHOICES}")
    seen = set()
    for action, probability in choices:
        if not (math.isfinite(probability) and 0 < probability <= 1):
            raise InvalidAction(f"Action.policy: probability {probability!r} of {action} is not in (0, 1]")
        if action in seen:
            raise InvalidAction(f"Action.policy: {action} is listed twice")
        seen.add(action)
        if not legal.allows(action):
            raise InvalidAction(f"R6.1: {action} in Action.policy is not a legal action here")
    total = math.fsum(p for _, p in choices)
    if abs(total - 1) > 1e-6:
        raise InvalidAction(f"Action.policy: the probabilities add up to {total:.9g}, not 1")


def drawn_action(choices: Sequence[tuple[Action, float]], uniform: float) -> Action:
    """The action a uniform number in [0, 1) picks from a mixed action: each takes its share of [0, 1) in order,
    in proportion to its probability (the referee's draw, and ``arena verify``'s re-draw)."""
    point = uniform * math.fsum(p for _, p in choices)
    for action, probability in choices:
        point -= probability
        if point < 0:
            return action
    return choices[-1][0]  # rounding: the last one
