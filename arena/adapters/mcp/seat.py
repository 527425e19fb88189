"""The arena bot an LLM agent plays through tool calls: an SDK ``Bot`` whose ``act`` waits for the agent's ``act``
tool call, and the table as JSON for its ``observe`` tool.

The SDK plays the match in its own thread (``arena_sdk.run``); the tools are called from the MCP server's. They meet
here, under one lock: every message from the referee (welcome, hand start, request, rejection, hand end, match end)
bumps a version that ``observe`` waits on. An agent that does not act within the request's clock is left to the
referee's time-out policy (check if free, else fold: a violation), exactly as any other bot would be.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from arena.adapters.mcp.actions import Refusal, choose, legal_actions
from arena_sdk import COMMENT_MAX, Action, Bot, Event, EventKind, Request, SeatStatus, Street, safe_action
from arena_sdk.cards import format_card
from arena_sdk.pb import bot_pb2

LATE_GRACE_S = 1.0  # past the request's whole clock: the referee has acted for the seat; give the SDK its answer back

_POSTS = {EventKind.POST_SMALL_BLIND: "posts the small blind", EventKind.POST_BIG_BLIND: "posts the big blind",
          EventKind.POST_ANTE: "posts an ante of", EventKind.POST_ENTRY_BLIND: "posts an entry blind of"}
_BOARD = {Street.FLOP: "flop", Street.TURN: "turn", Street.RIVER: "river"}


def position(seat: int, button: int, seats: int) -> str:
    """A seat's position name: BTN, SB, BB, UTG, UTG+1, ..., HJ, CO (heads-up: BTN/SB and BB)."""
    if seats == 2:
        return "BTN/SB" if seat == button else "BB"
    k = (seat - button) % seats
    if k < 3:
        return ("BTN", "SB", "BB")[k]
    if k == seats - 1:
        return "CO"
    if k == seats - 2 and seats >= 6:
        return "HJ"
    return "UTG" if k == 3 else f"UTG+{k - 3}"


def cards(values: tuple[int, ...] | list[int]) -> list[str]:
    """Cards as text (``"As"``)."""
    return [format_card(c) for c in values]


def describe(event: Event, names: list[str], me: int) -> str | None:
    """One public event in words (None for the hole-card deals, which ``hole_cards`` shows)."""
    kind = event.kind
    who = names[event.seat] if 0 <= event.seat < len(names) else f"seat {event.seat}"
    if event.seat == me:
        who += " (you)"
    late = " (time-out)" if event.by_timeout else ""
    if kind in _POSTS:
        return f"{who} {_POSTS[kind]} {event.amount}"
    if kind is EventKind.DEAL_BOARD:
        return f"{_BOARD.get(event.street, 'board')}: {' '.join(cards(event.cards))}"
    words = {EventKind.FOLD: "folds", EventKind.CHECK: "checks", EventKind.CALL: f"calls {event.amount}",
             EventKind.BET: f"bets {event.amount}", EventKind.RAISE: f"raises to {event.amount}",
             EventKind.ALL_IN: f"goes all-in (to {event.amount})", EventKind.MUCK: "mucks",
             EventKind.SHOW: f"shows {' '.join(cards(event.cards))}"}
    if kind in words:
        return f"{who} {words[kind]}{late}"
    if kind is EventKind.UNCALLED_RETURN:
        return f"{event.amount} uncalled returned to {who}"
    if kind is EventKind.WIN_POT:
        pot = "the main pot" if event.pot_index <= 0 else f"side pot {event.pot_index}"
        return f"{who} wins {event.amount} from {pot}"
    return None


def history(events: tuple[Event, ...] | list[Event], names: list[str], me: int) -> list[str]:
    """A hand's public history in words."""
    return [text for e in events if (text := describe(e, names, me)) is not None]


class AgentSeat(Bot):
    """An arena bot played by an agent: ``act`` (the SDK's thread) waits for ``submit`` (the agent's ``act`` tool);
    ``observe`` (the agent's ``observe`` tool) waits for the next thing that happens."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self.version = 0  # bumped by every message from the referee
        self.request: Request | None = None  # open, waiting for the agent
        self._answer: Action | None = None
        self.rejection: dict[str, Any] | None = None
        self.match: dict[str, Any] = {}
        self.hand: dict[str, Any] | None = None
        self.last_hand: dict[str, Any] | None = None
        self.result: dict[str, Any] | None = None
        self.notes: list[str] = []  # the referee's non-fatal errors (a time-out), latest last
        self.stopped: str | None = None  # the SDK gave up (no referee, a bad token)
        self.played: list[str] = []  # what the agent played, for the agent's own reference

    # ------------------------------------------------------------------ the SDK's thread

    def _changed(self) -> None:
        self.version += 1
        self._lock.notify_all()

    def on_welcome(self, welcome: bot_pb2.Welcome) -> None:
        with self._lock:
            config, clock = welcome.config, welcome.clock_policy
            self.match = {"match_id": welcome.match_id, "hands_total": int(welcome.hands_total),
                          "seats": config.num_seats, "blinds": f"{config.small_blind}/{config.big_blind}",
                          "ante": int(config.ante), "starting_stack": int(config.starting_stack),
                          "clock_policy": {"per_action_ms": int(clock.per_action_ms),
                                           "time_bank_ms": int(clock.time_bank_ms), "max_retries": clock.max_retries}}
            self.result = None
            self._changed()

    def on_hand_start(self, msg: bot_pb2.HandStart) -> None:
        with self._lock:
            names = [s.name for s in msg.seats]
            self.hand = {"hand_number": int(msg.hand_number), "hand_id": msg.hand_id, "seat": msg.seat,
                         "button": msg.button, "position": position(msg.seat, msg.button, len(names)),
                         "hole_cards": list(msg.hole_cards), "names": names,
                         "stacks": [{"seat": s.seat, "name": s.name, "stack": int(s.stack), "bet": int(s.bet)}
                                    for s in msg.seats]}
            self._changed()

    def act(self, request: Request) -> Action:
        return self._wait_for_agent(request)

    def on_rejected(self, rejection: bot_pb2.ActionRejected, request: Request) -> Action:
        with self._lock:
            self.rejection = {"rule": rejection.rule, "reason": rejection.message,
                              "retries_left": rejection.retries_left}
        return self._wait_for_agent(request)

    def _wait_for_agent(self, request: Request) -> Action:
        clock = request.clock
        deadline = time.monotonic() + (clock.action_ms_left + clock.bank_ms_left) / 1000 + LATE_GRACE_S
        with self._lock:
            self.request, self._answer = request, None
            self._changed()
            while self._answer is None and (left := deadline - time.monotonic()) > 0:
                self._lock.wait(left)
            answer, self.request, self._answer, self.rejection = self._answer, None, None, None
            if answer is None:
                self.notes.append(f"request {request.request_id}: no action within the clock; the referee acted "
                                  "for you (check if free, else fold)")
                self._changed()
                return safe_action(request)
            return answer

    def on_hand_end(self, msg: bot_pb2.HandEnd) -> None:
        with self._lock:
            hand = self.hand or {}
            names = hand.get("names", [])
            me = hand.get("seat", -1)
            events = [Event.from_pb(e) for e in msg.history]
            self.last_hand = {
                "hand_number": hand.get("hand_number"), "board": list(msg.board),
                "shown": {names[s.seat] if s.seat < len(names) else str(s.seat): list(s.cards) for s in msg.shown},
                "result": [{"seat": p.seat, "name": names[p.seat] if p.seat < len(names) else "",
                            "net": int(p.net), "you": p.seat == me} for p in msg.payoffs],
                "actions": history(events, names, me)}
            self.hand = None
            self._changed()

    def on_match_end(self, msg: bot_pb2.MatchEnd) -> None:
        with self._lock:
            self.result = {"match_id": msg.match_id, "reason": bot_pb2.MatchEndReason.Name(msg.reason)
                           .removeprefix("MATCH_END_REASON_").lower(), "message": msg.message,
                           "results": [{"name": r.name, "net_chips": int(r.net_chips), "hands": int(r.hands_played),
                                        "violations": r.violations, "you": r.is_you} for r in msg.results]}
            self._changed()

    def on_error(self, error: bot_pb2.Error) -> None:
        with self._lock:
            self.notes.append(f"{bot_pb2.ErrorCode.Name(error.code).removeprefix('ERROR_CODE_').lower()}: "
                              f"{error.message}")
            self._changed()

    def stop(self, reason: str | None) -> None:
        """The SDK's ``run`` returned: the match is over, or it could not be played (``reason``)."""
        with self._lock:
            if self.result is None:
                self.stopped = reason or "the referee ended the stream without a MatchEnd"
            self._changed()

    # ------------------------------------------------------------------ the agent's tools

    def observe(self, timeout_s: float, seen: int) -> tuple[dict[str, Any], int]:
        """Wait up to ``timeout_s`` for something after version ``seen`` (at once when it is the agent's turn or
        the match is over); the table as JSON, and the version it shows."""
        deadline = time.monotonic() + max(0.0, timeout_s)
        with self._lock:
            while (self.version <= seen and not self.your_turn and self.result is None and self.stopped is None
                   and (left := deadline - time.monotonic()) > 0):
                self._lock.wait(left)
            return self.table(), self.version

    def submit(self, action: str, amount: int | None, comment: str) -> dict[str, Any]:
        """Play the agent's action on the open request, or say why not (a refusal names the rule)."""
        with self._lock:
            request = self.request
            if self.stopped is not None:  # as observe says it: the match is over for this seat, with why
                return {"accepted": False, "reason": f"the match is over: {self.stopped}", "match_over": True,
                        "error": self.stopped}
            if request is None or not self.your_turn:
                over = self.result is not None
                return {"accepted": False, "match_over": over,
                        "reason": "the match is over" if over else "it is not your turn: call observe to wait for it"}
            chosen = choose(request, action, amount, comment)
            if isinstance(chosen, Refusal):
                return chosen.to_json()
            self._answer = chosen
            self.played.append(str(chosen))
            self._lock.notify_all()
            out = {"accepted": True, "played": str(chosen), "comment": chosen.comment}
            if len(comment) > COMMENT_MAX:  # the SDK keeps its first COMMENT_MAX characters (arena_sdk.actions)
                out["note"] = f"the comment was cut to {COMMENT_MAX} characters, as the referee keeps no more"
            return out

    @property
    def your_turn(self) -> bool:
        """Whether a request waits for the agent's action."""
        return self.request is not None and self._answer is None

    def table(self) -> dict[str, Any]:
        """Everything the agent may know now, as JSON (call with the lock held)."""
        out: dict[str, Any] = {"your_turn": self.your_turn, "match_over": self.result is not None, **self.match}
        request = self.request
        if request is not None and self._answer is None:
            names = list(request.names)
            me = request.seat
            legal = request.legal
            out.update({
                "hand_number": (self.hand or {}).get("hand_number"), "hand_id": request.hand_id, "seat": me,
                "position": position(me, request.button, request.num_seats), "button": request.button,
                "street": request.street.name.lower(), "hole_cards": cards(request.hole_cards),
                "board": cards(request.board), "pot": request.pot, "to_call": legal.call_amount,
                "min_raise_to": legal.min_raise_to if legal.can_raise else 0,
                "max_raise_to": legal.max_raise_to if legal.can_raise else 0,
                "stacks": [{"seat": s, "name": names[s], "stack": request.stacks[s], "bet": request.bets[s],
                            "status": request.statuses[s].name.lower(), "you": s == me}
                           for s in range(request.num_seats) if request.statuses[s] is not SeatStatus.SITTING_OUT],
                "legal_actions": legal_actions(legal),
                "actions": history(request.history, names, me),
                "clock": {"action_ms_left": request.clock.action_ms_left, "bank_ms_left": request.clock.bank_ms_left},
            })
            if self.rejection is not None:
                out["rejected"] = self.rejection
        elif self.hand is not None:
            out.update({k: v for k, v in self.hand.items() if k != "names"})
            out["waiting"] = "for the other players to act"
        if self.last_hand is not None:
            out["last_hand"] = self.last_hand
        if self.notes:
            out["notes"] = self.notes[-5:]
        if self.result is not None:
            out["result"] = self.result
        if self.stopped is not None:
            out["match_over"] = True
            out["error"] = self.stopped
        return out
