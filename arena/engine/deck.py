"""Decks in dealing order (R4.1, R1.4) built from the cards each seat and the board should get."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from arena.cards import FULL_DECK
from arena.engine.errors import DeckError


def build_deck(
    num_seats: int,
    button: int,
    hole: Mapping[int, Sequence[int]],
    board: Sequence[int] = (),
    burns: Sequence[int] = (),
) -> list[int]:
    """The deck that deals ``hole[seat]`` to each seat and ``board`` to the board; every card not given comes
    from the unused ones, lowest first, so a record with unknown cards (``????``) or a short board still deals.
    """
    used = [c for cards in hole.values() for c in cards] + list(board) + list(burns)
    if len(set(used)) != len(used):
        raise DeckError("R1.1", "the same card is dealt twice")
    for seat, cards in hole.items():
        if not 0 <= seat < num_seats:
            raise DeckError("R4.1", f"seat {seat} is not at a {num_seats}-seat table")
        if len(cards) > 2:
            raise DeckError("R4.1", f"seat {seat} is dealt {len(cards)} hole cards, not 2")
    if len(board) > 5:
        raise DeckError("R4.1", f"{len(board)} board cards, more than 5")
    taken = set(used)
    spare = iter([c for c in FULL_DECK if c not in taken])
    holes = {seat: list(hole.get(seat, ())) for seat in range(num_seats)}
    for cards in holes.values():
        while len(cards) < 2:
            cards.append(next(spare))
    full_board = list(board) + [next(spare) for _ in range(5 - len(board))]
    burn = list(burns) + [next(spare) for _ in range(3 - len(burns))]
    order = [(button + 1 + k) % num_seats for k in range(num_seats)]
    return (
        [holes[s][0] for s in order]
        + [holes[s][1] for s in order]
        + [burn[0], *full_board[:3], burn[1], full_board[3], burn[2], full_board[4]]
    )
