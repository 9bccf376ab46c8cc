"""Diagnosis: name the likely mistake behind a failing output.

Two sources of evidence, both computed from the submission's outputs on visible tests:
- known-wrong variants of the reference (the reference module's VARIANTS, and pairs of them
  made together, `grader.known_mistakes`): a failing output that agrees with a variant's output
  to 4 decimals wherever the variant's is defined, and is wrong there, gets its message;
- the weight probe: the submission rerun with the reference's weights loaded by name; if it then
  matches, the math is right and only the weights (their creation order) differ.

"Wherever defined": a variant that divides by zero somewhere (every key of a row masked with
-inf gives NaN) says nothing there, so a student's form of the same mistake that stays finite
there (a -1e9 fill gives a uniform row) still matches. The evidence is what the variant does
where it is defined, and it must show a mistake: agreeing with the variant only where it also
agrees with the reference names nothing, so a match is never NaN alone. A pair is considered on
a test only when no single known mistake explains it.

Every comparison is `compare`'s: type, shape and dtype against the trusted output (the
reference's or a variant's, whose shape may itself be wrong: "concatenated along the sequence")
before any per-element work, so the work is bounded by the trusted outputs' sizes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from grader.compare import Check, compare, compare_arrays
from grader.contract import CallOutcome, OutputValue
from grader.plan import WEIGHTS, ExercisePlan, KnownMistake, TestPlan
from grader.report import Finding

WEIGHTS_CODE = "weights-differ"
# What each finding of a pair says first, so that the two read as one explanation.
PAIR_LEAD = "Two mistakes at once, each named here. "


@dataclass(frozen=True)
class _Cause:
    code: str
    message: str
    concepts: tuple[str, ...] = ()  # its own (an exported variant's); none: its code's
    paired: bool = False  # half of two mistakes made together


def diagnose(
    plan: ExercisePlan, failing: Sequence[TestPlan], outcomes: Mapping[str, CallOutcome]
) -> list[Finding]:
    """Findings for the failing visible tests, one per cause, naming the tests that show it."""
    messages: dict[str, str] = {}
    concepts: dict[str, tuple[str, ...]] = {}
    tests: dict[str, list[str]] = {}
    for test in failing:
        outcome = outcomes.get(test.call.id)
        if outcome is None or outcome.outputs is None:
            continue
        for cause in _causes(plan, test, outcome.outputs, outcomes):
            # Where one test shows a mistake alone and another shows it in a pair, the pair's
            # words stand: they say the other finding is part of the explanation.
            if cause.paired or cause.code not in messages:
                messages[cause.code] = PAIR_LEAD + cause.message if cause.paired else cause.message
            concepts.setdefault(cause.code, cause.concepts)
            shown = tests.setdefault(cause.code, [])
            if test.spec.name not in shown:  # two forms of one mistake may both match
                shown.append(test.spec.name)
    return [
        Finding(code=code, message=messages[code], tests=tests[code], concepts=list(concepts[code]))
        for code in tests
    ]


def _causes(
    plan: ExercisePlan,
    test: TestPlan,
    outputs: tuple[OutputValue, ...],
    outcomes: Mapping[str, CallOutcome],
) -> list[_Cause]:
    """Each cause the test shows."""
    causes = [cause for mistake in _explaining(plan, test, outputs) for cause in _named(mistake)]
    weight_message = plan.weight_probe_message
    for probe in test.probes:
        probed = outcomes.get(probe.call.id)
        if (
            weight_message is not None
            and probe.kind == WEIGHTS
            and probed is not None
            and _matches(probed.outputs, test.expected, test.output_names)
        ):
            causes.append(_Cause(WEIGHTS_CODE, weight_message))
    return causes


def _named(mistake: KnownMistake) -> list[_Cause]:
    """A known mistake's causes, one per finding it names: its own, and its partner's where it
    is a pair (whose concepts are its code's)."""
    paired = mistake.partner is not None
    return [
        _Cause(code, message, mistake.concepts if code == mistake.code else (), paired)
        for code, message in mistake.findings
    ]


def _explaining(
    plan: ExercisePlan, test: TestPlan, outputs: tuple[OutputValue, ...]
) -> list[KnownMistake]:
    """The single known mistakes that explain the outputs, else the pairs that do."""

    def explains(mistake: KnownMistake) -> bool:
        wrong = mistake.outputs.get(test.spec.name)
        return wrong is not None and explained_by(outputs, wrong, test.expected, test.output_names)

    singles = [mistake for mistake in plan.mistakes if mistake.partner is None]
    pairs = [mistake for mistake in plan.mistakes if mistake.partner is not None]
    return [m for m in singles if explains(m)] or [m for m in pairs if explains(m)]


def explained_by(
    actual: tuple[OutputValue, ...],
    wrong: tuple[OutputValue, ...],
    right: tuple[OutputValue, ...],
    names: tuple[str, ...],
) -> bool:
    """Whether `actual` agrees with a variant's outputs (`wrong`) wherever they are defined,
    and differs there from the reference's (`right`) somewhere: evidence of that mistake."""
    if len(actual) != len(wrong):
        return False
    outputs = list(zip(names, actual, wrong, right, strict=True))
    return all(_agrees_where_defined(name, got, bad, bad) for name, got, bad, _ in outputs) and any(
        not _agrees_where_defined(name, got, good, bad) for name, got, bad, good in outputs
    )


def _agrees_where_defined(
    name: str, actual: OutputValue, expected: OutputValue, variant: OutputValue
) -> bool:
    """`actual` against `expected`, counting only where the variant's output is finite."""
    comparison = compare(name, actual, expected)
    if comparison.check not in (Check.VALUES, Check.NON_FINITE):
        return comparison.passed  # a match, or another type, shape or dtype: all or nothing
    assert actual.array is not None and expected.array is not None  # compared by value
    assert variant.array is not None  # a trusted output carries its array
    defined = np.isfinite(variant.array)
    return compare_arrays(name, actual.array[defined], expected.array[defined]).passed


def _matches(
    actual: tuple[OutputValue, ...] | None,
    expected: tuple[OutputValue, ...] | None,
    names: tuple[str, ...],
) -> bool:
    if actual is None or expected is None or len(actual) != len(expected):
        return False
    pairs = zip(names, actual, expected, strict=True)
    return all(compare(name, got, want).passed for name, got, want in pairs)
