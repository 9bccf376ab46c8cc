"""Trainability judged on real gradient passes: modules written as students write them, run in
this process (`run_call`, the code the sandbox runs), judged against a small reference.

Each known way of breaking training gets its one code; each correct form that looks suspicious
(rounding, a max-subtracted softmax by hand, no_grad around a side computation) gets none.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pytest
import torch
from torch import nn

from grader.call_execution import describe_exception, run_call
from grader.catalog import Catalog
from grader.contract import (
    Backprop,
    Call,
    CallOutcome,
    Execution,
    Gradients,
    Job,
    ParameterGradient,
    Policy,
    Termination,
)
from grader.judge import judge
from grader.limits import SandboxLimits
from grader.plan import ExercisePlan
from grader.plan_building import build_plan
from grader.settings import GraderSettings
from grader.trainability import (
    FROZEN,
    GRADIENT_MISMATCH,
    NO_GRAPH,
    NOT_REGISTERED,
    UNEXPECTED_PARAMETERS,
    UNSTABLE,
    gradient_faults,
    stability_fault,
)
from grader.trainability_spec import TrainabilityCheck

DIM = 6
RNG = np.random.default_rng(7)
X = RNG.standard_normal((2, 5, DIM)).astype(np.float32)
COTANGENT = RNG.standard_normal((2, 5, DIM)).astype(np.float32)
CALL = Call(
    "t [gradients]", (X,), {"dim": DIM}, seed=0, backprop=Backprop((COTANGENT,), 0.05, (0,))
)
JOB = Job("", "Attention", "module", "torch", Policy(("torch",)), (CALL,), SandboxLimits())


class Attention(nn.Module):
    """The reference: one projection, self-attention with a softmax, rounded to 4 decimals."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.query = nn.Linear(dim, dim)
        self.value = nn.Linear(dim, dim)

    def scores(self, x: torch.Tensor) -> torch.Tensor:
        query: torch.Tensor = self.query(x)
        return query @ x.transpose(1, 2) / math.sqrt(x.shape[-1])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.round(torch.softmax(self.scores(x), dim=-1) @ self.value(x), decimals=4)


class RoundedByHand(Attention):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.round(torch.softmax(self.scores(x), dim=-1) @ self.value(x) * 10000) / 10000


class RoundedByMethod(Attention):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rounded: torch.Tensor = (torch.softmax(self.scores(x), dim=-1) @ self.value(x)).round(
            decimals=4
        )
        return rounded


class SoftmaxByHand(Attention):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scores = self.scores(x)
        with torch.no_grad():  # only a debug print: no value of the output comes from here
            print(scores.abs().max())
        exp = torch.exp(scores - scores.max(dim=-1, keepdim=True).values)
        return torch.round(exp / exp.sum(-1, keepdim=True) @ self.value(x), decimals=4)


class ChangesItsInputInPlace(Attention):
    """Correct, if careless: halves its input in place and doubles it back."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x /= 2.0
        x *= 2.0
        return super().forward(x)


class UnderNoGrad(Attention):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return super().forward(x)


class ThroughNumpy(Attention):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.from_numpy(super().forward(x).numpy())


class ValueDetached(Attention):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        value = x @ self.value.weight.data.T + self.value.bias.data
        return torch.round(torch.softmax(self.scores(x), dim=-1) @ value, decimals=4)


class LayersInAList(Attention):
    def __init__(self, dim: int) -> None:
        super().__init__(dim)
        self.layers = [self.query, self.value]
        del self.query, self.value

    def scores(self, x: torch.Tensor) -> torch.Tensor:
        query: torch.Tensor = self.layers[0](x)
        return query @ x.transpose(1, 2) / math.sqrt(x.shape[-1])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weights = torch.softmax(self.scores(x), dim=-1)
        return torch.round(weights @ self.layers[1](x), decimals=4)


class FrozenValue(Attention):
    def __init__(self, dim: int) -> None:
        super().__init__(dim)
        self.value.weight.requires_grad_(False)


class UnusedLayer(Attention):
    def __init__(self, dim: int) -> None:
        super().__init__(dim)
        self.output = nn.Linear(dim, dim)


class WrongBackward(torch.autograd.Function):
    """exp whose backward forgets to multiply by the incoming gradient's scale."""

    @staticmethod
    def forward(ctx: Any, scores: torch.Tensor) -> torch.Tensor:
        result = torch.exp(scores)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        (result,) = ctx.saved_tensors
        return torch.mul(result, grad.sign())


class CustomExp(Attention):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scores = self.scores(x)
        shifted = scores - scores.max(dim=-1, keepdim=True).values.detach()
        exp: torch.Tensor = WrongBackward.apply(shifted)  # type: ignore[no-untyped-call]
        return torch.round(exp / exp.sum(-1, keepdim=True) @ self.value(x), decimals=4)


class NaiveSoftmax(Attention):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        exp = torch.exp(self.scores(x))
        return torch.round(exp / exp.sum(-1, keepdim=True) @ self.value(x), decimals=4)


class ClampedSoftmax(Attention):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        exp = torch.exp(self.scores(x).clamp(max=10.0))
        return torch.round(exp / exp.sum(-1, keepdim=True) @ self.value(x), decimals=4)


def gradient_pass(entry: type[nn.Module]) -> CallOutcome:
    outputs, gradients = run_call(entry, CALL, JOB)
    return CallOutcome(CALL.id, outputs, gradients=gradients)


def expected() -> Gradients:
    gradients = gradient_pass(Attention).gradients
    assert gradients is not None
    return gradients


def codes(entry: type[nn.Module]) -> set[str | None]:
    try:
        outcome = gradient_pass(entry)
    except Exception as error:  # as run_calls reports it
        outcome = CallOutcome(CALL.id, None, describe_exception(error))
    faults = gradient_faults(expected(), outcome, by_name=False)
    assert faults is not None
    return {fault.code for fault in faults}


@pytest.mark.parametrize(
    "correct",
    [
        Attention,
        RoundedByHand,
        RoundedByMethod,
        SoftmaxByHand,
        NaiveSoftmax,
        ChangesItsInputInPlace,
    ],
)
def test_correct_forms_train_as_the_reference(correct: type[nn.Module]) -> None:
    assert codes(correct) == set()


@pytest.mark.parametrize(
    ("mistake", "code"),
    [
        (UnderNoGrad, NO_GRAPH),
        (ThroughNumpy, NO_GRAPH),
        (ValueDetached, NO_GRAPH),
        (LayersInAList, NOT_REGISTERED),
        (FrozenValue, FROZEN),
        (UnusedLayer, UNEXPECTED_PARAMETERS),
        (CustomExp, GRADIENT_MISMATCH),
    ],
)
def test_each_way_of_breaking_training_gets_its_code(mistake: type[nn.Module], code: str) -> None:
    assert codes(mistake) == {code}


def test_rounding_passes_gradients_straight_through() -> None:
    gradients = expected()
    assert gradients.graph
    first = gradients.inputs[0]
    assert first is not None and np.abs(first).max() > 0.01  # not round's zero gradient
    assert all(p.gradient is not None for p in gradients.parameters)


def test_one_step_moves_the_outputs() -> None:
    outputs, gradients = run_call(Attention, CALL, JOB)
    assert gradients is not None
    (before,), (after,) = outputs, gradients.stepped
    assert before.array is not None and after.array is not None
    assert np.abs(after.array - before.array).max() > 1e-3


def _gradients(input_gradient: np.ndarray, weight_gradient: np.ndarray) -> Gradients:
    weight = ParameterGradient("w", weight_gradient.shape, True, weight_gradient)
    return Gradients(True, (input_gradient,), (weight,))


def test_gradients_that_are_zero_in_theory_agree_as_float_noise() -> None:
    noise = np.full((3, 3), 1e-7, np.float32)
    reference = _gradients(noise, noise)
    submission = _gradients(-3 * noise, 2 * noise)
    outcome = CallOutcome("c", (), gradients=submission)
    assert gradient_faults(reference, outcome, by_name=True) == []


def test_large_gradients_agree_to_four_decimals_of_their_size() -> None:
    large = np.full((3, 3), 300.0, np.float32)
    reference = _gradients(large, large)
    submission = _gradients(large * (1 + 1e-6), large * (1 - 1e-6))
    outcome = CallOutcome("c", (), gradients=submission)
    assert gradient_faults(reference, outcome, by_name=True) == []
    wrong = _gradients(large * 1.01, large)
    faults = gradient_faults(reference, CallOutcome("c", (), gradients=wrong), by_name=True)
    assert [fault.code for fault in faults or ()] == [GRADIENT_MISMATCH]


def _scaled(entry: type[nn.Module], scale: float) -> CallOutcome:
    call = dataclasses.replace(CALL, backprop=None, args=(X * np.float32(scale),))
    outputs, _ = run_call(entry, call, JOB)
    return CallOutcome(call.id, outputs)


@pytest.mark.parametrize("mistake", [NaiveSoftmax, ClampedSoftmax])
def test_a_softmax_that_breaks_at_scale_is_unstable(mistake: type[nn.Module]) -> None:
    reference = _scaled(Attention, 30.0).outputs
    assert reference is not None
    fault = stability_fault(30.0, reference, _scaled(mistake, 30.0))
    assert fault is not None
    assert (fault.check, fault.code) == (TrainabilityCheck.STABILITY, UNSTABLE)


@pytest.mark.parametrize("correct", [Attention, SoftmaxByHand, RoundedByMethod])
def test_a_stable_softmax_holds_at_scale(correct: type[nn.Module]) -> None:
    reference = _scaled(Attention, 30.0).outputs
    assert reference is not None
    assert stability_fault(30.0, reference, _scaled(correct, 30.0)) is None


@pytest.fixture(scope="module")
def scored_plan() -> ExercisePlan:
    catalog = Catalog.from_folder(GraderSettings().exercises_dir)
    return build_plan(catalog.get("fused-qkv-attention"), secret="trainability")


def test_a_scored_check_whose_pass_never_ran_fails_its_test(scored_plan: ExercisePlan) -> None:
    """Right outputs, then the run ends before the gradient passes (a backward that never
    returns): the tests those passes belong to fail, and nothing is named."""
    shown = [test for test in scored_plan.tests if test.visible]
    outcomes = {test.call.id: CallOutcome(test.call.id, test.expected) for test in shown}
    stopped = Execution(Termination.TIMEOUT, outcomes, detail="used up its 10 s of CPU")
    report = judge(scored_plan, stopped)
    checked = {test.spec.name for test in shown if test.cases[0].gradients is not None}
    failed = {test.name: test.message for test in report.tests if test.status.value == "failed"}
    assert checked and checked <= failed.keys()
    assert all("gradient pass did not run" in failed[name] for name in checked)
    assert report.diagnosis == []


def test_a_frozen_only_weight_is_named_though_it_leaves_no_graph() -> None:
    """Token ids in and the one embedding frozen: the output has no graph at all, and the
    frozen weight is why (not a detach or no_grad)."""
    shape = (4, 3)
    weight = np.ones(shape, np.float32)
    wanted = Gradients(True, (None,), (ParameterGradient("embedding.weight", shape, True, weight),))
    frozen = Gradients(False, (None,), (ParameterGradient("embedding.weight", shape, False, None),))
    faults = gradient_faults(wanted, CallOutcome("t", (), gradients=frozen), by_name=True)
    assert faults is not None
    assert [fault.code for fault in faults] == [FROZEN, FROZEN]
