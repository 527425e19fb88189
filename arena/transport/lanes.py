"""Hand lanes on the C++ bot server (``arena.transport._native_server``): a hand's common decisions played by the
server's C++ with the compiled engine's C API (``arena/engine/core_api.h``), and the referee's Python woken once per
hand instead of once per decision (arena.referee.lane says what a lane is to the referee).

Where and when: for a bot of one table, on gRPC's thread that reads its Action, at once (its bot waits for nothing
else). For a bot of several tables (``lane_open``'s ``loop``), on the referee's thread when it takes what was read
(``take``, once a loop turn), each ActionBatch's answers played in order up to the first a lane cannot take (that
one and the rest left to Python, in order, as an ActionBatch of their own), and the next requests held with
everything else the loop writes for two turns, as the writer of a bot of several tables waits
(``NativeBotServer.uncork_soon``): played on gRPC's threads, its bots got eight times as many messages (one per
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
from collections.abc import Callable, Sequence
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
        # a session has one for its requests (a lane opened after it, whose deadline is later, costs no timer)
        self._alarm: asyncio.TimerHandle | None = None

    def open(self, owner: LaneOwner, places: Sequence[LanePlace | None], hand: Hand, table_id: str, hand_id: str,
             names: tuple[str, ...], timeouts: frozenset[int], first_request_id: int,
             clocks: Sequence[tuple[float, float]]) -> Callable[[bool], None] | None:
        native = self.server.native()
        to_act = hand.to_act
        if to_act is None:
            return None
        if native is None:
            return None
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
        lane = HandLane(self, lane_id, owner, [ticket.session for ticket in tickets])
        self.running[lane_id] = lane
        self._watch(min(per_action_ms + bank_ms for per_action_ms, bank_ms in clocks) / 1000)
        return lane.recall

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
        out, as one it opened); the alarm is set again for the soonest deadline left."""
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
                soonest = min(soonest, left)
        for lane in expired:
            lane.recall()
        if soonest < math.inf:
            self._watch(soonest)

    def ended(self, lane_id: int) -> None:
        """The server ended a lane (``LANE_ENDED``)."""
        lane = self.running.get(lane_id)
        if lane is not None:
            lane.recall()


class HandLane:
    """One lane, from Python's side: its owner (the table's fast path) and the sessions it asks through."""

    __slots__ = ("lane_id", "lanes", "owner", "sessions")

    def __init__(self, lanes: Lanes, lane_id: int, owner: LaneOwner, sessions: list[BotSession]) -> None:
        self.lanes = lanes
        self.lane_id = lane_id
        self.owner = owner
        self.sessions = sessions
        for session in sessions:
            session.lanes.add(self)

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
        records, open_, banks, unread, next_request_id = taken
        if unread:  # its bot stopped reading: cut off, as the server's own writes do (NativeBotServer.write)
            for session in self.sessions:
                call = session.conn.native
                if call is not None and call.stream == unread:
                    call.unread = True
                    session.conn.take()
                    session.conn.close("RESOURCE_EXHAUSTED", NOT_READING)
        for k, record in enumerate(records):
            if record[6]:
                records[k] = (*record[:6], convert.cleaned_comment(record[6]))
        self.owner.laned(LaneResult(records, open_, banks, next_request_id))


