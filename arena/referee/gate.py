"""How many hands a seat is in at once: at most as many tables as its bot takes (the protocol's Join.max_tables).

A match played on several tables asks each seat for a place before every hand. Tables take the places of their
seats in the participants' order, so two tables never wait on each other (no deadlock); a bot that takes one table
at a time has its hands played one after another, whatever the number of tables.
"""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from types import TracebackType

from arena.referee.seat import Seat


class TableGate:
    """The places of one seat: as many as ``seat.max_tables`` says now (it may change when its bot rejoins)."""

    def __init__(self, seat: Seat) -> None:
        self.seat = seat
        self.in_use = 0
        self._changed = asyncio.Condition()

    def _free(self) -> bool:
        return self.in_use < max(1, self.seat.max_tables)

    async def __aenter__(self) -> TableGate:
        async with self._changed:
            await self._changed.wait_for(self._free)
            self.in_use += 1
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        async with self._changed:
            self.in_use -= 1
            self._changed.notify_all()


async def enter_all(stack: AsyncExitStack, gates: list[TableGate]) -> None:
    """Take a place at every gate, in the order given (the participants' order: the same at every table)."""
    for gate in gates:
        await stack.enter_async_context(gate)
