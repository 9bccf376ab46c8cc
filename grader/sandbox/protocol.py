"""The bytes that cross the process boundary, and the order they come in (layer 3 of the design).

A frame is two big-endian 32-bit lengths (header, payload), a JSON header, then the payload: the
raw little-endian bytes of the arrays the header lists by dtype and shape, each padded to 8 bytes
so every decoded array is aligned. The parent sends one frame, the `Job`; the child answers with
events: `Rejected` alone, or `Started` and `Finished` for each call in order, and `Violated` when a
runtime guard ends the run.

Nothing is ever unpickled. The parent treats every byte from the child as hostile: the header's
size, its JSON shape and types, the dtype allow-list, shapes against the job's element caps and
against the payload's length, string lengths, and the order of events are all checked, and
anything wrong is a `ProtocolError` (the run then ends as CRASHED) rather than a stray exception.
"""

from __future__ import annotations

import dataclasses
import json
import math
import struct
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, TypeVar

import numpy as np

from grader.sandbox.job import (
    Call,
    CallOutcome,
    Execution,
    Job,
    OutputValue,
    Policy,
    RaisedError,
    Termination,
    Violation,
)
from grader.sandbox.limits import MIB, SandboxLimits
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
_MAX_NAME = 200  # a type name, a dtype, a call id
_MAX_MESSAGE = 4000  # an error or violation message (calls.describe_exception keeps 2000)
_MAX_VIOLATIONS = 100
_STDOUT_SLACK = 1000  # room for the note the stdout capture appends when it cuts

T = TypeVar("T")


class ProtocolError(Exception):
    """The child sent something that is not a well-formed frame or event in its place."""


class OutputLimitExceeded(Exception):
    """The child sent (or announced) more bytes than the job's output cap."""


class ExitCode(IntEnum):
    """Why a child ended itself. Any other status, or a signal, means it did not choose to."""

    VIOLATION = 86  # a runtime guard ended the run, after a `Violated` event
    MEMORY = 87  # an allocation failed in the child's own code, outside the calls


@dataclass(frozen=True)
class Rejected:
    violations: tuple[Violation, ...]


@dataclass(frozen=True)
class Started:
    call_id: str


@dataclass(frozen=True)
class Finished:
    outcome: CallOutcome


@dataclass(frozen=True)
class Violated:
    violation: Violation


Event = Rejected | Started | Finished | Violated


@dataclass(frozen=True)
class Frame:
    header: dict[str, Any]
    payload: bytearray


# --- frames -------------------------------------------------------------------------------------


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
    return _typed(header, dict, "the frame header")


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a number")


def _decode_arrays(frame: Frame, max_elements: int) -> list[np.ndarray]:
    """The frame's arrays, as writable views of its payload, after checking every claim."""
    specs = _typed(frame.header.get("arrays"), list, "the array list")
    arrays, offset = [], 0
    for item in specs:
        spec = _typed(item, dict, "an array description")
        dtype = _text(spec, "dtype", _MAX_NAME)
        if dtype not in ALLOWED_DTYPES:
            raise ProtocolError(f"an array of dtype {dtype!r}")
        shape = _shape(spec.get("shape"))
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


# --- validation helpers -------------------------------------------------------------------------


def _typed(value: object, kind: type[T], what: str) -> T:
    # Exact types: JSON gives no subclasses, and bool must not pass for int.
    if type(value) is not kind:
        raise ProtocolError(f"{what} should be {kind.__name__}, got {type(value).__name__}")
    return value


def _text(obj: dict[str, Any], key: str, limit: int) -> str:
    value = _typed(obj.get(key), str, repr(key))
    if len(value) > limit:
        raise ProtocolError(f"{key!r} of {len(value)} characters (at most {limit})")
    # JSON admits lone surrogates, which no report could encode, and NUL, which PostgreSQL's
    # jsonb refuses: replace both, so every report can be stored. The rest stays as sent: each
    # rendering makes it inert for its medium (grader.text for a terminal).
    return value.encode("utf-8", "replace").decode("utf-8").replace("\x00", REPLACEMENT)


def _optional_text(obj: dict[str, Any], key: str, limit: int) -> str | None:
    return None if obj.get(key) is None else _text(obj, key, limit)


def _line(obj: dict[str, Any]) -> int | None:
    line = obj.get("line")
    if line is None:
        return None
    if not 0 <= _typed(line, int, "'line'") < 1 << 31:
        raise ProtocolError(f"line number {line}")
    return int(line)


def _shape(value: object) -> tuple[int, ...]:
    dims = _typed(value, list, "a shape")
    if len(dims) > _MAX_NDIM:
        raise ProtocolError(f"a shape of {len(dims)} dimensions")
    for dim in dims:
        if not 0 <= _typed(dim, int, "a dimension") < 1 << 62:
            raise ProtocolError(f"a dimension of {dim}")
    return tuple(dims)


def _seconds(value: object) -> float:
    seconds = _typed(value, float, "'duration_s'")
    if not 0.0 <= seconds < 1e9:
        raise ProtocolError(f"a duration of {seconds} s")
    return seconds


# --- the job (parent to child) ------------------------------------------------------------------


def encode_job(job: Job) -> bytes:
    """The job as one frame; an array used in several places travels once."""
    table: dict[int, int] = {}
    arrays: list[np.ndarray] = []

    def ref(array: np.ndarray) -> int:
        if id(array) not in table:
            table[id(array)] = len(arrays)
            arrays.append(array)
        return table[id(array)]

    calls = [
        {
            "id": call.id,
            "args": [None if arg is None else ref(arg) for arg in call.args],
            "init_kwargs": call.init_kwargs,
            "seed": call.seed,
            "parameters": {name: ref(value) for name, value in call.parameters.items()},
            "strict_parameters": call.strict_parameters,
            "max_output_elements": call.max_output_elements,
        }
        for call in job.calls
    ]
    header = {
        "source": job.source,
        "entry_point": job.entry_point,
        "entry_kind": job.kind,
        "framework": job.framework,
        "policy": dataclasses.asdict(job.policy),
        "limits": dataclasses.asdict(job.limits),
        "output_count": job.output_count,
        "calls": calls,
    }
    return encode_frame(header, arrays)


def decode_job(frame: Frame) -> Job:
    """The job back from its frame, in the child (the parent is trusted; shapes are checked
    anyway). Each array is one object however many times the job refers to it."""
    header = frame.header
    arrays = _decode_arrays(frame, max_elements=1 << 40)
    calls = tuple(
        Call(
            id=call["id"],
            args=tuple(None if ref is None else arrays[ref] for ref in call["args"]),
            init_kwargs=call["init_kwargs"],
            seed=call["seed"],
            parameters={name: arrays[ref] for name, ref in call["parameters"].items()},
            strict_parameters=call["strict_parameters"],
            max_output_elements=call["max_output_elements"],
        )
        for call in header["calls"]
    )
    policy = header["policy"]
    return Job(
        source=header["source"],
        entry_point=header["entry_point"],
        kind=header["entry_kind"],
        framework=header["framework"],
        policy=Policy(tuple(policy["allowed_imports"]), tuple(policy["forbidden"])),
        calls=calls,
        limits=SandboxLimits(**header["limits"]),
        output_count=header["output_count"],
    )


# --- events (child to parent) -------------------------------------------------------------------


def encode_event(event: Event) -> bytes:
    match event:
        case Rejected(violations):
            return encode_frame({"event": "rejected", "violations": _violations(violations)})
        case Started(call_id):
            return encode_frame({"event": "started", "call": call_id})
        case Finished(outcome):
            return _encode_finished(outcome)
        case Violated(violation):
            return encode_frame({"event": "violation", **dataclasses.asdict(violation)})


def _violations(violations: Sequence[Violation]) -> list[dict[str, Any]]:
    return [dataclasses.asdict(violation) for violation in violations]


def _encode_finished(outcome: CallOutcome) -> bytes:
    arrays: list[np.ndarray] = []
    values = []
    for value in outcome.outputs or ():
        # An array whose dtype may not cross goes back as its description alone.
        sent = value.array is not None and value.array.dtype.name in ALLOWED_DTYPES
        if sent and value.array is not None:
            arrays.append(value.array)
        shape = None if value.shape is None else list(value.shape)
        values.append(
            {"type_name": value.type_name, "dtype": value.dtype, "shape": shape, "array": sent}
        )
    header = {
        "event": "finished",
        "call": outcome.call_id,
        "outputs": None if outcome.outputs is None else values,
        "error": None if outcome.error is None else dataclasses.asdict(outcome.error),
        "stdout": outcome.stdout,
        "duration_s": float(outcome.duration_s),
    }
    return encode_frame(header, arrays)


def decode_event(frame: Frame, job: Job) -> Event:
    """One event from the child, every field checked against the protocol and the job."""
    header = frame.header
    kind = header.get("event")
    if kind == "finished":
        return Finished(_decode_outcome(frame, job))
    if frame.payload or header.get("arrays"):
        raise ProtocolError(f"arrays in a {str(kind)[:40]!r} event")
    if kind == "started":
        return Started(_call(job, header).id)
    if kind == "rejected":
        items = _typed(header.get("violations"), list, "'violations'")
        if not 0 < len(items) <= _MAX_VIOLATIONS:
            raise ProtocolError(f"{len(items)} violations")
        return Rejected(tuple(_violation(_typed(item, dict, "a violation")) for item in items))
    if kind == "violation":
        return Violated(_violation(header))
    raise ProtocolError(f"an unknown event {str(kind)[:40]!r}")


def _call(job: Job, header: dict[str, Any]) -> Call:
    call_id = _text(header, "call", _MAX_NAME)
    for call in job.calls:
        if call.id == call_id:
            return call
    raise ProtocolError(f"an event for a call the job does not have: {call_id!r}")


def _violation(obj: dict[str, Any]) -> Violation:
    return Violation(message=_text(obj, "message", _MAX_MESSAGE), line=_line(obj))


def _decode_outcome(frame: Frame, job: Job) -> CallOutcome:
    header = frame.header
    call = _call(job, header)
    arrays = iter(_decode_arrays(frame, call.max_output_elements))
    outputs = header.get("outputs")
    if outputs is not None:
        items = _typed(outputs, list, "'outputs'")
        if not 0 < len(items) <= job.output_count:
            raise ProtocolError(f"{len(items)} outputs for a job that expects {job.output_count}")
        outputs = tuple(_output(_typed(item, dict, "an output"), arrays) for item in items)
    if next(arrays, None) is not None:
        raise ProtocolError("more arrays than outputs that claim one")
    error = header.get("error")
    if error is not None:
        error = _raised(_typed(error, dict, "'error'"))
    if (outputs is None) == (error is None):
        raise ProtocolError("a finished call needs outputs or an error, not both")
    return CallOutcome(
        call_id=call.id,
        outputs=outputs,
        error=error,
        stdout=_text(header, "stdout", job.limits.stdout_chars + _STDOUT_SLACK),
        duration_s=_seconds(header.get("duration_s")),
    )


def _output(obj: dict[str, Any], arrays: Any) -> OutputValue:
    dtype = _optional_text(obj, "dtype", _MAX_NAME)
    shape = None if obj.get("shape") is None else _shape(obj["shape"])
    array = next(arrays, None) if _typed(obj.get("array"), bool, "'array'") else None
    if obj["array"] and array is None:
        raise ProtocolError("an output claims an array the frame does not carry")
    if array is not None and (shape != array.shape or dtype not in _names_of(array.dtype)):
        raise ProtocolError(
            f"an output described as {dtype} {shape} carrying {array.dtype} {array.shape}"
        )
    return OutputValue(_text(obj, "type_name", _MAX_NAME), array=array, dtype=dtype, shape=shape)


def _names_of(dtype: np.dtype[Any]) -> tuple[str, str]:
    # calls.describe_value names a tensor's dtype "torch.float32", an ndarray's "float32".
    return (dtype.name, f"torch.{dtype.name}")


def _raised(obj: dict[str, Any]) -> RaisedError:
    return RaisedError(
        type_name=_text(obj, "type_name", _MAX_NAME),
        message=_text(obj, "message", _MAX_MESSAGE),
        line=_line(obj),
        contract=obj.get("contract") is True,
    )


# --- the order of events ------------------------------------------------------------------------


class Transcript:
    """The events of one run, checked for order, and the `Execution` they add up to."""

    def __init__(self, job: Job) -> None:
        self._calls = [call.id for call in job.calls]
        self.outcomes: dict[str, CallOutcome] = {}
        self.running: str | None = None  # started, not finished
        self.violations: tuple[Violation, ...] = ()
        self.rejected = False

    @property
    def complete(self) -> bool:
        """Whether the child said all it had to: a rejection, or every call's outcome."""
        return self.rejected or len(self.outcomes) == len(self._calls)

    def record(self, event: Event) -> None:
        if self.complete or self.violations:
            raise ProtocolError(f"a {type(event).__name__} event after the run was over")
        match event:
            case Rejected(violations):
                self._expect(not self.outcomes and self.running is None, "a late rejection")
                self.rejected, self.violations = True, violations
            case Started(call_id):
                expected = self._calls[len(self.outcomes)]
                self._expect(
                    self.running is None and call_id == expected,
                    f"call {call_id!r} started out of turn",
                )
                self.running = call_id
            case Finished(outcome):
                self._expect(
                    outcome.call_id == self.running,
                    f"call {outcome.call_id!r} finished without starting",
                )
                self.outcomes[outcome.call_id] = outcome
                self.running = None
            case Violated(violation):
                self.violations = (violation,)

    def settled(self) -> Termination | None:
        """How the run ended, if the events alone say so (a rejection, a violation, or every
        call's outcome); None while the child still has something to report."""
        if self.rejected:
            return Termination.REJECTED
        if self.violations:
            return Termination.VIOLATION
        if self.complete:
            return Termination.COMPLETED
        return None

    def _expect(self, condition: bool, problem: str) -> None:
        if not condition:
            raise ProtocolError(problem)

    def execution(self, termination: Termination, detail: str = "") -> Execution:
        return Execution(
            termination=termination,
            outcomes=dict(self.outcomes),
            interrupted_call=self.running,
            violations=self.violations,
            detail=detail,
        )


class EventReporter:
    """The guest's reporter (see `guest.Reporter`) as a stream of events handed to `emit`."""

    def __init__(self, emit: Callable[[Event], None]) -> None:
        self._emit = emit

    def rejected(self, violations: Sequence[Violation]) -> None:
        self._emit(Rejected(tuple(violations)))

    def started(self, call: Call) -> None:
        self._emit(Started(call.id))

    def finished(self, outcome: CallOutcome) -> None:
        self._emit(Finished(outcome))
