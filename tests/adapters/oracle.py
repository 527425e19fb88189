"""OpenSpiel's universal_poker (the ACPC server's own game code inside OpenSpiel) as an independent oracle of what the
bridge tells an ACPC client: every state line is replayed in OpenSpiel from the same game definition, which then says
whose turn it is, what is legal and what every player has put in."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyspiel

SPENT = re.compile(r"P(\d+): (-?\d+)")
RANKS, SUITS = "23456789TJQKA", "cdhs"


def card(text: str) -> int:
    """OpenSpiel's (and the ACPC's) card index: rank * 4 + suit, suits c d h s."""
    return RANKS.index(text[0]) * 4 + SUITS.index(text[1])


def cards(text: str) -> list[int]:
    return [card(text[i:i + 2]) for i in range(0, len(text), 2)]


def load(game_file: Path) -> tuple[Any, bool]:
    """The game of an ACPC definition file in OpenSpiel (its keys passed as they are written), and whether it is a
    limit game. A limit file names no stack: the ACPC's default, 2^31 - 1, is passed."""
    params: dict[str, Any] = {}
    limit = True
    for raw in game_file.read_text().splitlines():
        line = raw.strip()
        if line.lower() in ("limit", "nolimit"):
            limit = line.lower() == "limit"
        elif "=" in line:
            key, value = (part.strip() for part in line.split("=", 1))
            params[key] = int(value) if key in ("numPlayers", "numRounds", "numSuits", "numRanks",
                                                "numHoleCards") else value
    params["betting"] = "limit" if limit else "nolimit"
    params.setdefault("stack", " ".join(["2147483647"] * params["numPlayers"]))
    # fcpa is exact for limit (fold, call, bet); no-limit needs every raise size: fullgame
    params["bettingAbstraction"] = "fcpa" if limit else "fullgame"
    return pyspiel.load_game("universal_poker", params), limit


@dataclass
class Checked:
    """What a transcript's check covered."""

    states: int = 0
    asked: int = 0
    answers: int = 0
    hands: int = 0
    terminal: int = 0
    raises: int = 0
    folds: int = 0
    all_ins: int = 0
    showdowns: int = 0
    problems: list[str] = field(default_factory=list)


def replay(game: Any, limit: bool, line: str) -> tuple[Any, int]:
    """OpenSpiel's state after the betting of a MATCHSTATE line (unknown hole cards dealt from the unused ones), and
    the line's viewing position."""
    _, position, _hand, betting, card_text = line.split(":", 4)
    holes, *boards = card_text.split("/")
    known = [cards(h) for h in holes.split("|")]
    used = {c for h in known for c in h} | {c for b in boards for c in cards(b)}
    spare = iter(c for c in range(52) if c not in used)
    deck = [c for h in known for c in (h or [next(spare), next(spare)])]
    deck += [c for b in boards for c in cards(b)]
    state = game.new_initial_state()
    deal = iter(deck)
    for token in re.findall(r"[fc]|r\d*|/", betting):
        while state.is_chance_node():
            state.apply_action(next(deal))
        if token == "/":
            continue
        action = {"f": 0, "c": 1}.get(token, 2 if limit else int(token[1:] or 0))
        try:
            state.apply_action_with_legality_check(action)
        except pyspiel.SpielError:
            raise AssertionError(f"{line}: {token} is not legal in OpenSpiel here") from None
    for rest in deal:  # the board of the rounds reached (an all-in runs out to the river)
        if not state.is_chance_node():
            break
        state.apply_action(rest)
    return state, int(position)


def spent(state: Any) -> list[int]:
    text = str(state).split("Spent:", 1)[1].split("\n", 1)[0]
    return [int(v) for _, v in SPENT.findall(text)]


def check_transcript(path: Path, game: Any, limit: bool, players: int) -> Checked:
    """Every state the bridge sent, replayed in OpenSpiel: where the arena asked the seat to act, OpenSpiel's player
    to act is the seat, its legal actions are the arena's (fold, call, the raise sizes from least to most, as
    whole-hand totals) and every player's chips put in are the arena's; where it did not ask, OpenSpiel's player to
    act is another one, or the hand is over; the last state of each hand is terminal; every answer the client sent
    is legal in OpenSpiel."""
    out = Checked()
    records = [json.loads(line) for line in path.read_text().splitlines()]
    asks = {r["asked"]: r for r in records if "asked" in r}
    answers: dict[str, str] = {}
    for r in records:
        if "from" in r:
            answers.setdefault(r["from"].rsplit(":", 1)[0], r["from"])
    sent = [r["to"] for r in records if "to" in r]
    for index, line in enumerate(sent):
        ask = asks.get(line)
        state, position = replay(game, limit, line)
        out.states += 1
        hand = line.split(":")[2]
        last_of_hand = index + 1 == len(sent) or sent[index + 1].split(":")[2] != hand
        if last_of_hand:
            out.hands += 1
            out.terminal += state.is_terminal()
            if not state.is_terminal():
                out.problems.append(f"{line}: the hand's last state, not terminal in OpenSpiel")
            betting = line.split(":")[3]
            out.showdowns += "|" in line.split(":")[4] and all(h for h in line.split(":")[4].split("/")[0].split("|")
                                                             if h) and not betting.endswith("f")
            out.all_ins += betting.endswith("//") or betting.endswith("c/")
            continue
        to_act = state.current_player()
        if ask is None:
            if to_act == position:
                out.problems.append(f"{line}: OpenSpiel has the viewer to act, the arena did not ask it")
            continue
        out.asked += 1
        if to_act != position:
            out.problems.append(f"{line}: the arena asked position {position}, OpenSpiel has {to_act} to act")
            continue
        legal = state.legal_actions()
        seat_of = [(ask["button"] + 1 + p) % players for p in range(players)]
        committed = [ask["committed"][s] for s in seat_of]
        if spent(state) != committed:
            out.problems.append(f"{line}: spent {spent(state)} in OpenSpiel, {committed} at the arena")
        if sum(committed) != ask["pot"]:
            out.problems.append(f"{line}: pot {ask['pot']} at the arena, {sum(committed)} put in")
        if (0 in legal) != ask["can_fold"]:
            out.problems.append(f"{line}: fold {'legal' if 0 in legal else 'illegal'} in OpenSpiel, "
                                f"can_fold {ask['can_fold']} at the arena")
        raises = [a for a in legal if a >= 2]
        if bool(raises) != ask["can_raise"]:
            out.problems.append(f"{line}: raises {raises[:3]} in OpenSpiel, can_raise {ask['can_raise']}")
        elif raises and not limit:
            before = ask["committed"][ask["seat"]] - ask["bets"][ask["seat"]]
            want = [before + ask["min_raise_to"], before + ask["max_raise_to"]]
            if [raises[0], raises[-1]] != want or len(raises) != raises[-1] - raises[0] + 1:
                out.problems.append(f"{line}: raises {raises[0]}..{raises[-1]} in OpenSpiel, {want} at the arena")
        answer = answers.get(line)
        if answer is None:
            out.problems.append(f"{line}: no answer")
            continue
        text = answer[len(line) + 1:]
        action = {"f": 0, "c": 1}.get(text[:1], 2 if limit else int(text[1:]) if text[:1] == "r" else -1)
        out.answers += 1
        out.raises += action >= 2
        out.folds += action == 0
        if action not in legal:
            out.problems.append(f"{answer}: not legal in OpenSpiel")
    return out
