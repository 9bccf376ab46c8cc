"""The trainability part of a plan (`grader.trainability`): a case's gradient pass, and a
visible test's inputs scaled up, each with what the reference does on it."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from grader.contract import Backprop, Call, Gradients, OutputValue
from grader.inputs import draw_cotangents, drawn_positions, scaled
from grader.plan import Case, GradientCase, ScaledCase, make_job
from grader.reference import Reference
from grader.spec import Exercise, TestCaseSpec

# One SGD step moves the reference's most-changed weight by this much (the learning rate is
# chosen for each input set from the reference's gradients): enough to move the outputs well past
# the comparison's tolerance wherever a weight does not train, little enough that they stay in
# the range the forward was checked in, however large a test's gradients are.
LARGEST_STEP = 0.05
# Scores grow with the square of the inputs' scale: x10 overflows a softmax without its max
# subtracted on some tests, x30 on nearly all.
STABILITY_SCALES = (10.0, 30.0)


def gradient_case(
    exercise: Exercise,
    reference: Reference,
    test: TestCaseSpec,
    case: Case,
    seed: int,
) -> GradientCase | None:
    """The call's gradient pass with a cotangent drawn from the case's seed, and the
    reference's gradients; None where an output is not a floating array (nothing to
    differentiate)."""
    arrays = [output.array for output in case.expected]
    floating = [array for array in arrays if array is not None and array.dtype.kind == "f"]
    if len(floating) != len(arrays):
        return None
    cotangents, wrt = draw_cotangents(seed, tuple(floating)), drawn_positions(test)
    call = dataclasses.replace(
        case.call,
        id=f"{case.call.id} [gradients]",
        backprop=Backprop(cotangents, learning_rate=0.0, wrt=wrt),
        max_output_elements=_largest(case.expected),
    )
    job = make_job(exercise.spec, "", (call,))
    rate = _learning_rate(reference.backprop(call, job))
    call = dataclasses.replace(call, backprop=Backprop(cotangents, rate, wrt))
    return GradientCase(call, reference.backprop(call, job))


def _learning_rate(gradients: Gradients) -> float:
    """The rate at which one SGD step moves the reference's most-changed weight by
    `LARGEST_STEP` (by no more, where every gradient is under 1)."""
    largest = max(
        (
            float(np.abs(p.gradient).max(initial=0.0))
            for p in gradients.parameters
            if p.gradient is not None
        ),
        default=0.0,
    )
    return LARGEST_STEP / max(largest, 1.0)


def scaled_cases(
    exercise: Exercise, reference: Reference, test: TestCaseSpec, call: Call
) -> tuple[ScaledCase, ...]:
    """The call on its drawn inputs scaled by each of `STABILITY_SCALES`, where the reference's
    outputs stay finite (where they do not, there is nothing to hold a submission to)."""
    if not drawn_positions(test):
        return ()
    cases = []
    for scale in STABILITY_SCALES:
        scaled_call = dataclasses.replace(
            call, id=f"{call.id} [x{scale:g}]", args=scaled(test, call.args, scale)
        )
        expected = reference.run(scaled_call, make_job(exercise.spec, "", (scaled_call,)))
        scaled_call = dataclasses.replace(scaled_call, max_output_elements=_largest(expected))
        if all(_finite(output) for output in expected):
            cases.append(ScaledCase(scale, Case(scaled_call, expected)))
    return tuple(cases)


def _largest(outputs: tuple[OutputValue, ...]) -> int:
    """The elements of the reference's largest output: all a submission's output on the same
    call may send back (a larger one is a wrong shape, described, never sent)."""
    return max((math.prod(output.shape or ()) for output in outputs), default=1)


def _finite(output: OutputValue) -> bool:
    array = output.array
    return array is not None and (array.dtype.kind != "f" or bool(np.isfinite(array).all()))
