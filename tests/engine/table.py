"""Small helpers to set up rigged hands in tests: cards by text, actions by name."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from arena.cards import parse_cards
from arena.engine import ActionKind, Hand, TableConfig, build_deck


def rigged(
    stacks: Sequence[int],
    hole: Mapping[int, str] | None = None,
    board: str = "",
    button: int = 0,
    config: TableConfig | None = None,
    entry_blinds: Sequence[int] = (),
) -> Hand:
    """A hand whose seats get the given hole cards (``"AsKd"``) and whose board is ``board``."""
    n = len(stacks)
    holes = {seat: parse_cards(text) for seat, text in (hole or {}).items()}
    deck = build_deck(n, button, holes, parse_cards(board))
    return Hand(config or TableConfig(), list(stacks), deck, button=button, entry_blinds=entry_blinds)


def play(hand: Hand, *moves: str) -> Hand:
    """Apply moves such as ``"2 raise 250"``, ``"0 call"``, ``"1 fold"``, ``"3 check"``, ``"4 allin"``."""
    kinds = {
        "fold": ActionKind.FOLD,
        "check": ActionKind.CHECK,
        "call": ActionKind.CALL,
        "raise": ActionKind.RAISE,
        "bet": ActionKind.RAISE,
        "allin": ActionKind.ALL_IN,
    }
    for move in moves:
        parts = move.split()
        hand.apply(int(parts[0]), kinds[parts[1]], int(parts[2]) if len(parts) > 2 else 0)
    return hand


def snapshot(hand: Hand) -> tuple[object, ...]:
    """Everything an illegal action must leave unchanged."""
    return (
        list(hand.stacks),
        list(hand.bets),
        list(hand.committed),
        list(hand.folded),
        hand.to_act,
        hand.street,
        list(hand.board),
        len(hand.events),
        hand.legal_actions() if hand.to_act is not None else None,
    )
