"""The table's fast path: a hand's decisions played as the bots' Actions are read, without waking the table's
coroutine for each. The common case is a remote seat that answers a legal action in time: its Action, read off the
stream, is applied to the hand at once, the decision recorded and the next seat's request sent, all in the call that
delivered the Action (``BotSession.deliver``), with no future, task switch or coroutine frame per decision.
Anything else (a retry, an illegal or mixed action, a time-out, a seat that is gone or has forfeited, a seat that
cannot open requests) hands the decision back to the table's general path (``TableRunner._decide`` and ``_wait``),
which plays it exactly as it plays every decision with ``ARENA_TABLE_LOOP=reference``: the same request ids, actions,
records and messages (tests/referee/test_fast_path.py).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from arena import switches
from arena.engine import Action, ActionKind, IllegalActionError
from arena.referee.clock import TurnTimer
from arena.referee.lane import LaneHandle, LaneHost, LanePlace, LaneResult
from arena.referee.records import Answer, Commented, Decision, DecisionRecord, WireHand, WireRequest
from arena.referee.status import DecisionHow

if TYPE_CHECKING:
    from arena.referee.table import HandPlay, Player, TableRunner

LOOP_VARIABLE = switches.TABLE_LOOP.variable


def fast_loop() -> bool:
    """Whether ``ARENA_TABLE_LOOP`` selects the fast path (``fast``, the default) or the general path for every
    decision (``reference``, the readable one, for debugging and the differential tests)."""
    return switches.TABLE_LOOP.value() == "fast"


@dataclass(slots=True)
class Handover:
    """A decision the fast path opened and gives back to the general path: what the seat answered first (an answer,
    or the error instead), or None if it was not asked yet."""

    decision: Decision
    player: Player
    seat: int
    index: int
    fallback: Action
    first: Answer | BaseException | None = None


def to_ask(runner: TableRunner, play: HandPlay) -> tuple[int, int, Player] | None:
    """The seat to act (its seat, participant index and player) if the fast path can ask it: a seat that opens
    requests, whose bot has not forfeited and is connected (else the general path plays the policy's action and
    counts the violation); None otherwise, or when nobody is to act."""
    seat = play.hand.to_act
    if seat is None:
        return None
    index = play.seating[seat]
    player = runner.players[index]
    asked = player.seat
    if not asked.opens_requests or player.participant.forfeited or not asked.connected:
        return None
    return seat, index, player


def can_open(runner: TableRunner, play: HandPlay) -> bool:
    """Whether the seat to act can be asked by the fast path (``to_ask``)."""
    return to_ask(runner, play) is not None


class FastRun:
    """The decisions of one hand, from the seat to act now, as long as they are common ones. ``run`` returns when
    the hand has no seat to act or the next decision is not for the fast path (None: the table asks as usual), or
    with the ``Handover`` of a decision that the general path must finish.

    A seat that is sent the compiled engine's bytes and reads no view is asked with a ``WireRequest`` (its request
    encoded whole in one call, ``Hand.request_wire``); other seats with a ``Decision``, as the general path does."""

    __slots__ = ("adopted", "lane_seats", "laning", "play", "runner", "stop", "wire", "withdraw")

    def __init__(self, runner: TableRunner, play: HandPlay, adopted: LaneHandle | None = None) -> None:
        self.runner = runner
        self.play = play
        self.adopted = adopted  # the lane that went on to this hand (the hand chain), its first request sent
        self.laning = True  # a lane may play the next decisions (arena.referee.lane): one lane per run
        self.lane_seats: tuple[int, ...] = ()  # the seats the lane asks (it holds their clocks)
        self.stop: asyncio.Future[Handover | None] = runner.loop().create_future()
        self.withdraw: Callable[[], None] | None = None  # withdraws the open request (``Seat.open_request``)
        # the hand, if it encodes requests whole (the compiled engine's)
        self.wire = cast(WireHand, play.hand) if hasattr(play.hand, "request_wire") else None

    async def run(self) -> Handover | None:
        self.start()
        return await self.wait()

    def start(self) -> None:
        """Open the first decision's request, or adopt the lane that went on to this hand."""
        lane, self.adopted = self.adopted, None
        if lane is not None:
            self._adopt(lane)
        else:
            self.next()

    async def wait(self) -> Handover | None:
        """``run``'s end, once started."""
        try:
            return await self.stop
        except BaseException:  # the table is stopped (or the referee failed): its open request is withdrawn, as an
            if self.withdraw is not None:  # ask's is, and a lane it holds ended
                self.withdraw()
            raise
        finally:
            # the open request's withdraw holds its waiter, which holds this run: a reference cycle that left each
            # hand's whole state (its decisions, view, clock and play) for the garbage collector, whose passes
            # then took 40 ms each (10% of a busy referee's main thread at 64 tables)
            self.withdraw = None

    def _end(self, handover: Handover | None) -> None:
        if not self.stop.done():
            self.stop.set_result(handover)

    def _handover(self, waiter: _Waiter, first: Answer | BaseException | None) -> Handover:
        """``waiter``'s decision for the general path, with what the seat answered first (the hand is as it was
        when the request was made: an action is applied only if it is legal). A ``WireRequest``'s Decision is built
        now, with the same request id, clock and request."""
        hand = self.play.hand
        legal = hand.legal_actions()
        decision = waiter.decision
        if type(decision) is WireRequest:
            decision = self.runner.decision(self.play, waiter.seat, waiter.player, decision.request_id, legal,
                                            decision.timer)
        assert isinstance(decision, Decision)
        fallback = Action(ActionKind.CHECK) if legal.can_check else Action(ActionKind.FOLD)
        return Handover(decision, waiter.player, waiter.seat, waiter.index, fallback, first)

    def next(self) -> None:
        """Open the next decision's request, or end the run."""
        runner, play = self.runner, self.play
        found = to_ask(runner, play)
        if found is None:
            self._end(None)
            return
        seat, index, player = found
        if self.laning and self._lane(seat):
            return
        hand, asked = play.hand, player.seat
        request_id = runner.next_request_id()
        wire = self.wire
        if wire is not None and asked.wire_requests and not asked.reads_view:
            clock = player.clock
            timer = TurnTimer(clock.allowance_s())
            asking = WireRequest(
                runner.table_id, play.hand_id, request_id, timer, wire, seat, play.names, play.timeouts,
                play.stacks[seat], int(min(timer.allowance_s * 1000, runner.policy.per_action_ms)),
                int(clock.bank_ms))
            waiter = _Waiter(self, asking, player, seat, index)
            self.withdraw = None
            if timer.remaining() > 0:
                self.withdraw = asked.open_wire(asking, waiter)
        else:
            decision = runner.decision(play, seat, player, request_id, hand.legal_actions())
            waiter = _Waiter(self, decision, player, seat, index)
            self.withdraw = None
            if decision.timer.remaining() > 0:
                self.withdraw = asked.open_request(decision, waiter)
        if self.withdraw is None:
            self._end(self._handover(waiter, None))  # the general path's own checks decide

    def _lane(self, to_act: int) -> bool:
        """Open a lane for the hand's next decisions if the seat to act can be asked by one (``Seat.lane_place``),
        with every other seat one server can ask (True: the lane asks; ``laned`` is told when it ends)."""
        self.laning = False
        if self.wire is None:
            return False
        runner, play = self.runner, self.play
        places: list[LanePlace | None] = []
        host: LaneHost | None = None
        for seat, index in enumerate(play.seating):
            player = runner.players[index]
            asked = player.seat
            place = None
            if (asked.wire_requests and asked.opens_requests and not asked.reads_view and not player.clock.in_lane
                    and not player.participant.forfeited and asked.connected):
                place = asked.lane_place(runner.table_id, play.hand_id, play.stacks[seat], play.hand)
                if place is not None and host is not None and place.host is not host:
                    place = None  # one server plays a lane
                if place is not None:
                    host = place.host
            places.append(place)
        if host is None or places[to_act] is None:
            return False
        per_action = float(runner.policy.per_action_ms)
        clocks = [(per_action, runner.players[index].clock.bank_ms) for index in play.seating]
        first = runner.next_request_id()
        end = host.open(self, places, play.hand, runner.table_id, play.hand_id, play.names, play.timeouts, first,
                        clocks)
        if end is None:
            runner.continue_request_ids(first)  # not used: the table's own request gets it
            return False
        self.lane_seats = tuple(seat for seat, place in enumerate(places) if place is not None)
        for seat in self.lane_seats:
            runner.players[play.seating[seat]].clock.in_lane = True
        self.withdraw = functools.partial(end.recall, True)
        if len(self.lane_seats) == len(places):
            runner.arm_next(play, end)
        return True

    def _adopt(self, lane: LaneHandle) -> None:
        """Take the lane that went on to this hand (every seat in it, their clocks with it), the next hand armed first
        (``TableRunner.arm_next``), as the lane says it did: what it says next (its end, the hand done) is this
        run's, and its open request this run's to wait for."""
        self.laning = False
        self.lane_seats = tuple(range(len(self.play.seating)))
        self.withdraw = functools.partial(lane.recall, True)
        self.runner.arm_next(self.play, lane)
        lane.adopt(self)

    def hand_done(self, result: LaneResult) -> None:
        """The lane played this hand to its end and went on to the next one (the hand chain): its decisions recorded
        as ``laned`` records them, and the run over; the seats' clocks stay in the lane."""
        try:
            self._record(result)
            self.runner.chained(self.play)
        except Exception as exc:
            if not self.stop.done():
                self.stop.set_exception(exc)
            return
        self.withdraw = None
        self._end(None)

    def _record(self, result: LaneResult) -> None:
        """The lane's decisions recorded and charged as ``answered`` does, and each seat's bank taken."""
        runner, play = self.runner, self.play
        for seat in self.lane_seats:
            runner.players[play.seating[seat]].clock.bank_ms = result.banks[seat]
        for seat, request_id, kind, amount, elapsed, event_index, comment in result.records:
            index = play.seating[seat]
            participant = runner.players[index].participant
            participant.decisions += 1
            participant.think_s += elapsed
            play.decisions.append(DecisionRecord(seat, index, request_id, _action(kind, amount), elapsed * 1000,
                                                 DecisionHow.OK, event_index, (), (), comment))
        runner.continue_request_ids(result.next_request_id)

    def laned(self, result: LaneResult) -> None:
        """The lane ended: its decisions recorded and charged as ``answered`` does, and the request it left open
        waited for here, as one this run opened (``Seat.adopt_wire``); else the run goes on. The referee's own fault
        is raised in the table's task (as ``_Waiter.set_result`` does), never in the bots' server's."""
        try:
            self._laned(result)
        except Exception as exc:
            if not self.stop.done():
                self.stop.set_exception(exc)

    def _laned(self, result: LaneResult) -> None:
        runner, play = self.runner, self.play
        self.withdraw = None
        for seat in self.lane_seats:
            runner.players[play.seating[seat]].clock.in_lane = False
        self._record(result)
        runner.disarm()  # a hand armed and not gone on to is played as any other
        if self.stop.done():
            return
        if result.open is None:
            self.next()
            return
        seat, request_id, sent, allowance_s, action_ms_left, bank_ms_left = result.open
        index = play.seating[seat]
        player = runner.players[index]
        timer = TurnTimer(allowance_s)
        timer.started = sent
        timer.is_sent = True
        wire = self.wire
        assert wire is not None
        asking = WireRequest(runner.table_id, play.hand_id, request_id, timer, wire, seat, play.names, play.timeouts,
                             play.stacks[seat], action_ms_left, bank_ms_left)
        waiter = _Waiter(self, asking, player, seat, index)
        self.withdraw = player.seat.adopt_wire(asking, waiter)
        if self.withdraw is None:
            self._end(self._handover(waiter, None))

    def answered(self, waiter: _Waiter, answer: Answer) -> None:
        """The seat's answer, as it was read: applied and recorded if it is a legal action, and the next request
        sent; anything else goes to the general path."""
        comment = ""
        action = answer
        if type(action) is Commented:
            comment = action.comment
            action = action.answer
        if type(action) is not Action:  # a mixed action: drawn and checked by the general path
            self._end(self._handover(waiter, answer))
            return
        hand = self.play.hand
        event_index = len(hand.events)
        try:
            hand.act(waiter.seat, action)  # the state is unchanged when it raises
        except IllegalActionError:  # rejected, and asked again, by the general path (which gets the same error)
            self._end(self._handover(waiter, answer))
            return
        # TableRunner._outcome, for an action that counts
        timer = waiter.decision.timer
        elapsed = max(0.0, timer.elapsed() - timer.given_back)
        player = waiter.player
        player.clock.charge(elapsed)
        participant = player.participant
        participant.decisions += 1
        participant.think_s += elapsed
        self.play.decisions.append(DecisionRecord(waiter.seat, waiter.index, waiter.decision.request_id, action,
                                                  elapsed * 1000, DecisionHow.OK, event_index, (), (), comment))
        self.next()


_ACTIONS = {kind.value: Action(kind) for kind in ActionKind if kind is not ActionKind.RAISE}


def _action(kind: int, amount: int) -> Action:
    """A lane's action as the engine's (the same objects as the Actions read off the wire where they can be)."""
    plain = _ACTIONS.get(kind)
    return plain if plain is not None else Action(ActionKind(kind), amount)


class _Waiter:
    """The answer to one request the fast path opened (``Waiter``: what the bot's session resolves)."""

    __slots__ = ("_done", "decision", "index", "player", "run", "seat")

    def __init__(self, run: FastRun, decision: Decision | WireRequest, player: Player, seat: int,
                 index: int) -> None:
        self.run = run
        self.decision = decision
        self.player = player
        self.seat = seat
        self.index = index
        self._done = False

    def done(self) -> bool:
        return self._done

    def set_result(self, answer: Answer, /) -> None:
        self._done = True
        if self.run.stop.done():  # the table was stopped (never so otherwise: the run ends with its last answer)
            return
        try:
            self.run.answered(self, answer)
        except Exception as exc:  # the referee's own fault: raised in the table's task, never in the reader's
            if not self.run.stop.done():
                self.run.stop.set_exception(exc)

    def set_exception(self, error: BaseException, /) -> None:
        self._done = True
        run = self.run
        if run.stop.done():
            return
        try:
            run._end(run._handover(self, error))
        except Exception as exc:  # as in set_result: the table's task raises it
            run.stop.set_exception(exc)
