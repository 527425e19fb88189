"""A seat's places at several tables (``TableGate``): never more hands at once than its bot takes, every table
served, with the lock skipped when nobody waits."""

from __future__ import annotations

import asyncio

from arena.referee.gate import TableGate
from arena.referee.seat import FunctionSeat


class Limited(FunctionSeat):
    def __init__(self, tables: int) -> None:
        super().__init__("limited", lambda d: None)  # type: ignore[arg-type,return-value]
        self.tables = tables

    @property
    def max_tables(self) -> int:
        return self.tables


def test_a_gate_holds_at_most_max_tables_and_serves_every_table() -> None:
    async def run(tables: int) -> tuple[int, list[int]]:
        gate = TableGate(Limited(tables))
        most = 0
        order: list[int] = []

        async def table(k: int) -> None:
            nonlocal most
            for _ in range(3):
                async with gate:
                    most = max(most, gate.in_use)
                    order.append(k)
                    await asyncio.sleep(0)
                    await asyncio.sleep(0)

        await asyncio.gather(*(table(k) for k in range(6)))
        assert gate.in_use == 0 and gate._waiting == 0
        return most, order

    for tables in (1, 2, 4):
        most, order = asyncio.run(run(tables))
        assert most == tables  # the limit, reached and never passed
        assert sorted(order) == sorted(list(range(6)) * 3)
