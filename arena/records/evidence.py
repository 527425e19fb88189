"""The record is evidence: a match's commitment, its hands' hash chain and its final hash, defined exactly here so
that anyone can recompute them from a database (``arena verify`` does).

``canonical(x)`` is ``json.dumps(x, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`` encoded as UTF-8;
``H(text)`` is SHA-256, in lowercase hex.

**The commitment (version 2)**, published before the first hand, covers everything that decides the result::

    commitment = H("arena-match-commitment-v2\\n" + canonical(document))
    document = {"version": 2, "match": match id, "kind": "match" | "tournament" | "compare" | "league",
                "event": the tournament, comparison or league (null for a single match),
                "seed": H("arena-seed-commitment-v1:" + seed)   (the seed's own commitment: arena.deals),
                "schedule": {"hands_total": hands planned, "seats": seats per table (0: every bot at one table),
                             "table": the table config (matches.config as a JSON object),
                             "starting_stack": chips, "duplicate": true | false, "all_orders": true | false,
                             "game": the cash game's or freezeout's rules (matches.game as an object; null: reset)},
                "participants": [[name, version], ...] in participant order}

The document is stored beside the commitment (``matches.committed``), so a difference can be named field by field;
a match recorded before schema 5 has commitment version 1: the seed's own commitment, nothing else.

**The hash chain.** Every hand is written with eight part digests and a link chained to the hand written before it
(in the order written: hands of tables played side by side finish in any order), the first to the commitment::

    digest(part) = H("arena-hand-part-v1:" + part + "\\n" + canonical(values))[:32]
    link = H("arena-hand-chain-v1\\n" + previous link (or the commitment) + "\\n" + hand number + "\\n"
             + the eight digests joined by ".")

with the values of each part taken from the hand's rows as stored (arena.records.codec's columns, nulls
included): ``deal`` [deal, rotation, table_id, button, config]; ``cards`` [deck, board, [each seat's hole]];
``seating`` [[seat, participant, starting_stack]...]; ``actions`` [[seq, street, seat, kind, amount, cards, all_in,
pot]...]; ``decisions`` [[seq, how, elapsed_ms, request_id, rejected, policy]...] for every action row, with the
bot's comment appended to the row of an action that has one ([..., policy, comment]: a hand without comments digests
as before comments were recorded);
``violations`` [[participant, kind, detail]...] sorted; ``payoffs`` [[seat, payoff, final_stack]...]; ``timings``
[started_at, finished_at]. They are stored as ``hands.chain_index`` (1, 2, ... in the order written),
``hands.digests`` and ``hands.chain``.

**The final hash**, stored when the match ends and printed with its result::

    final = H("arena-match-final-v1\\n" + canonical({"commitment": commitment, "chain": the last link (or the
              commitment), "hands": hands written, "status": status, "outcomes": [[participant, outcome, detail]...],
              "games": [[game, rotation, participant, place, hands, bought_in, final_stack, eliminated,
                         hands_played, end_reason]...] sorted}))

An edit anywhere breaks it: a hand's rows (its digests differ), its digests (the chain breaks), the chain rewritten
whole (the final hash differs), everything rewritten consistently (the final hash differs from the one published:
``arena verify --final HASH``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from arena.records.codec import HandRows

COMMITMENT_VERSION = 2
SEED_ONLY = 1  # the commitment of a match recorded before schema 5: the seed's hash alone

PARTS: tuple[tuple[str, str], ...] = (
    ("deal", "the deal's settings (deal number, rotation, table, button, blinds)"),
    ("cards", "the cards (deck, board, hole cards)"),
    ("seating", "the seats (each seat's participant and starting stack)"),
    ("actions", "the actions (kind, amount, street, seat, pot)"),
    ("decisions", "the decisions (how each was taken: how, elapsed ms, request id, rejections, mixed policy, "
                  "comment)"),
    ("violations", "the violations"),
    ("payoffs", "the payoffs (and final stacks)"),
    ("timings", "the timings (started, finished)"),
)
"""The parts of a hand the chain digests one by one, with what each holds (named when one differs)."""


def _foreign(value: Any) -> str:
    """What no written value is (bytes an edit put in a column), as text, so that a damaged row digests too."""
    return f"<{type(value).__name__}:{bytes(value).hex() if isinstance(value, bytes | bytearray) else value!r}>"


# (no circular check: the values are lists of numbers and strings, made here; it only cost each hand's digests 10%)
_JSON = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_foreign,
                         check_circular=False)


def _c_encoder() -> Any:
    """``_JSON``'s C core, made once from its settings as ``JSONEncoder.iterencode`` makes it for every value (a
    microsecond of each of a hand's eight digests, a fifth of their time); None in a Python without the standard
    library's accelerator, or with another signature for it (``_JSON`` then encodes). tests/records/test_evidence.py
    checks both give the same bytes."""
    make: Any = getattr(json.encoder, "c_make_encoder", None)
    strings = json.encoder.encode_basestring_ascii if _JSON.ensure_ascii else json.encoder.encode_basestring
    try:
        return None if make is None else make(None, _JSON.default, strings, _JSON.indent, _JSON.key_separator,
                                              _JSON.item_separator, _JSON.sort_keys, _JSON.skipkeys, _JSON.allow_nan)
    except TypeError:
        return None


_C_ENCODE = _c_encoder()


def canonical(value: Any) -> bytes:
    """The one JSON text of a value: sorted keys, no spaces, UTF-8 (``json.dumps`` with those settings)."""
    if _C_ENCODE is None:
        return _JSON.encode(value).encode()
    return "".join(_C_ENCODE(value, 0)).encode()


def _hash(tag: bytes, value: Any) -> str:
    return hashlib.sha256(tag + canonical(value)).hexdigest()


def commitment_document(match_id: str, kind: str, event: str | None, seed_commitment: str, hands_total: int,
                        seats: int, config_json: str, starting_stack: int, duplicate: bool, all_orders: bool,
                        game_json: str, participants: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """What the commitment of a match covers (see the module's documentation), from the values as stored."""
    return {
        "version": COMMITMENT_VERSION, "match": match_id, "kind": kind, "event": event, "seed": seed_commitment,
        "schedule": {"hands_total": hands_total, "seats": seats, "table": json.loads(config_json),
                     "starting_stack": starting_stack, "duplicate": bool(duplicate), "all_orders": bool(all_orders),
                     "game": json.loads(game_json) if game_json else None},
        "participants": [[name, version] for name, version in participants],
    }


def commitment_of(document: dict[str, Any]) -> str:
    """The commitment of a document (version 2)."""
    return _hash(b"arena-match-commitment-v2\n", document)


def differences(stored: Any, expected: Any, path: str = "") -> list[str]:
    """Where two commitment documents differ, field by field (``schedule.hands_total: 150 != 200``)."""
    if isinstance(stored, dict) and isinstance(expected, dict):
        out = []
        for key in sorted(set(stored) | set(expected), key=str):
            out += differences(stored.get(key), expected.get(key), f"{path}.{key}" if path else str(key))
        return out
    return [] if stored == expected else [f"{path or 'the document'}: {stored!r} != {expected!r}"]


def _decision(action: Sequence[Any]) -> list[Any]:
    """The values of an action row in the ``decisions`` part: seq, then how .. policy, then the comment if any."""
    values = [action[0], *action[8:13]]
    if len(action) > 13 and action[13] is not None:
        values.append(action[13])
    return values


def part_values(rows: HandRows) -> tuple[Any, ...]:
    """The values of each part of a hand, in the order of ``PARTS``."""
    _, deal, rotation, table_id, button, deck, board, started, finished, config = rows.hand
    return (
        [deal, rotation, table_id, button, config],
        [deck, board, [s[2] for s in rows.seats]],
        [[s[0], s[1], s[3]] for s in rows.seats],
        [list(a[:8]) for a in rows.actions],
        [_decision(a) for a in rows.actions],
        sorted([list(v) for v in rows.violations], key=lambda v: [str(x) for x in v]),
        [[s[0], s[4], s[5]] for s in rows.seats],
        [started, finished],
    )


def part_digests(rows: HandRows) -> tuple[str, ...]:
    """The digest of each part of a hand, in the order of ``PARTS``."""
    return tuple(hashlib.sha256(b"arena-hand-part-v1:%s\n" % name.encode() + canonical(values)).hexdigest()[:32]
                 for (name, _), values in zip(PARTS, part_values(rows), strict=True))


def chain_link(previous: str, hand_number: int, digests: Sequence[str]) -> str:
    """A hand's link in the chain, from the link before it (or the commitment) and its part digests."""
    text = f"arena-hand-chain-v1\n{previous}\n{hand_number}\n{'.'.join(digests)}"
    return hashlib.sha256(text.encode()).hexdigest()


def final_hash(commitment: str, last_link: str | None, hands: int, status: str,
               outcomes: Sequence[Sequence[Any]], games: Sequence[Sequence[Any]]) -> str:
    """The match's final hash (see the module's documentation)."""
    return _hash(b"arena-match-final-v1\n", {
        "commitment": commitment, "chain": last_link or commitment, "hands": hands, "status": status,
        "outcomes": [list(o) for o in outcomes], "games": sorted([list(g) for g in games], key=lambda g: g[:3]),
    })
