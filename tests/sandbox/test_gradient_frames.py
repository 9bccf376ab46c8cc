"""A gradient pass's findings cross the process boundary whole, and a child that lies about them
is a protocol error, never a stray exception or an array of a shape nobody asked for."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

from grader.contract import (
    Backprop,
    Call,
    CallOutcome,
    Gradients,
    Job,
    OutputValue,
    ParameterGradient,
    Policy,
)
from grader.limits import SandboxLimits
from grader.sandbox.frames import MAX_EVENT_HEADER, FrameReader, ProtocolError, encode_frame
from grader.sandbox.gradient_frames import MAX_PARAMETERS
from grader.sandbox.protocol import Finished, decode_event, encode_event

X = np.arange(6, dtype=np.float32).reshape(2, 3)
MASK = np.zeros((3, 3), np.float32)
BACKPROP = Backprop((X,), learning_rate=0.05, wrt=(0,))
CALL = Call("first [gradients]", (X, MASK), backprop=BACKPROP)
JOB = Job("", "M", "module", "torch", Policy(("torch",)), (CALL,), SandboxLimits())
OUTPUT = OutputValue("Tensor", X, "torch.float32", (2, 3))
GRADIENTS = Gradients(
    graph=True,
    inputs=(X * 2, None),
    parameters=(
        ParameterGradient("proj.weight", (3, 3), True, np.eye(3, dtype=np.float32)),
        ParameterGradient("proj.bias", (3,), False, None),
    ),
    stepped=(OUTPUT,),
)


def decode(data: bytes, job: Job = JOB) -> CallOutcome:
    frames = list(FrameReader(MAX_EVENT_HEADER, budget=1 << 30).feed(data))
    event = decode_event(frames[0], job)
    assert isinstance(event, Finished)
    return event.outcome


def test_gradients_come_back_as_they_were_sent() -> None:
    got = decode(encode_event(Finished(CallOutcome(CALL.id, (OUTPUT,), gradients=GRADIENTS))))
    gradients = got.gradients
    assert gradients is not None and gradients.graph
    first, second = gradients.inputs
    assert first is not None and second is None
    np.testing.assert_array_equal(first, X * 2)
    weight, bias = gradients.parameters
    assert (weight.name, weight.shape, weight.trainable) == ("proj.weight", (3, 3), True)
    assert weight.gradient is not None
    np.testing.assert_array_equal(weight.gradient, np.eye(3))
    assert (bias.name, bias.trainable, bias.gradient) == ("proj.bias", False, None)
    (stepped,) = gradients.stepped
    assert stepped.array is not None
    np.testing.assert_array_equal(stepped.array, X)


def test_a_function_has_nothing_after_its_step() -> None:
    bare = Gradients(graph=False, inputs=(None, None))
    got = decode(encode_event(Finished(CallOutcome(CALL.id, (OUTPUT,), gradients=bare))))
    assert got.gradients == bare


def _frame(gradients: dict[str, Any], arrays: list[np.ndarray]) -> bytes:
    output = {"type_name": "Tensor", "dtype": "torch.float32", "shape": [2, 3], "array": True}
    header = {
        "event": "finished",
        "call": CALL.id,
        "error": None,
        "stdout": "",
        "duration_s": 0.1,
        "outputs": [output],
        "gradients": gradients,
    }
    return encode_frame(header, [X, *arrays])


def _gradients(**changes: Any) -> dict[str, Any]:
    return {"graph": True, "inputs": [True, False], "parameters": [], "stepped": []} | changes


PARAMETER = {"name": "w", "shape": [2, 3], "trainable": True, "gradient": True}
HOSTILE: dict[str, tuple[dict[str, Any], list[np.ndarray]]] = {
    "an input gradient of another shape": (_gradients(), [np.zeros((3, 2), np.float32)]),
    "a gradient for the mask, which is never differentiated": (
        _gradients(inputs=[True, True]),
        [X, np.zeros((3, 3), np.float32)],
    ),
    "fewer input gradients than arguments": (_gradients(inputs=[True]), [X]),
    "a gradient claimed and not sent": (_gradients(), []),
    "an integer gradient": (_gradients(), [np.zeros((2, 3), np.int64)]),
    "a parameter gradient of another shape than it claims": (
        _gradients(inputs=[False, False], parameters=[PARAMETER]),
        [np.zeros((3, 3), np.float32)],
    ),
    "a flag that is not a bool": (_gradients(graph=1), [X]),
    "more parameters than any module has": (
        _gradients(
            inputs=[False, False],
            parameters=[PARAMETER | {"gradient": False}] * (MAX_PARAMETERS + 1),
        ),
        [],
    ),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_a_lying_gradient_frame_is_a_protocol_error(name: str) -> None:
    gradients, arrays = HOSTILE[name]
    with pytest.raises(ProtocolError):
        decode(_frame(gradients, arrays))


def test_gradients_for_a_call_that_asked_for_none_are_a_protocol_error() -> None:
    forward_only = dataclasses.replace(CALL, backprop=None)
    job = dataclasses.replace(JOB, calls=(forward_only,))
    with pytest.raises(ProtocolError, match="asked for none"):
        decode(_frame(_gradients(), [X]), job)
