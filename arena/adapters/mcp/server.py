"""``arena mcp``: an MCP server over stdio (the official ``mcp`` package) through which an LLM agent plays one seat
of an arena match, or a league's matches with a key. It is an arena bot like any other (``AgentSeat`` over the
SDK): it joins with the seat's token, and the referee times, checks and records it as it does every bot.

Tools: ``observe(timeout_s)`` waits for something to happen and returns the table as JSON; ``act(action, amount,
comment)`` plays an action, or returns why it cannot be played (the rule, and the legal actions) so that the agent
can try again within its clock.
"""

from __future__ import annotations

import threading
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer

from arena.adapters.mcp.seat import AgentSeat
from arena_sdk import run

NAME = "arena"
INSTRUCTIONS = """You play one seat of a Texas Hold'em match refereed by arena (no-limit unless the table says
otherwise). Loop: call observe; when your_turn is true, call act with one of legal_actions before your clock runs out
(clock.action_ms_left, then clock.bank_ms_left; when both run out the referee checks or folds for you, a violation).
Amounts are raise-to totals for the street ("raise to 600"). A refused action comes back with the rule and the legal
actions: try again. A comment on act (at most 280 characters) is recorded with your action and shown with the
finished hand; no other player ever sees it. Stop when match_over is true."""
OBSERVE_MAX_S = 600.0


def build_server(seat: AgentSeat) -> MCPServer[Any]:
    """The MCP server whose two tools drive ``seat``."""
    server: MCPServer[Any] = MCPServer(NAME, instructions=INSTRUCTIONS, log_level="WARNING")
    seen = [0]

    @server.tool()
    async def observe(timeout_s: float = 30.0) -> dict[str, Any]:
        """Wait up to timeout_s seconds (at most 600) for something to happen (your turn, a hand's end, the match's
        end), then return the table as JSON: your_turn, hand_number, position, hole_cards, board, pot, stacks,
        to_call, min_raise_to, max_raise_to, legal_actions, the hand's actions so far, the clock, last_hand (the
        previous hand's result), and match_over with the result at the end. Returns at once when it is your turn."""
        wait = min(max(float(timeout_s), 0.0), OBSERVE_MAX_S)
        table, seen[0] = await anyio.to_thread.run_sync(seat.observe, wait, seen[0])
        return table

    @server.tool()
    async def act(action: str, amount: int | None = None, comment: str | None = None) -> dict[str, Any]:
        """Play your action: action is fold, check, call, bet, raise or all-in (any case; "raise to 600", "bet 300"
        and "all in" are read too), amount the raise-to total of a bet or raise if not in action, comment an
        optional note on why (at most 280 characters; recorded and shown with the finished hand, never to another
        player). Returns accepted true, or the reason, the rule (RULES.md) and the legal actions."""
        return seat.submit(action, amount, comment or "")

    return server


def play_seat(seat: AgentSeat, **run_args: Any) -> threading.Thread:
    """Start playing ``seat`` (``arena_sdk.run`` with ``run_args``) in a thread of its own; it tells the seat when it
    stops."""
    def play() -> None:
        try:
            result = run(seat, argv=[], **run_args)
        except SystemExit as exc:  # a missing address or token: run() says so on stderr
            seat.stop(f"the bot could not start (exit status {exc.code})")
            return
        seat.stop(result.error)

    thread = threading.Thread(target=play, name="arena-mcp-seat", daemon=True)
    thread.start()
    return thread


def serve(address: str, token: str | None = None, key: str | None = None, name: str = "mcp-agent",
          tls_ca: str | None = None) -> None:
    """Join the referee at ``address`` with ``token`` (a match's seat) or ``key`` (a league's bot) and serve the
    agent's tools over stdio until the client closes it."""
    seat = AgentSeat()
    server = build_server(seat)  # first: it sets up logging (to stderr), which the SDK then uses
    play_seat(seat, address=address, token=token, key=key, name=name, tls_ca=tls_ca)
    anyio.run(server.run_stdio_async)
