"""A failed report's behaviour (`grader.report.Behaviour`): what its outputs do on the visible
tests, whatever its mistake, so that staff can group the wrong answers no known mistake explains
and name a group once.

Its key is equal for submissions whose outputs behave alike: a hash of the facts (how each
output differs from the reference's, `grader.output_facts`), the failing visible tests and the
broken properties. Hidden tests never enter it, so neither the key nor the facts can tell a
hidden input, output or verdict: only the visible tests' outcomes, the plan's expected outputs
for them and the properties (judged on visible tests) do.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from grader.compare import agreement, shortest
from grader.contract import CallOutcome, OutputValue
from grader.output_facts import output_facts, plain_label
from grader.plan import ExercisePlan, TestPlan
from grader.report import (
    Behaviour,
    OutputExcerpt,
    PropertyStatus,
    Report,
    ReportStatus,
    TestResult,
    TestStatus,
)
from grader.spec import Visibility

KEY_LENGTH = 16
# Values of the reference's outputs described in one report, at most (about a second's work):
# outputs past it are said to differ, no more. Sizes are the plan's, so where the bound falls is
# the same for every submission.
VALUES_BUDGET = 1_000_000
EXCERPT_VALUES = 8
ALL_VISIBLE_PASS = "passes every visible test"
_OUTPUTS_MATCH = "its outputs match the reference's"  # failed on how it trains
_STOPPED = {
    TestStatus.TIMEOUT: "runs out of time",
    TestStatus.RESOURCE_LIMIT: "runs out of memory or output",
    TestStatus.ERROR: "crashes",
}


def with_behaviour(
    report: Report, plan: ExercisePlan, outcomes: Mapping[str, CallOutcome]
) -> Report:
    """The report of a visible run that was not refused (`outcomes`: its own), with its
    behaviour where it failed; else as it is. A run that stopped before its first test has one
    too (it runs out of time, it crashes): staff group those as well."""
    shown = [test for test in plan.tests if test.visible]
    if report.status is not ReportStatus.FAILED:
        return report
    return report.model_copy(update={"behaviour": behaviour(shown, report, outcomes)})


def behaviour(
    shown: Sequence[TestPlan], report: Report, outcomes: Mapping[str, CallOutcome]
) -> Behaviour:
    """The behaviour of a report's visible tests, `shown`, from their outcomes."""
    results = {
        result.name: result for result in report.tests if result.visibility is Visibility.VISIBLE
    }
    failing = [test for test in shown if results[test.spec.name].status is not TestStatus.PASSED]
    budget = _Budget(VALUES_BUDGET)
    facts = sorted(
        {
            fact
            for test in failing
            for fact in _test_facts(
                test, results[test.spec.name], outcomes.get(test.call.id), budget
            )
        }
    ) or [ALL_VISIBLE_PASS]
    names = [test.spec.name for test in failing]
    broken = [check.name for check in report.properties if check.status is PropertyStatus.FAILED]
    return Behaviour(
        key=behaviour_key(facts, names, broken),
        facts=facts,
        failing_tests=names,
        broken_properties=broken,
        excerpts=_first_excerpt(failing, results, outcomes),
    )


def behaviour_key(facts: list[str], failing: list[str], broken: list[str]) -> str:
    """A stable hash of what a behaviour is made of, whatever order each list is in."""
    made_of = json.dumps([sorted(facts), sorted(failing), sorted(broken)])
    return hashlib.sha256(made_of.encode()).hexdigest()[:KEY_LENGTH]


@dataclass
class _Budget:
    values_left: int

    def take(self, output: OutputValue) -> bool:
        """Whether the values of this output of the reference's are still to be described."""
        size = 0 if output.array is None else output.array.size
        if size > self.values_left:
            return False
        self.values_left -= size
        return True


def _test_facts(
    test: TestPlan, result: TestResult, outcome: CallOutcome | None, budget: _Budget
) -> list[str]:
    if outcome is None:  # the run stopped before it
        return [_STOPPED.get(result.status, "stops before this test")]
    if outcome.error is not None:
        error = outcome.error
        return [
            "does not fit the exercise"
            if error.contract
            else f"raises {plain_label(error.type_name)}"
        ]
    outputs = outcome.outputs or ()
    if len(outputs) != len(test.expected):
        got = "None" if [o.type_name for o in outputs] == ["NoneType"] else f"{len(outputs)} values"
        return [f"returns {got}, not {len(test.expected)} values"]
    facts = [
        f"{name}: {fact}"
        for name, got, want, decimals in _failing_outputs(test, result, outputs)
        for fact in output_facts(got, want, decimals, test.spec.init, budget.take(want))
    ]
    return facts or [_OUTPUTS_MATCH]


def _failing_outputs(
    test: TestPlan, result: TestResult, outputs: tuple[OutputValue, ...]
) -> Iterator[tuple[str, OutputValue, OutputValue, int]]:
    """Each output the judge found wrong on this test, with the reference's and its decimals."""
    wrong = {check.name for check in result.outputs if not check.passed}
    rows = zip(test.output_names, outputs, test.expected, test.decimals, strict=True)
    return ((name, got, want, places) for name, got, want, places in rows if name in wrong)


def _first_excerpt(
    failing: Sequence[TestPlan],
    results: Mapping[str, TestResult],
    outcomes: Mapping[str, CallOutcome],
) -> list[OutputExcerpt]:
    """A few values of the first failing output whose values can be shown beside the
    reference's: of the reference's shape, finite where shown."""
    for test in failing:
        outcome = outcomes.get(test.call.id)
        if outcome is None or outcome.outputs is None:
            continue
        if len(outcome.outputs) != len(test.expected):
            continue
        for name, got, want, decimals in _failing_outputs(
            test, results[test.spec.name], outcome.outputs
        ):
            excerpt = _excerpt(test, name, got, want, decimals)
            if excerpt is not None:
                return [excerpt]
    return []


def _excerpt(
    test: TestPlan, name: str, got: OutputValue, want: OutputValue, decimals: int
) -> OutputExcerpt | None:
    """Up to EXCERPT_VALUES values of the row of the first mismatch, from a multiple of that
    many before it."""
    mine, theirs = got.array, want.array
    if mine is None or theirs is None or mine.shape != theirs.shape or not mine.size:
        return None
    wrong = ~agreement(mine, theirs, decimals).reshape(-1)
    width = mine.shape[-1] if mine.ndim else 1
    row, column = divmod(int(np.argmax(wrong)), width)
    start = column // EXCERPT_VALUES * EXCERPT_VALUES
    values = slice(row * width + start, row * width + min(start + EXCERPT_VALUES, width))
    shown_mine = mine.reshape(-1)[values].astype(np.float64)
    shown_theirs = theirs.reshape(-1)[values].astype(np.float64)
    index = [*(int(i) for i in np.unravel_index(row, mine.shape[:-1])), start] if mine.ndim else []
    if not (np.isfinite(shown_mine).all() and np.isfinite(shown_theirs).all()):
        return None  # JSON has no NaN: the facts say it
    return OutputExcerpt(
        test=test.spec.name,
        output=name,
        index=index,
        expected=[shortest(value, theirs.dtype) for value in shown_theirs.tolist()],
        actual=[shortest(value, theirs.dtype) for value in shown_mine.tolist()],
    )
