"""A covert channel between two processes on one kernel that share nothing but the CPUs: CPU contention.

Time is cut into wall-clock frames (CLOCK_MONOTONIC is the kernel's, the same in every sandbox), each frame into
bits, each bit into ``REPEAT`` pairs of half-slots (Manchester coding: a bit compares the halves of its own pairs, so
no threshold is needed and a slow change of the machine's load cancels out). The *sender* runs ``SPINNERS``
processes that spin through the first half of each pair of a 1 bit and the second half of each pair of a 0 bit,
and sleep otherwise; the *listener* runs ``LISTENERS`` processes that spin all the time and note, per half-slot, how
long they actually ran (the time between two of their clock readings that are close together): while the spinners
run there are more runnable processes than cores, and the listeners run less. Every helper process has a session
of its own, because the scheduler shares the CPUs between sessions first (autogroups) and only then between a
session's processes: in one session the spinners would only take CPU from each other.

A frame carries a deal number (mod 16), the two cards as one of the 1,326 pairs, and a CRC-8; the sender sends its
frames one after the other in the next free frame slots; the listener drops a frame whose CRC fails even with its
least sure bit read the other way (a frame of noise passes about once in 128). The helpers are forked before the bot
opens its connection (``Channel.start``), so that gRPC's threads are never forked; they share one anonymous shared
mapping with the bot: the role, the frames to send, the listeners' measures, the frames heard. Nothing here needs a
file, a /proc file, shared memory by name or a memfd: only fork, setsid, an anonymous mapping and the clock.
"""

from __future__ import annotations

import mmap
import os
import signal
import struct
import time
from collections.abc import Callable

HALF_NS = 10_000_000  # one half-slot: 10 ms
REPEAT = 2  # Manchester pairs per bit, added up
DEAL_BITS, PAIR_BITS, CRC_BITS = 4, 11, 8
PAYLOAD_BITS = DEAL_BITS + PAIR_BITS
FRAME_BITS = PAYLOAD_BITS + CRC_BITS
FRAME_HALVES = 2 * REPEAT * FRAME_BITS
FRAME_NS = FRAME_HALVES * HALF_NS
SPINNERS = 16
LISTENERS = 6
RUNNING_GAP_NS = 200_000  # two clock readings closer than this: the listener ran in between
PAIRS = 52 * 51 // 2

IDLE, SENDER, LISTENER = 0, 1, 2
# the shared page, in words of 8 bytes: role, stop, frames heard, frames dropped; then the frames to send (per frame
# slot mod 256: slot, bits); the listeners' measures (per listener, per half-slot mod 512: half-slot, ns run); the
# frames heard (per deal mod 16: cards, monotonic ns when heard)
_ROLE, _STOP, _HEARD, _DROPPED = (8 * i for i in range(4))
_SEND_BASE, _SEND_SLOTS = 64, 256
_RAN_BASE, _RAN_SLOTS = _SEND_BASE + 16 * _SEND_SLOTS, 512
_HEARD_BASE = _RAN_BASE + 16 * _RAN_SLOTS * LISTENERS
_SIZE = _HEARD_BASE + 16 * (1 << DEAL_BITS)
_Q = struct.Struct("q")
_QQ = struct.Struct("qq")


def crc8(value: int, bits: int) -> int:
    """CRC-8 (polynomial 0x07) of the ``bits`` low bits of ``value``, most significant first."""
    crc = 0
    for i in reversed(range(bits)):
        crc ^= ((value >> i) & 1) << 7
        crc = ((crc << 1) ^ 0x07) & 0xFF if crc & 0x80 else (crc << 1) & 0xFF
    return crc


def pair_index(cards: tuple[int, int]) -> int:
    """The two cards as one number below 1,326."""
    low, high = sorted(cards)
    return high * (high - 1) // 2 + low


def pair_of(index: int) -> tuple[int, int]:
    """The inverse of ``pair_index``."""
    high = 1
    while (high + 1) * high // 2 <= index:
        high += 1
    return index - high * (high - 1) // 2, high


def encode(deal: int, cards: tuple[int, int]) -> int:
    """A frame's bits, most significant first: deal mod 16, the pair of cards, the CRC-8 of those."""
    payload = ((deal % (1 << DEAL_BITS)) << PAIR_BITS) | pair_index(cards)
    return (payload << CRC_BITS) | crc8(payload, PAYLOAD_BITS)


def decode(bits: int) -> tuple[int, tuple[int, int]] | None:
    """(deal mod 16, cards) of a frame whose CRC holds and that names a pair of cards, else None."""
    payload, crc = bits >> CRC_BITS, bits & ((1 << CRC_BITS) - 1)
    index = payload & ((1 << PAIR_BITS) - 1)
    if crc8(payload, PAYLOAD_BITS) != crc or index >= PAIRS:
        return None
    return payload >> PAIR_BITS, pair_of(index)


def _word(page: mmap.mmap, at: int) -> int:
    value: int = _Q.unpack_from(page, at)[0]
    return value


def _add(page: mmap.mmap, at: int) -> None:
    _Q.pack_into(page, at, _word(page, at) + 1)


class Channel:
    """The bot's end: fork the helpers, set the role once known, send (sender), read what was heard (listener)."""

    def __init__(self) -> None:
        self.page = mmap.mmap(-1, _SIZE)  # anonymous and shared: the forked helpers see the same page
        self.children: list[int] = []
        self._next = 0  # the next free frame slot

    def start(self) -> None:
        """Fork the spinners and the listeners (before any thread exists); they idle until a role is set."""
        for _ in range(SPINNERS):
            self._fork(lambda: _spin(self.page))
        for index in range(LISTENERS):
            self._fork(lambda i=index: _listen(self.page, i))  # type: ignore[misc]

    def _fork(self, body: Callable[[], None]) -> None:
        pid = os.fork()
        if pid == 0:
            try:
                os.setsid()  # a session (an autogroup) of its own
                body()
            finally:
                os._exit(0)
        self.children.append(pid)

    def set_role(self, role: int) -> None:
        """SENDER or LISTENER (the other helpers then idle)."""
        _Q.pack_into(self.page, _ROLE, role)

    def send(self, deal: int, cards: tuple[int, int]) -> None:
        """Send this frame in the next free frame slot (the next whole one from now, or after those queued)."""
        self._next = max(self._next, time.monotonic_ns() // FRAME_NS + 1)
        _QQ.pack_into(self.page, _SEND_BASE + 16 * (self._next % _SEND_SLOTS), self._next, encode(deal, cards))
        self._next += 1

    def heard(self, deal: int, since_ns: int) -> tuple[int, int] | None:
        """The cards heard for ``deal`` (mod 16) at ``since_ns`` or later, if any."""
        cards, when = _QQ.unpack_from(self.page, _HEARD_BASE + 16 * (deal % (1 << DEAL_BITS)))
        if when <= 0 or when < since_ns:
            return None
        return pair_of(cards)

    def last_heard_ns(self) -> int:
        """When the last good frame was heard (0: never)."""
        return max(int(_QQ.unpack_from(self.page, _HEARD_BASE + 16 * d)[1]) for d in range(1 << DEAL_BITS))

    @property
    def frames_heard(self) -> int:
        return _word(self.page, _HEARD)

    @property
    def frames_dropped(self) -> int:
        return _word(self.page, _DROPPED)

    def stop(self) -> None:
        """End the helpers."""
        _Q.pack_into(self.page, _STOP, 1)
        for pid in self.children:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass


def _stopped(page: mmap.mmap, parent: int) -> bool:
    return _word(page, _STOP) != 0 or os.getppid() != parent  # told to, or the bot is gone


def _spin(page: mmap.mmap) -> None:
    """A spinner: busy in the half-slots the frame being sent says, asleep otherwise."""
    parent = os.getppid()
    while not _stopped(page, parent):
        half = time.monotonic_ns() // HALF_NS
        end = (half + 1) * HALF_NS
        busy = False
        if _word(page, _ROLE) == SENDER:
            frame, offset = divmod(half, FRAME_HALVES)
            slot, bits = _QQ.unpack_from(page, _SEND_BASE + 16 * (frame % _SEND_SLOTS))
            if slot == frame:
                bit = (bits >> (FRAME_BITS - 1 - offset // (2 * REPEAT))) & 1
                busy = (offset % 2 == 0) == (bit == 1)  # 1: busy, then idle; 0: idle, then busy
        if busy:
            while time.monotonic_ns() < end:
                pass
        else:
            time.sleep(max(0, end - time.monotonic_ns()) / 1e9)


def _listen(page: mmap.mmap, index: int) -> None:
    """A listener: how long it ran in each half-slot, noted in the page; listener 0 also reads each frame once the
    frame is over (and the others had a moment to note their last half-slot)."""
    parent = os.getppid()
    ran_base = _RAN_BASE + 16 * _RAN_SLOTS * index
    half, ran = -1, 0
    frame = -1  # the next frame to read (listener 0)
    last = time.monotonic_ns()
    while not _stopped(page, parent):
        if _word(page, _ROLE) != LISTENER:
            time.sleep(0.05)
            last = time.monotonic_ns()
            frame = last // FRAME_NS + 1  # the first whole frame from now
            continue
        now = time.monotonic_ns()
        if now - last < RUNNING_GAP_NS:
            if now // HALF_NS != half:
                if half >= 0:
                    _QQ.pack_into(page, ran_base + 16 * (half % _RAN_SLOTS), half, ran)
                half, ran = now // HALF_NS, 0
            ran += now - last
        last = now
        if index == 0 and now >= (frame + 1) * FRAME_NS + 3 * HALF_NS:
            _read_frame(page, frame)
            frame += 1


def _read_frame(page: mmap.mmap, frame: int) -> None:
    """Decode frame ``frame`` from the listeners' measures: per pair of half-slots, the share the second one ran
    more than the first, added up over the bit's pairs; a bit is 1 when its first halves ran less."""
    first = frame * FRAME_HALVES
    ran = [0] * FRAME_HALVES
    for listener in range(LISTENERS):
        base = _RAN_BASE + 16 * _RAN_SLOTS * listener
        for i in range(FRAME_HALVES):
            half, ns = _QQ.unpack_from(page, base + 16 * ((first + i) % _RAN_SLOTS))
            if half == first + i:
                ran[i] += ns
    if not any(ran):
        return  # nobody ran: nothing to read
    bits = 0
    doubt: tuple[float, int] = (float("inf"), 0)  # the least sure bit: how sure, its mask
    for bit in range(FRAME_BITS):
        soft = 0.0
        for pair in range(REPEAT):
            a, b = ran[2 * (bit * REPEAT + pair)], ran[2 * (bit * REPEAT + pair) + 1]
            soft += (b - a) / max(1, a + b)
        bits = (bits << 1) | (1 if soft > 0 else 0)
        doubt = min(doubt, (abs(soft), 1 << (FRAME_BITS - 1 - bit)))
    got = decode(bits)
    if got is None:  # the least sure bit read wrong, maybe (noise then passes the CRC once in 128 frames)
        got = decode(bits ^ doubt[1])
    if got is None:
        _add(page, _DROPPED)
        return
    deal, cards = got
    _QQ.pack_into(page, _HEARD_BASE + 16 * deal, pair_index(cards), time.monotonic_ns())
    _add(page, _HEARD)
