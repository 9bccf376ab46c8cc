"""What crosses the process boundary, in frames (`frames.py`), layer 3 of the design.

The parent sends one frame, the `Job`; the child answers with events: `Rejected` alone, or
`Started` and `Finished` for each call in order, and `Violated` when a runtime guard ends the
run. The parent decodes every event as hostile; anything wrong is a `ProtocolError` (the run then
ends as CRASHED) rather than a stray exception. The order of events is `transcript.py`'s.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

import numpy as np

from grader.call_fields import call_fields, call_from_fields
from grader.contract import (
    MAX_GRADIENT_ELEMENTS,
    Call,
    CallOutcome,
    Job,
    OutputValue,
    Policy,
    RaisedError,
    Violation,
)
from grader.limits import SandboxLimits
from grader.sandbox.frames import (
    ALLOWED_DTYPES,
    MAX_NAME,
    Frame,
    ProtocolError,
    decode_arrays,
    encode_frame,
    parse_line,
    parse_optional_text,
    parse_seconds,
    parse_shape,
    parse_text,
    typed,
)
from grader.sandbox.gradient_frames import decode_gradients, encode_gradients

_MAX_MESSAGE = 4000  # an error or violation message (describe_exception keeps 2000)
_MAX_VIOLATIONS = 100
_STDOUT_SLACK = 1000  # room for the note the stdout capture appends when it cuts


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

    calls = [call_fields(call, ref) for call in job.calls]
    header = {
        "source": job.source,
        "entry_point": job.entry_point,
        "entry_kind": job.kind,
        "framework": job.framework,
        "policy": dataclasses.asdict(job.policy),
        "limits": dataclasses.asdict(job.limits),
        "outputs": list(job.outputs),
        "calls": calls,
    }
    return encode_frame(header, arrays)


def decode_job(frame: Frame) -> Job:
    """The job back from its frame, in the child (the parent is trusted; shapes are checked
    anyway). Each array is one object however many times the job refers to it."""
    header = frame.header
    arrays = decode_arrays(frame, max_elements=1 << 40)
    calls = tuple(call_from_fields(call, arrays.__getitem__) for call in header["calls"])
    policy = header["policy"]
    return Job(
        source=header["source"],
        entry_point=header["entry_point"],
        kind=header["entry_kind"],
        framework=header["framework"],
        policy=Policy(tuple(policy["allowed_imports"]), tuple(policy["forbidden"])),
        calls=calls,
        limits=SandboxLimits(**header["limits"]),
        outputs=tuple(header["outputs"]),
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
    values = _encode_outputs(outcome.outputs or (), arrays)
    gradients = outcome.gradients
    header = {
        "event": "finished",
        "call": outcome.call_id,
        "outputs": None if outcome.outputs is None else values,
        "error": None if outcome.error is None else dataclasses.asdict(outcome.error),
        "stdout": outcome.stdout,
        "duration_s": float(outcome.duration_s),
        "gradients": (
            None if gradients is None else encode_gradients(gradients, arrays, _encode_outputs)
        ),
    }
    return encode_frame(header, arrays)


def _encode_outputs(
    outputs: tuple[OutputValue, ...], arrays: list[np.ndarray]
) -> list[dict[str, Any]]:
    values = []
    for value in outputs:
        # An array whose dtype may not cross goes back as its description alone.
        sent = value.array is not None and value.array.dtype.name in ALLOWED_DTYPES
        if sent and value.array is not None:
            arrays.append(value.array)
        shape = None if value.shape is None else list(value.shape)
        values.append(
            {"type_name": value.type_name, "dtype": value.dtype, "shape": shape, "array": sent}
        )
    return values


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
        items = typed(header.get("violations"), list, "'violations'")
        if not 0 < len(items) <= _MAX_VIOLATIONS:
            raise ProtocolError(f"{len(items)} violations")
        return Rejected(tuple(_violation(typed(item, dict, "a violation")) for item in items))
    if kind == "violation":
        return Violated(_violation(header))
    raise ProtocolError(f"an unknown event {str(kind)[:40]!r}")


def _call(job: Job, header: dict[str, Any]) -> Call:
    call_id = parse_text(header, "call", MAX_NAME)
    for call in job.calls:
        if call.id == call_id:
            return call
    raise ProtocolError(f"an event for a call the job does not have: {call_id!r}")


def _violation(obj: dict[str, Any]) -> Violation:
    return Violation(message=parse_text(obj, "message", _MAX_MESSAGE), line=parse_line(obj))


def _decode_outcome(frame: Frame, job: Job) -> CallOutcome:
    header = frame.header
    call = _call(job, header)
    cap = call.max_output_elements
    arrays = iter(
        decode_arrays(frame, cap if call.backprop is None else max(cap, MAX_GRADIENT_ELEMENTS))
    )
    outputs = header.get("outputs")
    expected = call.output_count(job)
    if outputs is not None:
        outputs = _decode_outputs(typed(outputs, list, "'outputs'"), arrays, expected)
    gradients = decode_gradients(
        header.get("gradients"),
        call,
        arrays,
        lambda items, rest: _decode_outputs(items, rest, expected),
    )
    if next(arrays, None) is not None:
        raise ProtocolError("more arrays than outputs that claim one")
    error = header.get("error")
    if error is not None:
        error = _raised(typed(error, dict, "'error'"))
    if (outputs is None) == (error is None):
        raise ProtocolError("a finished call needs outputs or an error, not both")
    return CallOutcome(
        call_id=call.id,
        outputs=outputs,
        error=error,
        stdout=parse_text(header, "stdout", job.limits.stdout_chars + _STDOUT_SLACK),
        duration_s=parse_seconds(header.get("duration_s")),
        gradients=gradients,
    )


def _decode_outputs(
    items: list[Any], arrays: Iterator[np.ndarray], expected: int
) -> tuple[OutputValue, ...]:
    """At most the call's number of outputs; one describes a value that did not split into
    them, and none is only for a call that compares none."""
    if len(items) > max(expected, 1) or (expected and not items):
        raise ProtocolError(f"{len(items)} outputs for a call that expects {expected}")
    return tuple(_output(typed(item, dict, "an output"), arrays) for item in items)


def _output(obj: dict[str, Any], arrays: Iterator[np.ndarray]) -> OutputValue:
    dtype = parse_optional_text(obj, "dtype", MAX_NAME)
    shape = None if obj.get("shape") is None else parse_shape(obj["shape"])
    array = next(arrays, None) if typed(obj.get("array"), bool, "'array'") else None
    if obj["array"] and array is None:
        raise ProtocolError("an output claims an array the frame does not carry")
    if array is not None and (shape != array.shape or dtype not in _names_of(array.dtype)):
        raise ProtocolError(
            f"an output described as {dtype} {shape} carrying {array.dtype} {array.shape}"
        )
    return OutputValue(
        parse_text(obj, "type_name", MAX_NAME), array=array, dtype=dtype, shape=shape
    )


def _names_of(dtype: np.dtype[Any]) -> tuple[str, str]:
    # call_execution.describe_value names a tensor's dtype "torch.float32", an ndarray's "float32".
    return (dtype.name, f"torch.{dtype.name}")


def _raised(obj: dict[str, Any]) -> RaisedError:
    return RaisedError(
        type_name=parse_text(obj, "type_name", MAX_NAME),
        message=parse_text(obj, "message", _MAX_MESSAGE),
        line=parse_line(obj),
        contract=obj.get("contract") is True,
    )
