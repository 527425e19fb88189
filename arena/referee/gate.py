"""How many hands a seat is in at once: at most as many tables as its bot takes (the protocol's Join.max_tables).

A match played on several tables asks each seat for a place before every hand. Tables take the places of their
seats in the participants' order, so two tables never wait on each other (no deadlock); a bot that takes one table
at a time has its hands played one after another, whatever the number of tables.
"""

from __future__ import annotations

import asyncio
from types import TracebackType

from arena.referee.seat import Seat


class TableGate:
    """The places of one seat: as many as ``seat.max_tables`` says now (it may change when its bot rejoins).

    A place that is free while nobody holds the gate's lock or waits for a place is taken, and one given back while
    nobody waits is returned, without the lock: nothing can run in between, so that is what taking the lock, looking
    and letting it go would do, at a fraction of the cost (a table does it for every seat of every hand)."""

    def __init__(self, seat: Seat) -> None:
        self.seat = seat
        self.in_use = 0
        self._changed = asyncio.Condition()
        self._waiting = 0  # tables waiting for a place

    @property
    def waiting(self) -> bool:
        """Whether a table waits for one of this seat's places."""
        return self._waiting > 0

    def _free(self) -> bool:
        return self.in_use < max(1, self.seat.max_tables)

    async def __aenter__(self) -> TableGate:
        if not self._waiting and not self._changed.locked() and self._free():
            self.in_use += 1
            return self
        async with self._changed:
            self._waiting += 1
            try:
                await self._changed.wait_for(self._free)
            finally:
                self._waiting -= 1
            self.in_use += 1
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        if not self._waiting and not self._changed.locked():
            self.in_use -= 1
            return
        async with self._changed:
            self.in_use -= 1
            self._changed.notify_all()

