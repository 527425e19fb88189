"""The ACPC bridge: an arena bot (``arena_sdk``) whose decisions are an ACPC client's.

``python -m arena.adapters.acpc [--game FILE] [--address A --token T | --key K] -- COMMAND [ARGS...]`` (and
``arena acpc-bridge``) listens on a loopback port, starts ``COMMAND ARGS... HOST PORT``, waits for the client to
connect and send its version, then joins the referee (a match's token, or a league's key: match after match on
one stream). For every hand it sends the client the states the ACPC dealer would send (``matchstate``), reads its
answer to each state where it must act before the arena's clock for that action runs out, and sends the arena the
action it comes to (``replies``). An answer that is not in time is no answer: the arena's clock acts for the seat,
as for any bot. When the client closes its connection or exits, the bridge leaves the match (exit status 1): the
arena handles that as any bot that disconnects.

What the ACPC dealer does to an invalid action, the bridge does, and says so on stderr and in its summary; with a
table that allows retries (``max_retries``), the client's action as it was is sent to the referee first, so that
the referee's record of the hand keeps its refusal with the rule it broke, then the ACPC dealer's correction.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from arena.adapters.acpc.connection import AcpcConnection, ClientGone, listen
from arena.adapters.acpc.gamedef import AcpcGame, AcpcGameError, AcpcTable, Betting, game_of, read_game, table_of
from arena.adapters.acpc.matchstate import HandStates
from arena.adapters.acpc.replies import Reply, decode
from arena.engine import AnteMode, Structure, TableConfig
from arena_sdk.actions import Action, safe_action
from arena_sdk.bot import Bot
from arena_sdk.cards import parse_card
from arena_sdk.pb import bot_pb2
from arena_sdk.request import Request
from arena_sdk.types import Event
from arena_sdk.types import TableConfig as WireConfig

log = logging.getLogger("arena.acpc")

VERSION_WAIT_S = 10.0  # after connecting, how long the client may take to send its VERSION line
CONNECT_WAIT_S = 60.0  # how long the client may take to connect (--connect-timeout-s)
ANSWER_GRACE_S = 0.25  # waiting for the client a little past the arena's clock: the referee decides what is late
CHILD_EXIT_S = 5.0  # after the match, how long the client may take to exit once its connection is closed
_STRUCTURES = {1: Structure.NO_LIMIT, 2: Structure.POT_LIMIT, 3: Structure.FIXED_LIMIT}


class BridgeStop(BaseException):  # not an Exception: it must pass the SDK's guards and end ``run``
    """The bridge cannot go on (its client is gone, the table is not its game): leave the match, with ``why``."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


@dataclass(slots=True)
class Tally:
    """What the bridge did, for its summary: hands, states sent, answers, and the ACPC dealer's corrections."""

    hands: int = 0
    states: int = 0
    asked: int = 0
    invalid: int = 0  # actions the ACPC dealer counts as invalid (changed to call or check)
    clamped: int = 0  # no-limit raises moved into range (the dealer only warns)
    late: int = 0  # states the client did not answer within the arena's clock
    ignored: int = 0  # lines that answer no current state (comments not counted)

    def summary(self) -> str:
        return (f"{self.hands} hands, {self.asked} actions asked, {self.invalid} invalid actions changed to call "
                f"or check, {self.clamped} raises clamped, {self.late} not answered in time, {self.ignored} lines "
                "ignored")


def wire_table(config: WireConfig) -> TableConfig:
    """The engine's table from the one the referee sends."""
    return TableConfig(config.small_blind, config.big_blind, _STRUCTURES.get(int(config.structure),
                       Structure.NO_LIMIT), small_bet=config.small_bet, big_bet=config.big_bet,
                       raise_cap=config.raise_cap or 4, uncapped_heads_up=config.uncapped_heads_up,
                       reveal_all=config.reveal_all_at_showdown, ante=config.ante,
                       ante_mode=_ante_mode(config))


def _ante_mode(config: WireConfig) -> AnteMode:
    if not config.ante:
        return AnteMode.NONE
    return AnteMode.BIG_BLIND if config.big_blind_ante else AnteMode.EACH


class AcpcBridge(Bot):
    """The bot: every decision is the ACPC client's answer to the state where it must act."""

    max_tables = 1  # an ACPC client plays one hand at a time

    def __init__(self, connection: AcpcConnection, expected: AcpcGame | None = None,
                 transcript: IO[str] | None = None) -> None:
        self.connection = connection
        self.expected = table_of(expected) if expected is not None else None
        self.expected_source = expected.source if expected is not None else ""
        self.transcript = transcript
        self.betting = Betting.NO_LIMIT
        self.stack = 0  # every stack at the start of a hand
        self.retries = 0  # the table's max_retries: >0 lets the referee record an invalid action's refusal
        self.tally = Tally()
        self.hand: HandStates | None = None
        self.hand_id = ""
        self.sent = 0  # states of the current hand sent so far
        self.pending: Reply | None = None  # the correction to send if the referee refuses the action as it was

    # ------------------------------------------------------------------ the arena's messages

    def on_welcome(self, welcome: bot_pb2.Welcome) -> None:
        """Check that the table is an ACPC game (and, with ``--game``, that game); else leave."""
        wire = WireConfig.from_pb(welcome.config)
        players = wire.num_seats or 2
        try:
            game = game_of(wire_table(wire), players, wire.starting_stack)
        except AcpcGameError as exc:
            raise BridgeStop(f"this table is no ACPC game: {exc}") from None
        if self.expected is not None:
            table = table_of(game)
            if table != self.expected:
                raise BridgeStop(f"this table is not the game of {self.expected_source}: "
                                 f"{_differences(self.expected, table)}")
        self.betting = game.betting
        self.stack = wire.starting_stack
        self.retries = welcome.clock_policy.max_retries
        log.info("match %s: %d players, %s, blinds %d/%d, stack %d", welcome.match_id, players,
                 game.betting.value, wire.small_blind, wire.big_blind, wire.starting_stack)

    def on_hand_start(self, msg: bot_pb2.HandStart) -> None:
        """A new hand: the ACPC client gets its initial state at once (the dealer sends it to every seat)."""
        stacks = {s.stack + s.committed for s in msg.seats}
        if self.stack and stacks != {self.stack}:
            raise BridgeStop(f"the stacks at the start of this hand are {sorted(stacks)}, not all {self.stack}: "
                             "no ACPC game (its stacks are equal and reset every hand)")
        self._start(msg.hand_id, len(msg.seats), msg.button, msg.seat, msg.hole_cards)
        assert self.hand is not None
        self._send([self.hand.initial()])
        self.sent = 1

    def act(self, request: Request) -> Action:
        """Send the states since the last one sent, then wait for the client's answer to the last."""
        if self.hand is None or request.hand_id != self.hand_id:  # no HandStart for it (a rejoined stream)
            self._start(request.hand_id, request.num_seats, request.button, request.seat, request.pb.hole_cards)
            self.sent = 0
        assert self.hand is not None
        states = self.hand.states(request.history)
        self._send(states[self.sent:])
        self.sent = len(states)
        if self.transcript is not None:
            self.transcript.write(json.dumps({"asked": states[-1], **_ask(request)}) + "\n")
        self.tally.asked += 1
        clock = request.clock
        deadline = time.monotonic() + (clock.action_ms_left + clock.bank_ms_left) / 1000 + ANSWER_GRACE_S
        text = self._answer(states[-1], deadline)
        if text is None:
            self.tally.late += 1
            log.warning("hand %d: no answer to %s in time; the arena's clock acts for the seat",
                        self.hand.hand_number, states[-1])
            return safe_action(request)
        spent = request.committed[request.seat] - request.bets[request.seat]
        reply = decode(text, self.betting, request.legal, spent)
        self._note(reply, text)
        self.pending = None
        if reply.as_sent is not None and self.retries > 0:
            self.pending = reply  # the referee refuses it, records why, and asks again: then the correction
            return reply.as_sent
        return reply.action

    def on_rejected(self, rejection: bot_pb2.ActionRejected, request: Request) -> Action | None:
        """The client's invalid action, as it was, is refused: now the ACPC dealer's correction."""
        pending, self.pending = self.pending, None
        if pending is not None:
            return pending.action
        log.warning("the referee refused %s (%s): %s", request, rejection.rule, rejection.message)
        return safe_action(request)

    def on_hand_end(self, msg: bot_pb2.HandEnd) -> None:
        """The rest of the hand's states, the last with the cards of the showdown."""
        if self.hand is None or msg.hand_id != self.hand_id:
            return
        history = [Event.from_pb(e) for e in msg.history]
        states = self.hand.states(history, final=True)
        self._send(states[self.sent:])
        self.sent = len(states)
        self.hand = None

    # ------------------------------------------------------------------ the ACPC client

    def _start(self, hand_id: str, players: int, button: int, seat: int, hole: Sequence[str]) -> None:
        self.hand = HandStates(self.betting, players, button, seat, self.tally.hands, [parse_card(c) for c in hole])
        self.hand_id = hand_id
        self.tally.hands += 1

    def _send(self, states: Sequence[str]) -> None:
        try:
            self.connection.send(list(states))
        except ClientGone as exc:
            raise BridgeStop(str(exc)) from None
        self.tally.states += len(states)
        if self.transcript is not None:
            for state in states:
                self.transcript.write(json.dumps({"to": state}) + "\n")

    def _answer(self, state: str, deadline: float) -> str | None:
        """The client's action for ``state``, or None if it gave none by ``deadline``; lines that answer another
        state, and lines that are no state at all, are ignored (as the ACPC dealer ignores them)."""
        prefix = state + ":"
        while True:
            try:
                line = self.connection.read_line(deadline)
            except ClientGone as exc:
                raise BridgeStop(str(exc)) from None
            if line is None:
                return None
            if self.transcript is not None:
                self.transcript.write(json.dumps({"from": line}) + "\n")
            if line.startswith(prefix):
                return line[len(prefix):]
            if line.startswith(("#", ";")):
                continue
            self.tally.ignored += 1
            if not line.startswith("MATCHSTATE:"):
                log.warning("bad state format in the client's line %r: ignored", line[:100])

    def _note(self, reply: Reply, text: str) -> None:
        if reply.invalid:
            self.tally.invalid += 1
        elif reply.note:
            self.tally.clamped += 1
        if reply.note:
            assert self.hand is not None
            log.warning("hand %d: %s", self.hand.hand_number, reply.note)
        if self.transcript is not None:
            self.transcript.write(json.dumps({"action": str(reply.action), "note": reply.note}) + "\n")


def _ask(request: Request) -> dict[str, Any]:
    """What the arena asked, for the transcript: the legal actions, the pot, the seat's chips."""
    legal = request.legal
    return {"can_fold": legal.can_fold, "can_check": legal.can_check, "call_amount": legal.call_amount,
            "can_raise": legal.can_raise, "min_raise_to": legal.min_raise_to, "max_raise_to": legal.max_raise_to,
            "pot": request.pot, "committed": list(request.committed), "bets": list(request.bets),
            "seat": request.seat, "button": request.button}


def _differences(want: AcpcTable, got: AcpcTable) -> str:
    names = ("num_players", "structure", "small_blind", "big_blind", "stack", "small_bet", "big_bet", "raise_cap")
    return "; ".join(f"{name} {getattr(got, name)} (the file: {getattr(want, name)})" for name in names
                     if getattr(want, name) != getattr(got, name))


# ---------------------------------------------------------------------------------------------- the process


def client_environment() -> dict[str, str]:
    """The client's environment: the bridge's without the arena's settings (its token above all)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}


def start_client(command: Sequence[str], host: str, port: int) -> subprocess.Popen[bytes]:
    """Start the ACPC client: ``COMMAND... HOST PORT``."""
    return subprocess.Popen([*command, host, str(port)], env=client_environment(), stdin=subprocess.DEVNULL)


def accept_client(server: socket.socket, child: subprocess.Popen[bytes], wait_s: float) -> AcpcConnection:
    """The client's connection, once it has said its version (``ClientGone`` if it exits or is not in time)."""
    deadline = time.monotonic() + wait_s
    server.settimeout(0.05)
    while True:
        if child.poll() is not None:
            raise ClientGone(f"the ACPC client exited with status {child.returncode} before it connected")
        if time.monotonic() > deadline:
            raise ClientGone(f"the ACPC client did not connect within {wait_s:g} s")
        try:
            sock, _ = server.accept()
            break
        except TimeoutError:
            continue
    connection = AcpcConnection(sock)
    version = connection.read_line(time.monotonic() + VERSION_WAIT_S)
    if version is None or not version.startswith("VERSION:"):
        raise ClientGone(f"the ACPC client's first line is not its VERSION:2.0.0 but {version!r}")
    major = version.removeprefix("VERSION:").split(".")[0]
    if major != "2":
        log.warning("the client speaks ACPC %s; the bridge speaks 2.0.0", version.removeprefix("VERSION:"))
    return connection


def stop_client(child: subprocess.Popen[bytes]) -> None:
    """Give the client a moment to exit after its connection closed, then end it."""
    try:
        child.wait(CHILD_EXIT_S)
    except subprocess.TimeoutExpired:
        child.send_signal(signal.SIGTERM)
        try:
            child.wait(2.0)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """The bridge's command line: its options, then ``--`` and the client's command."""
    parser = argparse.ArgumentParser(
        prog="arena acpc-bridge", description="Play an ACPC client (protocol 2.0.0) in an arena match or league: "
        "it is started as COMMAND ARGS... HOST PORT and connects to the bridge.")
    parser.add_argument("--game", type=Path, help="The client's ACPC game definition: the table must be this game.")
    parser.add_argument("--address", help="The referee (default: $ARENA_ADDRESS).")
    parser.add_argument("--token", help="The seat's token for a match (default: $ARENA_TOKEN).")
    parser.add_argument("--key", help="A league's API key instead of a token (default: $ARENA_KEY).")
    parser.add_argument("--name", help="The name in the Join (default: $ARENA_BOT_NAME, else acpc).")
    parser.add_argument("--tls-ca", help="A root certificate: TLS to the referee.")
    parser.add_argument("--listen", default="127.0.0.1", help="Where the client connects (default: 127.0.0.1).")
    parser.add_argument("--connect-timeout-s", type=float, default=CONNECT_WAIT_S,
                        help=f"How long the client may take to connect (default: {CONNECT_WAIT_S:g}).")
    parser.add_argument("--transcript", type=Path, help="Write every line to and from the client, with what the "
                        "arena asked, as JSON lines to this file.")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...]: the ACPC client.")
    args = parser.parse_args(list(argv))
    command = list(args.command)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        parser.error("no ACPC client: give its command after --, e.g. -- ./example_player holdem.nolimit.2p.game")
    args.command = command
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the bridge; the exit status: 0 after the match (or league) ended normally, 1 otherwise, 2 for a usage
    error."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=os.environ.get("ARENA_LOG_LEVEL", "INFO").upper(), stream=sys.stderr,
                        format="[acpc-bridge] %(levelname)s %(message)s")
    try:
        expected = read_game(args.game) if args.game is not None else None
        if expected is not None:
            table_of(expected)
    except AcpcGameError as exc:
        print(f"arena acpc-bridge: {exc}", file=sys.stderr)
        return 2
    from arena_sdk.grpc_tuning import import_grpc

    import_grpc(bot=True)  # loads gRPC as a bot does (arena_sdk.grpc_tuning): only now
    from arena_sdk.client import run

    server = listen(args.listen)
    host, port = server.getsockname()[:2]
    try:
        child = start_client(args.command, host, port)
    except OSError as exc:
        print(f"arena acpc-bridge: cannot start {args.command[0]!r}: {exc}", file=sys.stderr)
        return 1
    transcript = args.transcript.open("w", encoding="utf-8", buffering=1) if args.transcript else None
    connection: AcpcConnection | None = None
    bridge: AcpcBridge | None = None
    try:
        connection = accept_client(server, child, args.connect_timeout_s)
        log.info("ACPC client connected from its side of %s:%d", host, port)
        bridge = AcpcBridge(connection, expected, transcript)
        result = run(bridge, address=args.address, token=args.token, key=args.key, name="acpc", tls_ca=args.tls_ca,
                     argv=["--name", args.name] if args.name else [], language="acpc")
        return result.exit_code
    except ClientGone as exc:
        log.error("%s", exc)
        return 1
    except BridgeStop as exc:
        log.error("leaving: %s", exc.why)
        return 1
    finally:
        server.close()
        if bridge is not None:
            log.info("%s", bridge.tally.summary())
        if connection is not None:
            connection.close()
        stop_client(child)
        if transcript is not None:
            transcript.close()
