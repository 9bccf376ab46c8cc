"""Diagnosis: name the likely mistake behind a failing output.

Two sources of evidence, both computed from the submission's outputs on visible tests:
- known-wrong variants of the reference (the reference module's VARIANTS): a failing output that
  equals a variant's output to 4 decimals gets that variant's message;
- the weight probe: the submission rerun with the reference's weights loaded by name; if it then
  matches, the math is right and only the weights (their creation order) differ.

Every comparison is `compare`'s: type, shape and dtype against the trusted output (the
reference's or a variant's, whose shape may itself be wrong: "concatenated along the sequence")
before any per-element work, so the work is bounded by the trusted outputs' sizes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from grader.compare import compare
from grader.contract import CallOutcome, OutputValue
from grader.plan import WEIGHTS, ExercisePlan, TestPlan
from grader.report import Finding

WEIGHTS_CODE = "weights-differ"


@dataclass(frozen=True)
class _Cause:
    code: str
    message: str
    concepts: tuple[str, ...] = ()  # its own (an exported variant's); none: its code's


def diagnose(
    plan: ExercisePlan, failing: Sequence[TestPlan], outcomes: Mapping[str, CallOutcome]
) -> list[Finding]:
    """Findings for the failing visible tests, one per cause, naming the tests that show it."""
    evidence: dict[str, tuple[_Cause, list[str]]] = {}
    for test in failing:
        outcome = outcomes.get(test.call.id)
        if outcome is None or outcome.outputs is None:
            continue
        for cause in _causes(plan, test, outcome.outputs, outcomes):
            evidence.setdefault(cause.code, (cause, []))[1].append(test.spec.name)
    return [
        Finding(code=code, message=cause.message, tests=tests, concepts=list(cause.concepts))
        for code, (cause, tests) in evidence.items()
    ]


def _causes(
    plan: ExercisePlan,
    test: TestPlan,
    outputs: tuple[OutputValue, ...],
    outcomes: Mapping[str, CallOutcome],
) -> list[_Cause]:
    names = test.output_names
    causes = [
        _Cause(mistake.code, mistake.message, mistake.concepts)
        for mistake in plan.mistakes
        if _matches(outputs, mistake.outputs.get(test.spec.name), names)
    ]
    weight_message = plan.weight_probe_message
    for probe in test.probes:
        probed = outcomes.get(probe.call.id)
        if (
            weight_message is not None
            and probe.kind == WEIGHTS
            and probed is not None
            and _matches(probed.outputs, test.expected, names)
        ):
            causes.append(_Cause(WEIGHTS_CODE, weight_message))
    return causes


def _matches(
    actual: tuple[OutputValue, ...] | None,
    expected: tuple[OutputValue, ...] | None,
    names: tuple[str, ...],
) -> bool:
    if actual is None or expected is None or len(actual) != len(expected):
        return False
    pairs = zip(names, actual, expected, strict=True)
    return all(compare(name, got, want).passed for name, got, want in pairs)
