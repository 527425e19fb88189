"""Writing the referee's finished hands as PHH files, one per hand, that PokerKit loads to the same stacks."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from arena.engine import EventKind, Hand, RuleError
from arena.records.errors import RecordsDamaged
from arena.records.phh import dump
from arena.records.replay import hand_to_phh
from arena.referee import HandRecord
from arena.text import path_inside


def start_hand(record: HandRecord) -> Hand:
    """A recorded hand once its forced bets are posted: the seats that posted an entry blind (R2.4) post it again."""
    entries = [e.seat for e in record.events if e.kind is EventKind.POST_ENTRY_BLIND]
    try:
        return Hand(record.config, list(record.starting_stacks), list(record.deck), button=record.button,
                    entry_blinds=entries)
    except RuleError as exc:
        raise _damaged(record, exc) from None


def _damaged(record: HandRecord, exc: RuleError) -> RecordsDamaged:
    return RecordsDamaged(f"the recorded hand cannot be replayed: {exc}", table="actions", match_id=record.match_id,
                          hand=record.hand_number)


def replay_steps(record: HandRecord) -> Iterator[Hand]:
    """Replay a hand record through the engine (its deck and its decisions): the one hand, yielded once after the
    forced bets and again after each decision (for estimators that look at the hand as it went). A record the
    engine refuses (an edited action) is ``RecordsDamaged`` naming the hand."""
    hand = start_hand(record)
    yield hand
    for decision in record.decisions:
        try:
            hand.act(decision.seat, decision.action)
        except RuleError as exc:
            raise _damaged(record, exc) from None
        yield hand


def rebuild_hand(record: HandRecord) -> Hand:
    """Replay a hand record through the engine (its deck and its decisions) to get the finished hand back; a record
    the engine refuses is ``RecordsDamaged``."""
    hand = start_hand(record)
    for decision in record.decisions:
        try:
            hand.act(decision.seat, decision.action)
        except RuleError as exc:
            raise _damaged(record, exc) from None
    return hand


def decision_comments(record: HandRecord) -> dict[int, str]:
    """The bots' decision comments of a hand by the index of the action's event (for PHH and the hand pages)."""
    return {d.event_index: d.comment for d in record.decisions if d.comment}


class PhhDirSink:
    """A HandSink writing ``<dir>/<match>/<hand number>.phh``, each part of the match id (split at ``/``) a slug
    (arena.text), so no id can write outside ``dir``; seat names are the bots' names; each action a bot commented
    on carries its comment (written once the hand is over, like the file)."""

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)

    def hand_finished(self, record: HandRecord) -> None:
        hand = rebuild_hand(record)
        extra = {"hand": record.hand_number, "event": f"arena match {record.match_id}", "table": record.table_id}
        phh = hand_to_phh(hand, players=list(record.names), extra=extra, comments=decision_comments(record))
        path = path_inside(self.directory, *record.match_id.split("/"), f"{record.hand_number:06d}", suffix=".phh")
        path.parent.mkdir(parents=True, exist_ok=True)
        dump(phh, path)
