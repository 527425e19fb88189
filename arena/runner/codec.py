"""The one codec between a match executor and the driver: what is played (``MatchJob``) goes out, what came of it
(``HandRecord`` after ``HandRecord``, then the ``MatchResult`` or the failure) comes back, as framed JSON.

It is generic over the referee's dataclasses: a value is written field by field (enums by value, named tuples and
tuples as lists, paths as text) and read back by the field's declared type, so a field added to ``HandRecord`` or
``MatchSpec`` travels without a change here, and ``decode(encode(x)) == x`` for every record (the database cannot
tell which executor played a hand). JSON, not pickle: the driver unpickles nothing that a worker node sent.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import json
import struct
import types
import typing
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Union

from arena.referee import HandRecord, MatchResult
from arena.referee.records import TRANSIENT

FRAME_HEADER = struct.Struct(">I")  # the length of the JSON that follows
MAX_FRAME = 256 * 1024 * 1024  # far more than any hand or job: a bigger length is a torn or foreign stream


class CodecError(ValueError):
    """Bytes that are not a frame of this codec, or data that does not fit the type it is read as."""


@dataclass(frozen=True, slots=True)
class MatchFailure:
    """A match that could not be played on its worker (the referee or its sandbox failed there), in words."""

    match_id: str
    error: str
    lost: bool = False  # its worker was killed (a signal: the node going down): the match may be played on


Message = HandRecord | MatchResult | MatchFailure
_KINDS: dict[str, type[Any]] = {"hand": HandRecord, "result": MatchResult, "failure": MatchFailure}
_KIND_OF = {cls: kind for kind, cls in _KINDS.items()}


def to_data(value: Any) -> Any:
    """A value as JSON-ready data."""
    if isinstance(value, enum.Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_data(getattr(value, f.name)) for f in dataclasses.fields(value)
                if not f.metadata.get(TRANSIENT)}  # what only the process that made it uses (HandRecord.end_wire)
    if isinstance(value, tuple | list | frozenset | set):
        items = sorted(value) if isinstance(value, frozenset | set) else value
        return [to_data(v) for v in items]
    if isinstance(value, Mapping):
        return {str(k): to_data(v) for k, v in value.items()}
    if isinstance(value, Path):
        return str(value)
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise CodecError(f"cannot encode a {type(value).__name__}")


@functools.cache
def _hints(cls: type[Any]) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def from_data(kind: Any, data: Any) -> Any:
    """Data read back as ``kind`` (a class or a typing form such as ``tuple[int, ...]`` or ``str | None``)."""
    origin = typing.get_origin(kind)
    args = typing.get_args(kind)
    if origin is Union or origin is types.UnionType:
        if data is None and type(None) in args:
            return None
        options = [a for a in args if a is not type(None)]
        if len(options) != 1:
            raise CodecError(f"cannot decode the union {kind}")
        return from_data(options[0], data)
    if kind is Any:
        return data
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(from_data(args[0], v) for v in data)
        return tuple(from_data(a, v) for a, v in zip(args, data, strict=True))
    if origin in (list, frozenset, set):
        items = [from_data(args[0], v) for v in data]
        return items if origin is list else origin(items)
    if origin in (dict, Mapping):  # JSON keys are text: whole-number keys (hand numbers) are read back as such
        key_kind = args[0]
        return {from_data(key_kind, int(k) if key_kind is int else k): from_data(args[1], v) for k, v in data.items()}
    if isinstance(kind, type):
        if issubclass(kind, enum.Enum):
            return kind(data)
        if dataclasses.is_dataclass(kind):
            hints = _hints(kind)
            if not isinstance(data, dict):
                raise CodecError(f"expected an object for {kind.__name__}")
            known = {f.name for f in dataclasses.fields(kind)}
            return kind(**{name: from_data(hints[name], v) for name, v in data.items() if name in known})
        if issubclass(kind, tuple) and hasattr(kind, "_fields"):  # a NamedTuple (the engine's Event)
            hints = _hints(kind)
            return kind(*(from_data(hints[name], v) for name, v in zip(kind._fields, data, strict=False)))
        if kind is Path:
            return Path(data)
        if kind is float and isinstance(data, int | float):
            return float(data)
        if kind in (int, str, bool) and isinstance(data, kind):
            return data
        if kind is type(None) and data is None:
            return None
    raise CodecError(f"cannot decode {data!r} as {kind}")


def encode(message: Message) -> bytes:
    """One message (a hand, the match's result, or its failure) as a frame's body."""
    kind = _KIND_OF.get(type(message))
    if kind is None:
        raise CodecError(f"not a message of the executor: {type(message).__name__}")
    return json.dumps({"kind": kind, "data": to_data(message)}, separators=(",", ":")).encode("utf-8")


def decode(body: bytes) -> Message:
    """The inverse of ``encode``."""
    try:
        envelope = json.loads(body)
        cls = _KINDS[envelope["kind"]]
        message: Message = from_data(cls, envelope["data"])
    except (ValueError, KeyError, TypeError) as exc:
        raise CodecError(f"not a message of the executor: {exc}") from None
    return message


def encode_value(value: Any) -> bytes:
    """Any dataclass (a ``MatchJob``) as bytes."""
    return json.dumps(to_data(value), separators=(",", ":")).encode("utf-8")


def decode_value(kind: type[Any], body: bytes) -> Any:
    """The inverse of ``encode_value``."""
    try:
        return from_data(kind, json.loads(body))
    except (ValueError, KeyError, TypeError) as exc:
        raise CodecError(f"not a {kind.__name__}: {exc}") from None


def write_frame(stream: IO[bytes], body: bytes) -> None:
    """Write one length-prefixed frame and flush it."""
    stream.write(FRAME_HEADER.pack(len(body)) + body)
    stream.flush()


def read_frames(stream: IO[bytes]) -> Iterator[bytes]:
    """Every frame of a stream until it ends; a stream cut inside a frame ends with ``CodecError``."""
    while True:
        header = stream.read(FRAME_HEADER.size)
        if not header:
            return
        if len(header) < FRAME_HEADER.size:
            raise CodecError("the stream ended inside a frame's header")
        (size,) = FRAME_HEADER.unpack(header)
        if size > MAX_FRAME:
            raise CodecError(f"a frame of {size} bytes: not a stream of this codec")
        body = stream.read(size)
        if len(body) < size:
            raise CodecError("the stream ended inside a frame")
        yield body
