"""Turn what came back from the sandbox into a report: a verdict per test, then diagnosis.

Runs in the trusted process. A hidden test tells the student one bit, passed or not: nothing
computed from its run (its error, duration, termination, output or prints) reaches the report,
and diagnosis and properties are judged on visible tests only.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from grader.behaviour import with_behaviour
from grader.compare import Comparison, compare_outputs
from grader.contract import CallOutcome, Execution, RaisedError, Termination
from grader.diagnosis import diagnose
from grader.finding_concepts import tagged
from grader.first_submission import plain_findings
from grader.hidden_verdicts import HiddenRun, bare_result, judge_hidden
from grader.mistake_properties import explained_by
from grader.plan import ExercisePlan, TestPlan
from grader.property_checks import check_properties
from grader.refusal import refusal_message, refused_test_message
from grader.report import (
    Finding,
    MismatchDetail,
    OutputCheck,
    PropertyCheck,
    PropertyStatus,
    Report,
    ReportStatus,
    TestResult,
    TestStatus,
)
from grader.spec import Visibility
from grader.stopped_run import not_run_message, stop_reason, stopped_at
from grader.trainability_report import Trainability, held_to_training, judge_trainability

# Each step of judging is bounded by the output cap and vectorised; this bounds their sum for
# one submission, so that no output, however built, holds a grading slot for long. Past it the
# report still has every test's verdict, without the extras.
FEEDBACK_BUDGET_S = 5.0
# The diagnosis of a submission the policy refused.
NOT_ALLOWED_CODE = "not-allowed"
_OUT_OF_TIME = "judging your outputs took longer than the grader allows"

# A run the machine starved of CPU, even when run again (grader.runner), is the platform's fault:
# an error report, which counts against nobody (no attempt used up, no score posted).
_OVERLOADED = "the machine was too busy to run your code, even after a few tries; submit it again"
_STATUS_OF_TERMINATION = {
    Termination.TIMEOUT: TestStatus.TIMEOUT,
    Termination.MEMORY: TestStatus.RESOURCE_LIMIT,
    Termination.OUTPUT_LIMIT: TestStatus.RESOURCE_LIMIT,
    Termination.CRASHED: TestStatus.ERROR,
    Termination.COMPLETED: TestStatus.ERROR,
}


@dataclass(frozen=True)
class _Stop:
    """Where the visible run stopped, if before its end (None: outside any test), and why."""

    at: TestPlan | None
    reason: str


def judge(
    plan: ExercisePlan,
    visible: Execution,
    hidden: HiddenRun | None = None,
    budget_s: float = FEEDBACK_BUDGET_S,
    source: str | None = None,
) -> Report:
    """The report from the visible tests' run and the hidden tests' (None: not run, as when
    the source was refused). Feedback beyond the tests (diagnosis, then properties) is given
    while judging has taken less than `budget_s`; the plain findings (`grader.first_submission`:
    the starter as given, when the `source` is known, a None, a wrong type or shape) always."""
    deadline = time.monotonic() + budget_s
    if visible.termination in (Termination.REJECTED, Termination.VIOLATION):
        return _refused(plan, visible)
    if visible.starved:  # no verdict to give: nothing of the hidden run is told either
        return internal_error(plan, _OVERLOADED)
    shown = [test for test in plan.tests if test.visible]
    stop = _Stop(
        stopped_at(visible, shown), stop_reason(visible, plan.exercise.spec.limits.to_limits())
    )
    results = [
        _judge_test(test, visible, stop) if test.visible else judge_hidden(plan, test, hidden)
        for test in plan.tests
    ]
    verdicts = [
        (test, result.status is TestStatus.PASSED)
        for test, result in zip(plan.tests, results, strict=True)
        if test.visible
    ]
    failing = [test for test, ok in verdicts if not ok]
    passed = {test.spec.name for test, ok in verdicts if ok}
    scored = plan.exercise.spec.trainability.scored
    # Scored, trainability decides verdicts; reported, it is an extra like the properties.
    trainability = (
        judge_trainability(
            plan,
            visible.outcomes,
            passed,
            stopped_early=visible.termination is not Termination.COMPLETED,
        )
        if scored or time.monotonic() < deadline
        else Trainability(properties=_unchecked(plan.exercise.spec.trainability_checks))
    )
    if scored:
        results = [held_to_training(result, trainability.faults) for result in results]
    diagnosis = diagnose(plan, failing, visible.outcomes) if time.monotonic() < deadline else []
    diagnosis = plain_findings(plan, source, failing, visible.outcomes, diagnosis) + diagnosis
    wanted = plan.exercise.spec.properties
    properties = (
        check_properties(wanted, shown, visible.outcomes, explained_by(diagnosis, plan.mistakes))
        if time.monotonic() < deadline
        else _unchecked(wanted)
    )
    report = _report(
        plan,
        results,
        diagnosis=tagged(diagnosis + trainability.findings),
        properties=properties + trainability.properties,
    )
    report = with_behaviour(report, plan, visible.outcomes)
    if trainability.findings and not scored:
        codes = ", ".join(finding.code for finding in trainability.findings)
        message = f"{report.message}; but it does not train as the reference does ({codes})"
        report = report.model_copy(update={"message": message})
    unfinished = any(test.call.id not in visible.outcomes for test in shown)
    if hidden is not None and hidden.execution.starved:
        report = _hidden_not_run(report)
    if unfinished and stop.at is None:
        message = f"{report.message}. The run stopped outside any test: your code {stop.reason}"
        return report.model_copy(update={"message": message})
    return report


def _hidden_not_run(report: Report) -> Report:
    """The report of visible verdicts whose hidden tests the machine gave no CPU to run: an
    error, the platform's fault, which scores nothing (as every error report: no attempt used
    up, no score posted), its visible tests as judged. Load decides it, not the secret: every
    hidden test reads the same."""
    visible = [test for test in report.tests if test.visibility is Visibility.VISIBLE]
    passed = sum(test.status is TestStatus.PASSED for test in visible)
    message = (
        f"The grader failed to run the hidden tests: {_OVERLOADED}. Not graded; "
        f"{passed} of {len(visible)} visible tests passed"
    )
    return report.model_copy(
        update={"status": ReportStatus.ERROR, "score": 0.0, "message": message}
    )


def _unchecked(wanted: Sequence[StrEnum]) -> list[PropertyCheck]:
    return [
        PropertyCheck(name=p.value, status=PropertyStatus.SKIPPED, message=_OUT_OF_TIME)
        for p in wanted
    ]


def internal_error(plan: ExercisePlan, reason: str) -> Report:
    """The report when the grader itself failed: no test is held against the student."""
    message = f"not graded: {reason} (a grader fault, not your code)"
    results = [
        TestResult(
            name=test.spec.name,
            visibility=test.spec.visibility,
            status=TestStatus.ERROR,
            score=0.0,
            max_score=test.spec.points,
            message=message,
        )
        for test in plan.tests
    ]
    report = _report(plan, results)
    return report.model_copy(
        update={"status": ReportStatus.ERROR, "message": f"The grader failed: {reason}."}
    )


def _report(plan: ExercisePlan, results: list[TestResult], **extra: object) -> Report:
    passed = sum(result.status is TestStatus.PASSED for result in results)
    score = sum(result.score for result in results)
    max_score = plan.exercise.spec.max_score
    return Report.model_validate(
        {
            "exercise": plan.exercise.spec.slug,
            "exercise_version": plan.exercise.version,
            "status": ReportStatus.PASSED if passed == len(results) else ReportStatus.FAILED,
            "score": score,
            "max_score": max_score,
            "tests": results,
            "message": f"{passed} of {len(results)} tests passed ({score:g}/{max_score:g} points)",
            **extra,
        }
    )


def _refused(plan: ExercisePlan, execution: Execution) -> Report:
    termination = execution.termination
    findings = [
        Finding(code=NOT_ALLOWED_CODE, message=violation.message, line=violation.line)
        for violation in execution.violations
    ]
    results = [
        _result(test, TestStatus.REJECTED, refused_test_message(termination))
        if test.visible
        else bare_result(test, TestStatus.REJECTED)
        for test in plan.tests
    ]
    return Report(
        exercise=plan.exercise.spec.slug,
        exercise_version=plan.exercise.version,
        status=ReportStatus.REJECTED,
        score=0.0,
        max_score=plan.exercise.spec.max_score,
        tests=results,
        diagnosis=tagged(findings),
        message=refusal_message(termination, execution.violations, execution.detail),
    )


def _judge_test(test: TestPlan, execution: Execution, stop: _Stop) -> TestResult:
    outcome = execution.outcomes.get(test.call.id)
    if outcome is None:
        status = _STATUS_OF_TERMINATION[execution.termination]
        return _result(test, status, stop.reason if stop.at is test else not_run_message(stop.at))
    if outcome.error is not None:
        return _result(test, TestStatus.ERROR, error_message(outcome.error), outcome)
    comparisons = compare_outputs(
        test.output_names, test.expected, outcome.outputs or (), test.decimals
    )
    failed = next((c for c in comparisons if not c.passed), None)
    status = TestStatus.PASSED if failed is None else TestStatus.FAILED
    message = _all_match(test) if failed is None else failed.message
    return _result(test, status, message, outcome, comparisons)


def _all_match(test: TestPlan) -> str:
    places = "/".join(str(count) for count in sorted(set(test.decimals)))
    return f"all outputs match to {places} decimals"


def error_message(error: RaisedError) -> str:
    """A raised error as a test's message says it (a hidden test's only to staff)."""
    where = f" at line {error.line}" if error.line else ""
    if error.contract:
        return f"does not fit the exercise{where}: {error.message}"
    return f"raised {error.type_name}{where}" + (f": {error.message}" if error.message else "")


def _result(
    test: TestPlan,
    status: TestStatus,
    message: str,
    outcome: CallOutcome | None = None,
    comparisons: list[Comparison] | None = None,
) -> TestResult:
    """A visible test's result: its status and the details that explain it."""
    checks = comparisons or []
    headline = next((c for c in checks if not c.passed), checks[0] if checks else None)
    pairs = zip(test.output_names, checks, strict=False)
    return bare_result(test, status).model_copy(
        update={
            "message": message,
            "duration_ms": outcome.duration_s * 1000 if outcome else None,
            "max_abs_error": headline.max_abs_error if headline else None,
            "mismatch_count": headline.mismatch_count if headline else None,
            "first_mismatch": _mismatch(headline),
            "outputs": [output_check(name, comparison) for name, comparison in pairs],
            "stdout": outcome.stdout if outcome else "",
            "line": outcome.error.line if outcome and outcome.error else None,
            "reproduce": None if status is TestStatus.REJECTED else test.reproduce,  # never ran
        }
    )


def output_check(name: str, comparison: Comparison) -> OutputCheck:
    """One output's comparison as a visible test shows it (a hidden test's only to staff)."""
    return OutputCheck(
        name=name,
        passed=comparison.passed,
        check=comparison.check.value,
        message=comparison.message,
        max_abs_error=comparison.max_abs_error,
        mismatch_count=comparison.mismatch_count,
        first_mismatch=_mismatch(comparison),
    )


def _mismatch(comparison: Comparison | None) -> MismatchDetail | None:
    if comparison is None or comparison.first_mismatch is None:
        return None
    first = comparison.first_mismatch
    return MismatchDetail(index=list(first.index), expected=first.expected, actual=first.actual)
