"""Frames: the bytes that cross the process boundary, checked as hostile on the way in.

A frame is two big-endian 32-bit lengths (header, payload), a JSON header, then the payload: the
raw little-endian bytes of the arrays the header lists by dtype and shape, each padded to 8 bytes
so every decoded array is aligned. Nothing is ever unpickled: the header's size, its JSON shape
and types, the dtype allow-list, shapes against element caps and against the payload's length,
and string lengths are all checked, and anything wrong is a `ProtocolError`. What the frames
carry (a job, events) is `protocol.py`'s.
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from grader.limits import MIB
from grader.text import REPLACEMENT

# The only dtypes whose bytes cross; anything else is described by name and shape alone.
ALLOWED_DTYPES = frozenset({"float16", "float32", "float64", "int32", "int64", "bool"})
# An event's header carries text (prints, an error message) but never arrays: 1 MiB is plenty,
# and more means the child is not the code we wrote.
MAX_EVENT_HEADER = 1 * MIB
# The job's header carries the source; the API caps submissions well below this.
MAX_JOB_HEADER = 16 * MIB

_PREFIX = struct.Struct(">II")
_ALIGN = 8
_MAX_NDIM = 32
MAX_NAME = 200  # a type name, a dtype, a call id

T = TypeVar("T")


class ProtocolError(Exception):
    """The child sent something that is not a well-formed frame or event in its place."""


class OutputLimitExceeded(Exception):
    """The child sent (or announced) more bytes than the job's output cap."""


@dataclass(frozen=True)
class Frame:
    header: dict[str, Any]
    payload: bytearray


def encode_frame(header: dict[str, Any], arrays: Sequence[np.ndarray] = ()) -> bytes:
    """One frame; `header["arrays"]` is set to the arrays' dtypes and shapes."""
    wire = [_little_endian(array) for array in arrays]
    header = {**header, "arrays": [{"dtype": a.dtype.name, "shape": list(a.shape)} for a in wire]}
    head = json.dumps(header, separators=(",", ":")).encode("ascii")
    chunks: list[bytes | memoryview] = []
    for array in wire:
        chunks += [array.reshape(-1).view(np.uint8).data, bytes(_padding(array.nbytes))]
    payload_length = sum(len(chunk) for chunk in chunks)
    return b"".join([_PREFIX.pack(len(head), payload_length), head, *chunks])


def _little_endian(array: np.ndarray) -> np.ndarray:
    if array.dtype.name not in ALLOWED_DTYPES:
        raise ValueError(f"arrays of {array.dtype} cannot cross the sandbox boundary")
    return np.asarray(array, dtype=array.dtype.newbyteorder("<"), order="C")


def _padding(nbytes: int) -> int:
    return -nbytes % _ALIGN


class FrameReader:
    """Cuts a byte stream into frames, within a total byte budget; feed it what `recv` returns."""

    def __init__(self, max_header: int, budget: int) -> None:
        self._buffer = bytearray()
        self._max_header = max_header
        self._budget = budget  # bytes still allowed to arrive

    def feed(self, data: bytes) -> Iterator[Frame]:
        """Take `data` and yield the frames it completes, one at a time: a frame that breaks
        the protocol raises only once the frames before it have been taken."""
        self._budget -= len(data)
        if self._budget < 0:
            raise OutputLimitExceeded("the child sent more bytes than its output limit")
        self._buffer += data
        while (frame := self._next_frame()) is not None:
            yield frame

    @property
    def pending(self) -> bool:
        """Whether a frame was begun and not finished."""
        return bool(self._buffer)

    def _next_frame(self) -> Frame | None:
        if len(self._buffer) < _PREFIX.size:
            return None
        header_length, payload_length = _PREFIX.unpack_from(self._buffer)
        if header_length > self._max_header:
            raise ProtocolError(
                f"a frame header of {header_length} bytes (at most {self._max_header})"
            )
        end = _PREFIX.size + header_length + payload_length
        if end - len(self._buffer) > self._budget:
            raise OutputLimitExceeded(f"the child announced a frame of {end} bytes")
        if len(self._buffer) < end:
            return None
        header = _parse_header(self._buffer[_PREFIX.size : _PREFIX.size + header_length])
        payload = self._buffer[_PREFIX.size + header_length : end]
        del self._buffer[:end]
        return Frame(header, payload)


def _parse_header(raw: bytearray) -> dict[str, Any]:
    try:
        header = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except (ValueError, RecursionError) as error:
        raise ProtocolError(f"a frame header that is not JSON: {str(error)[:200]}") from None
    return typed(header, dict, "the frame header")


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a number")


def decode_arrays(frame: Frame, max_elements: int) -> list[np.ndarray]:
    """The frame's arrays, as writable views of its payload, after checking every claim."""
    specs = typed(frame.header.get("arrays"), list, "the array list")
    arrays, offset = [], 0
    for item in specs:
        spec = typed(item, dict, "an array description")
        dtype = parse_text(spec, "dtype", MAX_NAME)
        if dtype not in ALLOWED_DTYPES:
            raise ProtocolError(f"an array of dtype {dtype!r}")
        shape = parse_shape(spec.get("shape"))
        count = math.prod(shape)
        # Each dimension too: a zero elsewhere makes an array of none whose shape no output
        # has, and which numpy cannot represent.
        if count > max_elements or any(dim > max_elements for dim in shape):
            raise ProtocolError(f"an array of shape {shape} (at most {max_elements} elements)")
        wire_dtype = np.dtype(dtype).newbyteorder("<")
        nbytes = count * wire_dtype.itemsize
        if offset + nbytes > len(frame.payload):
            raise ProtocolError("array shapes that claim more bytes than the payload holds")
        array = np.frombuffer(frame.payload, wire_dtype, count, offset)
        arrays.append(array.reshape(shape))
        offset += nbytes + _padding(nbytes)
    if offset != len(frame.payload):
        raise ProtocolError(f"a payload of {len(frame.payload)} bytes for arrays of {offset}")
    return arrays


def typed(value: object, kind: type[T], what: str) -> T:
    # Exact types: JSON gives no subclasses, and bool must not pass for int.
    if type(value) is not kind:
        raise ProtocolError(f"{what} should be {kind.__name__}, got {type(value).__name__}")
    return value


def parse_text(obj: dict[str, Any], key: str, limit: int) -> str:
    value = typed(obj.get(key), str, repr(key))
    if len(value) > limit:
        raise ProtocolError(f"{key!r} of {len(value)} characters (at most {limit})")
    # JSON admits lone surrogates, which no report could encode, and NUL, which PostgreSQL's
    # jsonb refuses: replace both, so every report can be stored. The rest stays as sent: each
    # rendering makes it inert for its medium (grader.text for a terminal).
    return value.encode("utf-8", "replace").decode("utf-8").replace("\x00", REPLACEMENT)


def parse_optional_text(obj: dict[str, Any], key: str, limit: int) -> str | None:
    return None if obj.get(key) is None else parse_text(obj, key, limit)


def parse_line(obj: dict[str, Any]) -> int | None:
    line = obj.get("line")
    if line is None:
        return None
    if not 0 <= typed(line, int, "'line'") < 1 << 31:
        raise ProtocolError(f"line number {line}")
    return int(line)


def parse_shape(value: object) -> tuple[int, ...]:
    dims = typed(value, list, "a shape")
    if len(dims) > _MAX_NDIM:
        raise ProtocolError(f"a shape of {len(dims)} dimensions")
    for dim in dims:
        if not 0 <= typed(dim, int, "a dimension") < 1 << 62:
            raise ProtocolError(f"a dimension of {dim}")
    return tuple(dims)


def parse_seconds(value: object) -> float:
    seconds = typed(value, float, "'duration_s'")
    if not 0.0 <= seconds < 1e9:
        raise ProtocolError(f"a duration of {seconds} s")
    return seconds
