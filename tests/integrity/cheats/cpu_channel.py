"""A covert channel between two processes on one kernel that share nothing but the CPUs: CPU contention.

Time is cut into wall-clock frames (CLOCK_MONOTONIC is the kernel's, the same in every sandbox), each frame into
bits, each bit into two half-slots (Manchester coding: each bit compares its own two halves, so no threshold is
needed and a slow change of the machine's load cancels out). The *sender* runs ``SPINNERS`` processes that spin
through the first half of a 1 bit and the second half of a 0 bit and sleep otherwise; the *listener* spins all the
time and notes, per half-slot, how long it actually ran (the time between two of its clock readings that are close
together): while the spinners run there are many more runnable processes than cores, and it runs less. A frame
carries a deal number (mod 32), two cards and a CRC-8; the sender repeats its latest frame until it has a newer
one, and a frame whose CRC fails is dropped (a frame of noise passes about once in 256).

The helpers are forked before the bot opens its connection (``Channel.start``), so that gRPC's threads are never
forked; they share one anonymous shared mapping with the bot: the role, the frame to send, the frames heard.
Nothing here needs a file, a /proc file, shared memory by name or a memfd: only fork, an anonymous mapping and the
clock, which no sandbox short of pinning each process to cores of its own can take away.
"""

from __future__ import annotations

import mmap
import os
import signal
import struct
import time
from collections.abc import Callable

HALF_NS = 10_000_000  # one half-slot: 10 ms
DEAL_BITS, CARD_BITS, CRC_BITS = 5, 6, 8
PAYLOAD_BITS = DEAL_BITS + 2 * CARD_BITS
FRAME_BITS = PAYLOAD_BITS + CRC_BITS
FRAME_NS = 2 * FRAME_BITS * HALF_NS
SPINNERS = 12
RUNNING_GAP_NS = 200_000  # two clock readings closer than this: the listener ran in between

IDLE, SENDER, LISTENER = 0, 1, 2
# the shared page: words of 8 bytes
_ROLE, _STOP, _HEARD, _DROPPED, _FROM, _BITS, _PREVIOUS = (8 * i for i in range(7))
_HEARD_BASE = 64  # per deal mod 32: (cards, monotonic ns when heard)
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


def encode(deal: int, cards: tuple[int, int]) -> int:
    """A frame's bits, most significant first: deal mod 32, the two cards, the CRC-8 of those."""
    payload = ((deal % (1 << DEAL_BITS)) << (2 * CARD_BITS)) | (cards[0] << CARD_BITS) | cards[1]
    return (payload << CRC_BITS) | crc8(payload, PAYLOAD_BITS)


def decode(bits: int) -> tuple[int, tuple[int, int]] | None:
    """(deal mod 32, cards) of a frame whose CRC holds and whose cards are two different cards, else None."""
    payload, crc = bits >> CRC_BITS, bits & ((1 << CRC_BITS) - 1)
    if crc8(payload, PAYLOAD_BITS) != crc:
        return None
    mask = (1 << CARD_BITS) - 1
    a, b = (payload >> CARD_BITS) & mask, payload & mask
    if a >= 52 or b >= 52 or a == b:
        return None
    return payload >> (2 * CARD_BITS), (a, b)


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

    def start(self) -> None:
        """Fork the spinners and the listener (before any thread exists); they idle until a role is set."""
        for _ in range(SPINNERS):
            self._fork(lambda: _spin(self.page))
        self._fork(lambda: _listen(self.page))

    def _fork(self, body: Callable[[], None]) -> None:
        pid = os.fork()
        if pid == 0:
            try:
                body()
            finally:
                os._exit(0)
        self.children.append(pid)

    def set_role(self, role: int) -> None:
        """SENDER or LISTENER (the other helpers then idle)."""
        _Q.pack_into(self.page, _ROLE, role)

    def send(self, deal: int, cards: tuple[int, int]) -> None:
        """Send this frame from the next frame slot on, again and again until the next ``send``."""
        _Q.pack_into(self.page, _PREVIOUS, _word(self.page, _BITS))
        _Q.pack_into(self.page, _BITS, encode(deal, cards))
        _Q.pack_into(self.page, _FROM, time.monotonic_ns() // FRAME_NS + 1)

    def heard(self, deal: int, since_ns: int) -> tuple[int, int] | None:
        """The cards heard for ``deal`` (mod 32) at ``since_ns`` or later, if any."""
        cards, when = _QQ.unpack_from(self.page, _HEARD_BASE + 16 * (deal % (1 << DEAL_BITS)))
        if when <= 0 or when < since_ns:
            return None
        return cards >> CARD_BITS, cards & ((1 << CARD_BITS) - 1)

    def last_heard_ns(self) -> int:
        """When the last good frame was heard (0: never)."""
        return max(_QQ.unpack_from(self.page, _HEARD_BASE + 16 * d)[1] for d in range(1 << DEAL_BITS))

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


def _stopped(page: mmap.mmap) -> bool:
    return _word(page, _STOP) != 0 or os.getppid() == 1  # told to, or the bot is gone


def _spin(page: mmap.mmap) -> None:
    """A spinner: busy in the half-slots the frame being sent says, asleep otherwise."""
    while not _stopped(page):
        half = time.monotonic_ns() // HALF_NS
        end = (half + 1) * HALF_NS
        busy = False
        if _word(page, _ROLE) == SENDER:
            frame, offset = divmod(half, 2 * FRAME_BITS)
            bits = _word(page, _BITS) if frame >= _word(page, _FROM) else _word(page, _PREVIOUS)
            if bits:
                bit = (bits >> (FRAME_BITS - 1 - offset // 2)) & 1
                busy = (offset % 2 == 0) == (bit == 1)  # 1: busy, then idle; 0: idle, then busy
        if busy:
            while time.monotonic_ns() < end:
                pass
        else:
            time.sleep(max(0, end - time.monotonic_ns()) / 1e9)


def _listen(page: mmap.mmap) -> None:
    """The listener: how long it ran in each half-slot; at each frame's end, the frame read bit by bit."""
    ran: dict[int, int] = {}
    last = time.monotonic_ns()
    frame = last // FRAME_NS
    while not _stopped(page):
        if _word(page, _ROLE) != LISTENER:
            time.sleep(0.05)
            ran.clear()
            last = time.monotonic_ns()
            frame = last // FRAME_NS + 1  # the first whole frame from now
            continue
        now = time.monotonic_ns()
        if now - last < RUNNING_GAP_NS:
            half = now // HALF_NS
            ran[half] = ran.get(half, 0) + now - last
        last = now
        if now // FRAME_NS > frame:  # frame ``frame`` is over
            first = frame * 2 * FRAME_BITS
            halves = [ran.pop(first + i, 0) for i in range(2 * FRAME_BITS)]
            for stale in [h for h in ran if h < first]:
                del ran[stale]
            frame = now // FRAME_NS
            if max(halves) == 0:
                continue  # not measured
            bits = 0
            for i in range(FRAME_BITS):
                bits = (bits << 1) | (1 if halves[2 * i] < halves[2 * i + 1] else 0)
            got = decode(bits)
            if got is None:
                _add(page, _DROPPED)
                continue
            deal, (a, b) = got
            _QQ.pack_into(page, _HEARD_BASE + 16 * deal, (a << CARD_BITS) | b, time.monotonic_ns())
            _add(page, _HEARD)
