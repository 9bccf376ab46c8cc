"""Text from the child can always be stored: NUL, which PostgreSQL's jsonb refuses, is replaced
wherever a child's text arrives; the rest (escape sequences included) arrives as sent, for each
rendering to make inert."""

from __future__ import annotations

import numpy as np

from grader.contract import (
    Call,
    CallOutcome,
    Job,
    OutputValue,
    Policy,
    RaisedError,
    Violation,
)
from grader.limits import SandboxLimits
from grader.sandbox.frames import MAX_EVENT_HEADER, FrameReader
from grader.sandbox.protocol import Event, Finished, Rejected, Violated, decode_event, encode_event
from grader.text import REPLACEMENT

JOB = Job("", "f", "function", "torch", Policy(()), (Call("first", ()),), SandboxLimits())
NUL = "a\x00b"
STORED = f"a{REPLACEMENT}b"


def round_trip(event: Event) -> Event:
    (frame,) = FrameReader(MAX_EVENT_HEADER, budget=1 << 30).feed(encode_event(event))
    return decode_event(frame, JOB)


def test_nul_in_printed_output_is_replaced_and_escapes_arrive_as_sent() -> None:
    out = OutputValue("Tensor", np.zeros(1, np.float32), "torch.float32", (1,))
    sent = CallOutcome("first", (out,), stdout=f"{NUL}\x1b[2J\u202e", duration_s=0.1)
    got = round_trip(Finished(sent))
    assert isinstance(got, Finished) and got.outcome.stdout == f"{STORED}\x1b[2J\u202e"


def test_nul_in_an_error_message_is_replaced() -> None:
    sent = CallOutcome("first", None, RaisedError("ValueError", NUL), duration_s=0.1)
    got = round_trip(Finished(sent))
    assert isinstance(got, Finished) and got.outcome.error is not None
    assert got.outcome.error.message == STORED


def test_nul_in_violation_messages_is_replaced() -> None:
    assert round_trip(Violated(Violation(NUL))) == Violated(Violation(STORED))
    assert round_trip(Rejected((Violation(NUL, line=3),))) == Rejected((Violation(STORED, 3),))
