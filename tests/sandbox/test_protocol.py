"""The bytes that cross the process boundary: round trips, and hostile frames from a child.

A hostile frame must end the run as a clean CRASHED (or OUTPUT_LIMIT) through `supervise`, never
as an exception: those tests drive the supervisor with a scripted child on a socket pair.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import socket
import struct
import threading
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from grader.contract import (
    Call,
    CallOutcome,
    Execution,
    Job,
    OutputValue,
    Policy,
    RaisedError,
    Step,
    Termination,
    Violation,
)
from grader.limits import SandboxLimits
from grader.sandbox.frames import (
    MAX_EVENT_HEADER,
    MAX_JOB_HEADER,
    Frame,
    FrameReader,
    OutputLimitExceeded,
    ProtocolError,
    encode_frame,
)
from grader.sandbox.protocol import (
    Event,
    Finished,
    Rejected,
    Started,
    Violated,
    decode_event,
    decode_job,
    encode_event,
    encode_job,
)
from grader.sandbox.supervision import ExitStatus, supervise
from grader.sandbox.transcript import Transcript

X = np.arange(6, dtype=np.float32).reshape(2, 3)
JOB = Job(
    source="class M: ...",
    entry_point="M",
    kind="module",
    framework="torch",
    policy=Policy(("torch", "math"), forbidden=("torch.nn.MultiheadAttention",)),
    calls=(
        Call("first", (X, X, None), {"d": 4, "scale": 0.5, "causal": True}, 7, {"w": X}),
        Call("second", (np.array(True), np.zeros((0, 3), np.int64)), strict_parameters=False),
        Call(
            "third",
            (),
            entry_point="helper",
            kind="function",
            steps=(
                Step("prefill", (X, 16), ("logits",)),
                Step("step", (2.5, False, None), ("loss", "norm"), grad=True),
            ),
            train=True,
        ),
    ),
    limits=SandboxLimits(cpu_s=2.5, wall_s=4.0, output_bytes=1 << 20, stdout_chars=100),
    outputs=("output", "attention"),
)
DTYPES = ["float16", "float32", "float64", "int32", "int64", "bool"]


def one_frame(data: bytes, max_header: int = MAX_EVENT_HEADER) -> Frame:
    frames = list(FrameReader(max_header, budget=1 << 30).feed(data))
    assert len(frames) == 1
    return frames[0]


def round_trip(event: Event, job: Job = JOB) -> Event:
    return decode_event(one_frame(encode_event(event)), job)


def outcome(call_id: str = "first", *values: OutputValue, stdout: str = "") -> CallOutcome:
    return CallOutcome(
        call_id,
        values or (OutputValue("Tensor", X, "torch.float32", (2, 3)),),
        stdout=stdout,
        duration_s=0.25,
    )


# --- round trips --------------------------------------------------------------------------------


def test_a_job_comes_back_whole_with_shared_arrays_still_shared() -> None:
    job = decode_job(one_frame(encode_job(JOB), MAX_JOB_HEADER))
    first, second, third = job.calls
    assert (third.entry_point, third.kind, third.train) == ("helper", "function", True)
    assert [(s.method, s.outputs, s.grad) for s in third.steps] == [
        ("prefill", ("logits",), False),
        ("step", ("loss", "norm"), True),
    ]
    assert third.steps[0].args[1] == 16 and type(third.steps[0].args[1]) is int
    assert third.steps[0].args[0] is first.args[0]  # one array, however many calls use it
    assert [type(arg) for arg in third.steps[1].args] == [float, bool, type(None)]
    assert first.args[0] is first.args[1] is first.parameters["w"]
    assert first.args[2] is None
    np.testing.assert_array_equal(first.args[0], X)
    assert first.args[0].flags.writeable and first.args[0].flags.aligned
    assert first.init_kwargs == {"d": 4, "scale": 0.5, "causal": True}
    assert type(first.init_kwargs["causal"]) is bool and type(first.init_kwargs["d"]) is int
    assert (first.seed, second.seed, second.strict_parameters) == (7, None, False)
    flag, empty = second.args
    assert isinstance(flag, np.ndarray) and flag.shape == () and flag.dtype == np.bool_
    assert isinstance(empty, np.ndarray) and empty.shape == (0, 3) and empty.dtype == np.int64
    assert (job.source, job.entry_point, job.kind, job.framework) == (
        JOB.source,
        JOB.entry_point,
        JOB.kind,
        JOB.framework,
    )
    assert (job.policy, job.limits, job.outputs) == (JOB.policy, JOB.limits, JOB.outputs)


def test_a_big_endian_or_strided_array_arrives_as_its_values() -> None:
    odd = np.arange(12, dtype=">f8").reshape(3, 4).T
    job = Job("", "f", "function", "numpy", Policy(()), (Call("c", (odd,)),), SandboxLimits())
    arrived = decode_job(one_frame(encode_job(job), MAX_JOB_HEADER)).calls[0].args[0]
    assert arrived is not None
    np.testing.assert_array_equal(arrived, odd)


def test_an_array_of_a_dtype_that_may_not_cross_is_refused_at_encoding() -> None:
    with pytest.raises(ValueError, match="cannot cross"):
        encode_frame({}, [np.array(["text"])])


@pytest.mark.parametrize(
    "event",
    [
        Rejected((Violation("importing `os` is not allowed", 1), Violation("no `eval`", None))),
        Started("second"),
        Violated(Violation("`torch.load` is not available", 3)),
        Finished(outcome(stdout="printed\n")),
        Finished(CallOutcome("first", None, RaisedError("ValueError", "bad", 12), "x", 0.5)),
        Finished(outcome("first", OutputValue("list of 2 Tensor"), OutputValue("NoneType"))),
        Finished(outcome("first", OutputValue("Tensor", None, "torch.complex64", (10**9,)))),
    ],
)
def test_each_event_comes_back_as_it_was_sent(event: Event) -> None:
    assert_same_event(round_trip(event), event)


def assert_same_event(got: Event, sent: Event) -> None:
    if not isinstance(sent, Finished):
        assert got == sent
        return
    assert isinstance(got, Finished)
    strip = [OutputValue(o.type_name, None, o.dtype, o.shape) for o in sent.outcome.outputs or ()]
    assert [
        OutputValue(o.type_name, None, o.dtype, o.shape) for o in got.outcome.outputs or ()
    ] == strip
    for value, original in zip(got.outcome.outputs or (), sent.outcome.outputs or (), strict=True):
        if original.array is None:
            assert value.array is None
        else:
            assert value.array is not None
            np.testing.assert_array_equal(value.array, original.array)
    assert (got.outcome.error, got.outcome.stdout, got.outcome.duration_s) == (
        sent.outcome.error,
        sent.outcome.stdout,
        sent.outcome.duration_s,
    )


@given(
    arrays=st.lists(
        hnp.arrays(
            dtype=st.sampled_from(DTYPES),
            shape=hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5),
        ),
        min_size=1,
        max_size=2,
    )
)
def test_arrays_of_any_allowed_dtype_and_shape_round_trip(arrays: list[np.ndarray]) -> None:
    values = [OutputValue("ndarray", a, a.dtype.name, a.shape) for a in arrays]
    got = round_trip(Finished(outcome("first", *values)))
    assert isinstance(got, Finished)
    for value, array in zip(got.outcome.outputs or (), arrays, strict=True):
        assert value.array is not None
        assert value.array.dtype == array.dtype and value.array.shape == array.shape
        np.testing.assert_array_equal(value.array, array)


def test_an_array_of_a_dtype_that_may_not_cross_goes_back_as_its_description() -> None:
    small = np.arange(3, dtype=np.uint8)
    got = round_trip(Finished(outcome("first", OutputValue("ndarray", small, "uint8", (3,)))))
    assert isinstance(got, Finished) and got.outcome.outputs is not None
    assert got.outcome.outputs[0] == OutputValue("ndarray", None, "uint8", (3,))


def test_frames_arrive_whole_however_the_stream_is_cut() -> None:
    data = encode_event(Started("first")) + encode_event(Finished(outcome()))
    reader = FrameReader(MAX_EVENT_HEADER, budget=len(data))
    frames = [frame for byte in range(len(data)) for frame in reader.feed(data[byte : byte + 1])]
    assert [type(decode_event(frame, JOB)) for frame in frames] == [Started, Finished]
    assert not reader.pending


def test_lone_surrogates_in_text_are_replaced() -> None:
    got = round_trip(Finished(outcome(stdout="a\ud800b")))
    assert isinstance(got, Finished) and got.outcome.stdout == "a?b"


# --- hostile frames -----------------------------------------------------------------------------


def frame(header: Any, payload: bytes = b"", raw_header: bytes | None = None) -> bytes:
    head = json.dumps(header).encode() if raw_header is None else raw_header
    return struct.pack(">II", len(head), len(payload)) + head + payload


def finished_header(**changes: Any) -> dict[str, Any]:
    value = {"type_name": "Tensor", "dtype": "torch.float32", "shape": [2, 3], "array": True}
    header = {
        "event": "finished",
        "call": "first",
        "error": None,
        "stdout": "",
        "duration_s": 0.1,
        "outputs": [value],
        "arrays": [{"dtype": "float32", "shape": [2, 3]}],
    }
    return header | changes


GOOD_PAYLOAD = X.tobytes()
HOSTILE_FRAMES = {
    "not JSON": frame(None, raw_header=b"\x80{not json"),
    "JSON that is not an object": frame([1, 2, 3]),
    "deeply nested JSON": frame(None, raw_header=b"[" * 100_000 + b"]" * 100_000),
    "NaN duration": frame(
        None,
        raw_header=json.dumps(finished_header(duration_s=float("nan"))).encode(),
        payload=GOOD_PAYLOAD,
    ),
    "unknown event": frame({"event": "pwned", "arrays": []}),
    "call the job does not have": frame({"event": "started", "call": "hidden", "arrays": []}),
    "bool for a line number": frame(
        {"event": "violation", "message": "m", "line": True, "arrays": []}
    ),
    "message too long": frame({"event": "violation", "message": "m" * 100_000, "arrays": []}),
    "stdout past the cap": frame(finished_header(stdout="x" * 5000), GOOD_PAYLOAD),
    "bad dtype": frame(
        finished_header(arrays=[{"dtype": "object", "shape": [2, 3]}]), GOOD_PAYLOAD
    ),
    "dtype with byte order": frame(
        finished_header(arrays=[{"dtype": ">f4", "shape": [2, 3]}]), GOOD_PAYLOAD
    ),
    "shape claiming more bytes than sent": frame(
        finished_header(arrays=[{"dtype": "float32", "shape": [2, 30]}]), GOOD_PAYLOAD
    ),
    "shape claiming fewer bytes than sent": frame(
        finished_header(arrays=[{"dtype": "float32", "shape": [1, 3]}]), GOOD_PAYLOAD
    ),
    "more elements than the call allows": frame(
        finished_header(arrays=[{"dtype": "bool", "shape": [1 << 23]}]), b""
    ),
    "no elements, but a dimension past the element cap": frame(
        finished_header(arrays=[{"dtype": "float32", "shape": [0, 1 << 61]}]), b""
    ),
    "negative dimension": frame(
        finished_header(arrays=[{"dtype": "float32", "shape": [-2, -3]}]), GOOD_PAYLOAD
    ),
    "description that differs from the array": frame(
        finished_header(
            outputs=[{"type_name": "Tensor", "dtype": "torch.float32", "shape": [6], "array": True}]
        ),
        GOOD_PAYLOAD,
    ),
    "array claimed and not sent": frame(finished_header(arrays=[]), b""),
    "array sent and not claimed": frame(
        finished_header(
            outputs=[{"type_name": "NoneType", "dtype": None, "shape": None, "array": False}]
        ),
        GOOD_PAYLOAD,
    ),
    "outputs and an error": frame(
        finished_header(error={"type_name": "E", "message": "m", "line": None}), GOOD_PAYLOAD
    ),
    "more outputs than the job returns": frame(
        finished_header(
            outputs=[{"type_name": "NoneType", "dtype": None, "shape": None, "array": False}] * 3,
            arrays=[],
        ),
        b"",
    ),
    "arrays in a started event": frame({"event": "started", "call": "first", "arrays": []}, b"x"),
    "finished before started": frame(finished_header(), GOOD_PAYLOAD),
    "calls out of order": frame({"event": "started", "call": "second", "arrays": []}),
    "oversized header": struct.pack(">II", MAX_EVENT_HEADER + 1, 0) + b"{}",
}


@pytest.mark.parametrize("name", HOSTILE_FRAMES)
def test_a_hostile_frame_is_a_protocol_error(name: str) -> None:
    transcript = Transcript(JOB)
    with pytest.raises(ProtocolError):
        for decoded in FrameReader(MAX_EVENT_HEADER, 1 << 30).feed(HOSTILE_FRAMES[name]):
            transcript.record(decode_event(decoded, JOB))


@pytest.mark.parametrize("name", HOSTILE_FRAMES)
def test_a_hostile_frame_ends_the_run_as_crashed(name: str) -> None:
    execution = run_scripted(HOSTILE_FRAMES[name])
    assert execution.termination is Termination.CRASHED
    assert "protocol" in execution.detail


def test_a_frame_cut_short_ends_the_run_as_crashed() -> None:
    execution = run_scripted(
        encode_event(Started("first")) + encode_event(Finished(outcome()))[:-5]
    )
    assert execution.termination is Termination.CRASHED
    assert execution.interrupted_call == "first"
    assert "before reporting every call" in execution.detail


def test_a_frame_past_the_output_cap_ends_the_run_as_output_limit() -> None:
    announced = struct.pack(">II", 100, JOB.limits.output_bytes)
    execution = run_scripted(encode_event(Started("first")) + announced)
    assert execution.termination is Termination.OUTPUT_LIMIT
    assert execution.interrupted_call == "first"


def test_the_output_cap_counts_every_byte() -> None:
    reader = FrameReader(MAX_EVENT_HEADER, budget=10)
    assert [f.header for f in reader.feed(frame(None, raw_header=b"{}"))] == [{}]
    with pytest.raises(OutputLimitExceeded):
        list(reader.feed(b"\0"))


def test_a_well_behaved_script_completes() -> None:
    second = CallOutcome("second", None, RaisedError("TypeError", "no", 2), duration_s=0.1)
    events: list[Event] = [
        Started("first"),
        Finished(outcome()),
        Started("second"),
        Finished(second),
        Started("third"),
        Finished(dataclasses.replace(second, call_id="third")),
    ]
    script = b"".join(encode_event(event) for event in events)
    execution = run_scripted(script)
    assert execution.termination is Termination.COMPLETED
    assert set(execution.outcomes) == {"first", "second", "third"}


class ScriptedChild:
    """A child that writes `script` on its channel, then exits cleanly."""

    def __init__(self, script: bytes) -> None:
        self.channel, self._peer = socket.socketpair()
        self._writer = threading.Thread(target=self._write, args=(script,))
        self._writer.start()

    def _write(self, script: bytes) -> None:
        with contextlib.suppress(OSError):  # the supervisor may stop listening at any byte
            self._peer.sendall(script)
            self._peer.shutdown(socket.SHUT_WR)  # EOF; the job can still be sent to us

    def kill(self) -> None:
        self._peer.shutdown(socket.SHUT_RDWR)

    def wait(self, timeout: float) -> ExitStatus | None:
        return ExitStatus(wait_status=0, cpu_s=0.01)

    def cpu_wait_s(self) -> float | None:
        return 0.0

    def close(self) -> None:
        self.kill()
        self._writer.join()
        self._peer.close()
        self.channel.close()


def run_scripted(script: bytes) -> Execution:
    child = ScriptedChild(script)
    try:
        return supervise(child, JOB)
    finally:
        child.close()
