"""Hand lanes on the C++ bot server (``arena.transport._native_server``): a hand's common decisions played by the
server's C++ with the compiled engine's C API (``arena/engine/core_api.h``), and the referee's Python woken once per
hand instead of once per decision (arena.referee.lane says what a lane is to the referee).

Where and when: for a bot of one table, on the server's polling thread as it reads the Action, at once (its bot waits
for nothing else). For a bot of several tables (``lane_open``'s ``loop``), on the referee's thread when it takes what
was read (``take``, once a loop turn), each ActionBatch's answers played in order up to the first a lane cannot take
(that one and the rest left to Python, in order, as an ActionBatch of their own), and the next requests held with
everything else the loop writes for two turns, as the writer of a bot of several tables waits
(``NativeBotServer.uncork_soon``): played as they were read, its bots got eight times as many messages (one per
decision) and spent 45% more CPU; written at each turn, a third more.

A lane takes an Action only if it is plain (ids, kind, amount and a comment or not), answers the lane's open request on
the stream that request went to, and is legal; it then records it, charges the bot's clock and writes the next seat's
request. It ends at anything else, before Python sees that thing: the hand's end, a seat it does not ask, another
Action that names its table on that stream (a stray, ids that differ, a mixed action, an illegal action), a message
that cannot be read, the stream's end. Python ends it
too: when the open request's clock runs out (``Lanes._expire``, the session's alarm's job for requests it opened), when
the session fails (a newer stream took the seat, the stream ended: ``BotSession.recall_lanes``), when its bot forfeits,
and when the table is stopped. Its open request is then the session's own (``BotSession.adopt``), and everything after
goes as it always did.
"""

from __future__ import annotations

import asyncio
import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from arena.engine import Hand
from arena.referee.lane import LaneOwner, LanePlace, LaneResult
from arena.transport import convert, wire
from arena.transport.session import MAX_QUEUED, NOT_READING, BotSession
from arena_sdk.pb import bot_pb2, poker_pb2

if TYPE_CHECKING:
    from arena.transport.native_server import NativeBotServer, NativeCall

MIN_ALARM_S = 0.01  # the lanes' alarm rings at most this often: no lane opens where a per-action limit is shorter


def set_action_format(native: ModuleType) -> bool:
    """Tell the C++ server how Actions are read (field numbers from the protocol's descriptors, the kinds' values)
    and how RefereeBatches are packed, and load the engine's C API; False when the engine has none (an older build):
    no lanes then."""
    message = bot_pb2.BotMessage.DESCRIPTOR.fields_by_name
    action = poker_pb2.Action.DESCRIPTOR.fields_by_name
    kinds = {int(pb): int(kind.value) for pb, kind in convert.ACTION_FROM_PB.items()}
    try:
        native.set_action_format(
            message["action"].number, message["actions"].number,
            bot_pb2.ActionBatch.DESCRIPTOR.fields_by_name["actions"].number,
            action["table_id"].number, action["hand_id"].number, action["request_id"].number,
            action["kind"].number, action["amount"].number, action["comment"].number, kinds, MAX_QUEUED,
            bot_pb2.RefereeMessage.DESCRIPTOR.fields_by_name["batch"].number,
            bot_pb2.RefereeBatch.DESCRIPTOR.fields_by_name["messages"].number, wire.BATCH_BYTES)
    except (ImportError, AttributeError):  # no capsule: an engine built before it had one
        return False
    return True


@dataclass(slots=True)
class LaneTicket:
    """A seat's place in a lane (``RemoteSeat.lane_place``): its stream's call, its session, and its requests'
    ids and config fields."""

    call: NativeCall
    session: BotSession
    head: bytes
    tail: bytes


class Lanes:
    """The lanes of one C++ bot server (``LaneHost``): opened by tables' fast paths, ended by the server
    (``LANE_ENDED``, ``ended``) or recalled from Python."""

    def __init__(self, server: NativeBotServer) -> None:
        self.server = server
        self.running: dict[int, HandLane] = {}
        self.looped = False  # a lane of bots of several tables was opened
        # rings by the soonest deadline of a running lane's open request, or before: one timer for all the lanes, as
        # a session has one for its requests (a lane opened after it, whose deadline is later, costs no timer); and
        # at least once per per-action limit while lanes run (``HandLane.period_s``), since a lane asks its next seat
        # without Python, and that request's deadline may come before the one the alarm was set for
        self._alarm: asyncio.TimerHandle | None = None

    def open(self, owner: LaneOwner, places: Sequence[LanePlace | None], hand: Hand, table_id: str, hand_id: str,
             names: tuple[str, ...], timeouts: frozenset[int], first_request_id: int,
             clocks: Sequence[tuple[float, float]]) -> HandLane | None:
        native = self.server.native()
        to_act = hand.to_act
        if to_act is None:
            return None
        if native is None:
            return None
        per_action_s = min(per_action_ms for per_action_ms, _ in clocks) / 1000
        if per_action_s < MIN_ALARM_S:
            return None  # the alarm could not ring by every request's deadline (``_expire``): Python's path asks
        seats: list[tuple[int, str, bytes, float, float]] = []
        tickets: list[LaneTicket] = []
        for place, name, (per_action_ms, bank_ms) in zip(places, names, clocks, strict=True):
            ticket = place.ticket if place is not None else None
            if not isinstance(ticket, LaneTicket) or ticket.call.over:
                seats.append((0, name, b"", per_action_ms, bank_ms))
                continue
            if len(seats) == to_act:
                tickets.insert(0, ticket)
            else:
                tickets.append(ticket)
            seats.append((ticket.call.stream, name, ticket.tail, per_action_ms, bank_ms))
        if not tickets or seats[to_act][0] == 0:
            return None
        # what Python queued for the bots (the hand's start) goes before the lane's first request, in one write; a
        # bot of several tables gets it with what its other tables send in this turn of the loop (``uncork_soon``),
        # and its messages are played at the loop's turn (``lane_open``'s ``loop``): one batch a turn each way
        loop = any(ticket.session.conn.gathers for ticket in tickets)
        self.looped = self.looped or loop
        held = self.server.cork()
        try:
            for ticket in tickets:  # the seat to act's stream first: its write leads when they are uncorked
                call = ticket.call
                if not call.packing:
                    native.set_batches(call.stream, ticket.session.conn.batches)
                    call.packing = True
                self.server.write(call)
            flags = bytearray(max(timeouts) + 1 if timeouts else 0)
            for index in timeouts:
                flags[index] = 1
            lane_id: int = native.lane_open(table_id, hand_id, hand, tickets[0].head, seats, bytes(flags),
                                            first_request_id, loop)
        finally:  # never left held: what the loop writes later would wait for ever
            if held:
                if loop:
                    self.server.uncork_soon()
                else:
                    self.server.uncork()
        if not lane_id:
            return None
        lane = HandLane(self, lane_id, owner, [ticket.session for ticket in tickets],
                        [ticket.call.stream for ticket in tickets], per_action_s)
        self.running[lane_id] = lane
        self._watch(min(lane.period_s, min(per_action_ms + bank_ms for per_action_ms, bank_ms in clocks) / 1000))
        return lane

    @property
    def gathering(self) -> bool:
        """Whether the loop's writes are held two turns (``NativeBotServer.uncork_soon``): lanes of bots of several
        tables run (when none does, as after a match's last hand, what the loop writes goes as it always did)."""
        return self.looped and bool(self.running)

    def _watch(self, delay_s: float) -> None:
        """Let the alarm ring within ``delay_s``: set it sooner if it would ring later."""
        loop = self.server.loop
        due = loop.time() + max(0.0, delay_s)
        alarm = self._alarm
        if alarm is None or due < alarm.when():
            if alarm is not None:
                alarm.cancel()
            self._alarm = loop.call_at(due, self._expire)

    def _expire(self) -> None:
        """The alarm: every lane whose open request is out of time ends (the session's alarm then times the request
        out, as one it opened); the alarm is set again for the soonest deadline left, or a running lane's per-action
        limit if that is sooner (the soonest deadline of a request a lane asks before then: every request has that
        limit at least)."""
        self._alarm = None
        native = self.server.native()
        if native is None:
            return
        soonest = math.inf
        expired = []
        for lane in self.running.values():
            left = native.lane_remaining(lane.lane_id)
            if left is None:
                continue  # ended: LANE_ENDED is on its way
            if left <= 0:
                expired.append(lane)
            else:
                soonest = min(soonest, left, lane.period_s)
        for lane in expired:
            lane.recall()
        if soonest < math.inf:
            self._watch(soonest)

    def ended(self, lane_id: int) -> None:
        """The server ended a lane (``LANE_ENDED``)."""
        lane = self.running.get(lane_id)
        if lane is not None:
            lane.recall()

    def hand_done(self, lane_id: int) -> None:
        """A lane finished a hand and went on to the one armed (``HAND_DONE``)."""
        lane = self.running.get(lane_id)
        if lane is not None:
            lane.finished()


class HandLane:
    """One lane, from Python's side (``LaneHandle``): its owner (the table's fast path of the hand it plays) and the
    sessions it asks through. A lane that went on to the hand armed (``arm``) has no owner until that hand's fast
    path adopts it (``adopt``): what it says meanwhile (it ended, or finished that hand too) waits for it."""

    __slots__ = ("lane_id", "lanes", "owner", "pending", "period_s", "sessions", "streams")

    def __init__(self, lanes: Lanes, lane_id: int, owner: LaneOwner, sessions: list[BotSession],
                 streams: list[int], period_s: float) -> None:
        self.lanes = lanes
        self.lane_id = lane_id
        self.period_s = period_s  # how often the lanes' alarm rings while it runs: the seats' per-action limit
        self.owner: LaneOwner | None = owner
        self.pending: deque[tuple[bool, LaneResult]] = deque()  # (a hand done?, what) while it has no owner
        self.sessions = sessions
        self.streams = frozenset(streams)
        for session in sessions:
            session.lanes.add(self)

    def arm(self, hand: Hand, hand_id: str, places: Sequence[LanePlace], starts: Sequence[bytes],
            from_seats: Sequence[int], first_request_id: int) -> bool:
        """Let the lane go on to ``hand`` when its own hand ends (``LaneHandle.arm``): only with every seat on one of
        the streams the lane asks now."""
        native = self.lanes.server.native()
        if native is None or self.lane_id not in self.lanes.running:
            return False
        tails = []
        head = b""
        for place in places:
            ticket = place.ticket
            if not isinstance(ticket, LaneTicket) or ticket.call.over or ticket.call.stream not in self.streams:
                return False
            tails.append(ticket.tail)
            head = ticket.head
        armed: bool = native.lane_arm(self.lane_id, hand, hand_id, head, tails, list(starts), list(from_seats),
                                      first_request_id)
        return armed

    def adopt(self, owner: LaneOwner) -> None:
        """The fast path of the hand the lane went on to takes it: told at once if the lane ended meanwhile."""
        self.owner = owner
        if self.pending:  # one: a hand done leaves the lane without an owner again
            self._tell(*self.pending.popleft())

    def finished(self) -> None:
        """``HAND_DONE``: each hand the lane finished and went on from, told to its owner (``hand_done``)."""
        native = self.lanes.server.native()
        if native is not None:
            self._done(native.lane_done(self.lane_id))

    def _done(self, done: list[tuple[list[Any], list[float], int]]) -> None:
        for records, banks, next_request_id in done:
            self._tell(True, LaneResult(_cleaned(records), None, banks, next_request_id))

    def _tell(self, hand_done: bool, result: LaneResult) -> None:
        """Tell the owner that its hand is done (the lane went on to the next) or that the lane ended; kept for the
        next owner while there is none."""
        owner = self.owner
        if owner is None:
            self.pending.append((hand_done, result))
        elif hand_done:
            self.owner = None
            owner.hand_done(result)
        else:
            owner.laned(result)

    def recall(self, discard: bool = False) -> None:
        """End the lane if it runs, and tell its owner what it played (``discard``: nobody, the table is stopped)."""
        if self.lanes.running.pop(self.lane_id, None) is None:
            return  # told already
        for session in self.sessions:
            session.lanes.discard(self)
        native = self.lanes.server.native()
        taken: Any = native.lane_take(self.lane_id) if native is not None else None
        if taken is None or discard:
            return
        records, open_, banks, unread, next_request_id, done = taken
        self._done(done)
        if unread:  # its bot stopped reading: cut off, as the server's own writes do (NativeBotServer.write)
            for session in self.sessions:
                call = session.conn.native
                if call is not None and call.stream == unread:
                    call.unread = True
                    session.conn.take()
                    session.conn.close("RESOURCE_EXHAUSTED", NOT_READING)
        self._tell(False, LaneResult(_cleaned(records), open_, banks, next_request_id))


def _cleaned(records: list[Any]) -> list[Any]:
    """A lane's records with their comments as the referee keeps them (arena.text.comment)."""
    for k, record in enumerate(records):
        if record[6]:
            records[k] = (*record[:6], convert.cleaned_comment(record[6]))
    return records


