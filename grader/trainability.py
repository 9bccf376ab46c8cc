"""Trainability: does the submission learn as the reference does, not only compute its numbers?

Judged in the trusted process from a case's gradient pass (`grader.backprop`) and a visible
test's inputs scaled up (`grader.trainability_plan`), against the reference's, and only where
the test's own outputs already match (else the forward is the mistake to fix first). Each fault
belongs to one check of `grader.trainability_spec.TrainabilityCheck` and carries one of the
codes below, with what is wrong and how to fix it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from grader.compare import Check, Comparison, compare, compare_arrays
from grader.contract import CallOutcome, Gradients, OutputValue, ParameterGradient
from grader.trainability_spec import GRADIENT_PASS, TrainabilityCheck

NO_GRAPH = "no-autograd-graph"
NOT_REGISTERED = "parameters-not-registered"
UNEXPECTED_PARAMETERS = "unexpected-parameters"
FROZEN = "frozen-parameters"
GRADIENT_MISMATCH = "gradient-mismatch"
UNSTABLE = "numerically-unstable"
# The codes each check can give; the step's parameter codes only where there are parameters.
_CODES = {
    TrainabilityCheck.GRADIENTS: frozenset({NO_GRAPH, GRADIENT_MISMATCH}),
    TrainabilityCheck.OPTIMIZER_STEP: frozenset({NOT_REGISTERED, UNEXPECTED_PARAMETERS, FROZEN}),
    TrainabilityCheck.STABILITY: frozenset({UNSTABLE}),
}
TRAINABILITY_CODES = frozenset().union(*_CODES.values())


def codes_of(checks: Iterable[TrainabilityCheck], *, module: bool) -> frozenset[str]:
    """The codes an exercise with these checks can give (a function has no parameters)."""
    codes = frozenset[str]().union(*(_CODES[check] for check in checks))
    return codes if module else codes - _CODES[TrainabilityCheck.OPTIMIZER_STEP]


# Scaled inputs are held to 1% of the reference's largest output: float32 rounding grows with
# the scale, a wrong or non-finite softmax is off by the output's own size.
_STABILITY_SLACK = 100.0

_DETACHED = (
    "torch.no_grad(), .detach(), .data, or a value rebuilt from .numpy(), .tolist() or .item() "
    "cuts the autograd graph; compute with torch operations on the tensors themselves"
)


@dataclass(frozen=True)
class Fault:
    check: TrainabilityCheck
    code: str | None  # None: the run stopped before the check's call finished
    message: str


def gradient_faults(
    expected: Gradients, outcome: CallOutcome | None, *, by_name: bool
) -> list[Fault] | None:
    """What keeps the submission's gradient pass from being the reference's; None where it
    cannot be judged (the run stopped before it, or sent nothing)."""
    if outcome is None:
        return None
    if outcome.error is not None:
        error = outcome.error
        message = (
            f"with gradients on, your forward raised {error.type_name}: {error.message}; "
            + _DETACHED
        )
        return _both_checks(NO_GRAPH, message)
    actual = outcome.gradients
    if actual is None:
        return None
    if expected.graph and not actual.graph:
        # Frozen weights leave no graph where nothing else requires grad (token ids in): they
        # are the cause to name.
        cause = next(_registration_faults(expected.parameters, actual.parameters), None)
        if cause is not None and cause.code is not None:
            return _both_checks(cause.code, cause.message)
        return _both_checks(NO_GRAPH, f"your output carries no autograd graph: {_DETACHED}")
    faults = [
        *_registration_faults(expected.parameters, actual.parameters),
        *_gradient_faults(expected, actual, by_name=by_name),
    ]
    return faults + _step_faults(expected.stepped, actual.stepped, faults)


def _both_checks(code: str, message: str) -> list[Fault]:
    """A fault that leaves nothing to train: neither check of the gradient pass can hold."""
    return [Fault(check, code, message) for check in GRADIENT_PASS]


def _registration_faults(
    expected: Sequence[ParameterGradient], actual: Sequence[ParameterGradient]
) -> Iterator[Fault]:
    """Weights the optimizer cannot see or move: counted in elements, so that a correct module
    that stacks the reference's weights into fewer tensors has the same count."""
    wanted = _elements(p for p in expected if p.trainable)
    trainable = _elements(p for p in actual if p.trainable)
    frozen = [p.name for p in actual if not p.trainable]
    step = TrainabilityCheck.OPTIMIZER_STEP
    held = f"your module's parameters hold {trainable} trainable values, the reference's {wanted}"
    if trainable < wanted and frozen:
        yield Fault(
            step,
            FROZEN,
            f"{_names(frozen)} {_is(frozen)} frozen (requires_grad=False): no optimizer will "
            "change them; leave requires_grad at its default on the weights the statement names",
        )
    elif trainable < wanted:
        yield Fault(
            step,
            NOT_REGISTERED,
            f"{held}: weights kept in a plain list or dict, as plain tensors, or made in forward "
            "are invisible to module.parameters() and to every optimizer; use nn.ModuleList, "
            "nn.ModuleDict, nn.Parameter, and make them in __init__",
        )
    elif trainable > wanted:
        yield Fault(
            step,
            UNEXPECTED_PARAMETERS,
            f"{held}: remove the layers or parameters the exercise does not ask for (an unused "
            "layer gets no gradient)",
        )


def _gradient_faults(expected: Gradients, actual: Gradients, *, by_name: bool) -> Iterator[Fault]:
    check = TrainabilityCheck.GRADIENTS
    unreached = [p.name for p in actual.parameters if p.trainable and p.gradient is None]
    reached = _elements(p for p in expected.parameters if p.gradient is not None)
    if unreached and _elements(p for p in actual.parameters if p.gradient is not None) < reached:
        yield Fault(check, NO_GRAPH, f"your output does not reach {_names(unreached)}: {_DETACHED}")
        return
    for position, (want, got) in enumerate(zip(expected.inputs, actual.inputs, strict=False)):
        if want is None:
            continue
        what = f"the gradient with respect to input {position}"
        if got is None:
            yield Fault(check, NO_GRAPH, f"no gradient reaches input {position}: {_DETACHED}")
            return
        failure = _gradient_failure(what, got, want)
        if failure is not None:
            yield Fault(check, GRADIENT_MISMATCH, failure)
            return
    for want_p, got_p in _paired(expected.parameters, actual.parameters, by_name=by_name):
        if want_p.gradient is None or got_p.gradient is None:
            continue
        failure = _gradient_failure(
            f"the gradient of {got_p.name}", got_p.gradient, want_p.gradient
        )
        if failure is not None:
            yield Fault(check, GRADIENT_MISMATCH, failure)
            return


def _gradient_failure(what: str, actual: np.ndarray, expected: np.ndarray) -> str | None:
    """Gradients agree to the exercise's 4 decimals once divided by the larger of 1 and the
    reference's largest gradient: an absolute floor where gradients are zero in theory (float
    noise near 1e-7 in both programs), relative where a sum over a batch makes them large."""
    comparison = _scaled_comparison(what, actual, expected, slack=1.0)
    if comparison.passed:
        return None
    return (
        f"your outputs match the reference's but {what} does not ({_count(comparison)}): a custom "
        "autograd.Function's backward, or a part of the computation detached from the graph, "
        "gives the wrong gradient"
    )


def _step_faults(
    expected: tuple[OutputValue, ...], actual: tuple[OutputValue, ...], found: list[Fault]
) -> list[Fault]:
    """One SGD step must move the outputs as it moves the reference's. Where a fault found above
    explains why not, it is that fault's code."""
    if not expected or _stepped_agree(actual, expected):
        return []
    cause = (
        found[0] if found else Fault(TrainabilityCheck.OPTIMIZER_STEP, GRADIENT_MISMATCH, _UNSEEN)
    )
    return [Fault(TrainabilityCheck.OPTIMIZER_STEP, cause.code, cause.message)]


_UNSEEN = (
    "after one SGD step on module.parameters() your outputs moved differently from the "
    "reference's: a weight your forward uses is not the one the optimizer updates (a copy made "
    "in __init__), or a gradient differs where it could not be compared"
)


def stability_fault(
    scale: float, expected: tuple[OutputValue, ...], outcome: CallOutcome | None
) -> Fault | None:
    """The submission on inputs scaled by `scale`, where the reference stays finite."""
    check = TrainabilityCheck.STABILITY
    if outcome is None:
        return None
    fix = (
        "subtract each row's maximum before exp (or use torch.softmax / logsumexp), and avoid "
        "clamping, which keeps values finite but wrong"
    )
    if outcome.error is not None:
        message = f"with the inputs x{scale:g}, your code raised {outcome.error.type_name}: {fix}"
        return Fault(check, UNSTABLE, message)
    for got, want in zip(outcome.outputs or (), expected, strict=False):
        comparison = _relative_comparison(got, want, slack=_STABILITY_SLACK)
        if not comparison.passed:
            message = (
                f"with the inputs x{scale:g} your output is far from the reference's, which "
                f"stays finite ({_count(comparison)}): {fix}"
            )
            return Fault(check, UNSTABLE, message)
    return None


def _relative_comparison(actual: OutputValue, expected: OutputValue, *, slack: float) -> Comparison:
    """An output against the reference's, to `slack` times 4 decimals of its largest value."""
    first = compare("output", actual, expected)
    if first.passed or actual.array is None or expected.array is None:
        return first
    return _scaled_comparison("output", actual.array, expected.array, slack=slack)


def _scaled_comparison(
    name: str, actual: np.ndarray, expected: np.ndarray, *, slack: float
) -> Comparison:
    """`compare_arrays` on both arrays divided by `slack` times the larger of 1 and the
    reference's largest magnitude."""
    if actual.shape != expected.shape:
        return compare_arrays(name, actual, expected)
    with np.errstate(all="ignore"):
        largest = float(np.abs(expected).max(initial=0.0))
        scale = slack * max(1.0, largest)
        # Within half a unit of the 4th decimal everywhere agrees whatever the rounding: one
        # pass decides the common case (a parameter's gradient has millions of values).
        gap = np.abs(actual - expected).max(initial=0.0)
        if np.isfinite(gap) and gap < 0.5e-4 * scale:
            return Comparison(Check.MATCH, f"`{name}` matches")
        return compare_arrays(name, actual.astype(np.float64) / scale, expected / scale)


def _stepped_agree(actual: tuple[OutputValue, ...], expected: tuple[OutputValue, ...]) -> bool:
    """The outputs after the step, to 4 decimals of the reference's largest (float error in a
    gradient summed over a large batch moves them by more than 1e-4 where they are large)."""
    return len(actual) == len(expected) and all(
        _relative_comparison(got, want, slack=1.0).passed
        for got, want in zip(actual, expected, strict=True)
    )


def _paired(
    expected: Sequence[ParameterGradient], actual: Sequence[ParameterGradient], *, by_name: bool
) -> list[tuple[ParameterGradient, ParameterGradient]]:
    """Each submission parameter with the reference's it stands for: by name where the grader
    loads the weights by name, else by registration order (the order a constructor that seeds
    itself creates them in) where every shape agrees; none where the layouts differ (the SGD
    step still judges them whole)."""
    if by_name:
        own = {p.name: p for p in actual}
        return [(p, own[p.name]) for p in expected if p.name in own]
    if [p.shape for p in expected] != [p.shape for p in actual]:
        return []
    return list(zip(expected, actual, strict=True))


def _elements(parameters: Iterator[ParameterGradient] | Sequence[ParameterGradient]) -> int:
    return sum(math.prod(p.shape) for p in parameters)


def _count(comparison: Comparison) -> str:
    if comparison.mismatch_count:
        return f"{comparison.mismatch_count} values differ"
    return comparison.message


def _names(names: Sequence[str]) -> str:
    shown = ", ".join(names[:3])
    return shown if len(names) <= 3 else f"{shown} and {len(names) - 3} more"


def _is(names: Sequence[str]) -> str:
    return "is" if len(names) == 1 else "are"
