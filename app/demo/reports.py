"""The reports of the demo course (app.demo.data): what the grader answers to a right
solution, to a wrong one, to a refused one and when it fails itself, built as `grader.judge`
builds them, with the exercise's real tests, properties, mistake codes and their concepts."""

from __future__ import annotations

from dataclasses import dataclass

from app.demo.behaviours import Unexplained, behaviour_of
from grader.contract import Termination, Violation
from grader.finding_concepts import tagged
from grader.hidden_verdicts import hidden_message
from grader.judge import NOT_ALLOWED_CODE
from grader.plan import PROBED_TESTS_PER_KIND
from grader.property_checks import UNJUDGED, holds_message
from grader.refusal import refusal_message, refused_test_message
from grader.report import (
    Finding,
    PropertyCheck,
    PropertyStatus,
    Report,
    ReportStatus,
    TestResult,
    TestStatus,
)
from grader.spec import Exercise, Property, TestCaseSpec, Visibility


@dataclass(frozen=True)
class Bug:
    """A wrong solution: the tests it fails, the properties it breaks, and the finding the
    grader gives it (None: no known mistake matches it, and `unexplained` says what it does).
    A crash fails its tests with an error rather than a wrong value."""

    finding: str | None
    failed: frozenset[str]
    broken: frozenset[Property] = frozenset()
    crashes: bool = False
    unexplained: Unexplained | None = None


class Outcome:
    """What a submission that is not a wrong solution comes to."""

    PASSED = "passed"
    REFUSED = "refused"  # a forbidden import: rejected before running
    FAULT = "fault"  # the grader failed: not the student's fault


Attempt = Bug | str

_REFUSAL = Violation("importing 'os' is not allowed in this exercise", line=3)
_FAULT = "the sandbox did not start in time"
_CRASH = "raised RuntimeError at line 24: shape '[2, 4, 8]' is invalid for input of size 96"
_WRONG_VALUES = "output: 61 of 64 values differ by more than the tolerance (max abs error 0.42)"


def build_report(
    exercise: Exercise, attempt: Attempt, version: str | None, mistakes: dict[str, str]
) -> Report:
    """The report of one attempt, graded with `version`; `mistakes` gives findings their
    messages."""
    if attempt == Outcome.REFUSED:
        return _refused(exercise, version)
    if attempt == Outcome.FAULT:
        return _fault(exercise, version)
    bug = attempt if isinstance(attempt, Bug) else None
    return _graded(exercise, bug, version, mistakes)


def _graded(
    exercise: Exercise, bug: Bug | None, version: str | None, mistakes: dict[str, str]
) -> Report:
    failed = bug.failed if bug else frozenset()
    crashes = bug is not None and bug.crashes
    tests = [_test(test, test.name in failed, crashes) for test in exercise.spec.tests]
    passed = sum(result.status is TestStatus.PASSED for result in tests)
    score = sum(result.score for result in tests)
    max_score = exercise.spec.max_score
    diagnosis = []
    if bug is not None and bug.finding is not None:
        shown = [
            test.name for test in exercise.spec.tests if test.name in failed and _visible(test)
        ]
        diagnosis.append(Finding(code=bug.finding, message=mistakes[bug.finding], tests=shown))
    status = ReportStatus.PASSED if passed == len(tests) else ReportStatus.FAILED
    behaviour = None
    if bug is not None and bug.unexplained is not None and status is ReportStatus.FAILED:
        behaviour = behaviour_of(exercise, bug.unexplained, bug.failed, bug.broken)
    return Report(
        exercise=exercise.spec.slug,
        exercise_version=version,
        status=status,
        score=score,
        max_score=max_score,
        tests=tests,
        diagnosis=tagged(diagnosis),
        properties=_properties(exercise, bug),
        message=f"{passed} of {len(tests)} tests passed ({score:g}/{max_score:g} points)",
        behaviour=behaviour,
    )


def _test(test: TestCaseSpec, fails: bool, crashes: bool) -> TestResult:
    """As the grader judges a test: a hidden test's result is one bit, passed or failed."""
    if not fails:
        status, message = TestStatus.PASSED, "all outputs match to 4 decimals"
    elif not _visible(test):
        status, message = TestStatus.FAILED, hidden_message(TestStatus.FAILED)
    elif crashes:
        status, message = TestStatus.ERROR, _CRASH
    else:
        status, message = TestStatus.FAILED, _WRONG_VALUES
    if not _visible(test) and not fails:
        message = "passed"
    return TestResult(
        name=test.name,
        visibility=test.visibility,
        status=status,
        score=test.points if status is TestStatus.PASSED else 0.0,
        max_score=test.points,
        message=message,
    )


def _properties(exercise: Exercise, bug: Bug | None) -> list[PropertyCheck]:
    visible = [test.name for test in exercise.spec.tests if _visible(test)]
    unjudged = bug is not None and bug.crashes and set(visible) <= bug.failed
    checks = []
    for prop in exercise.spec.properties:
        if unjudged:
            status, message = PropertyStatus.SKIPPED, UNJUDGED
        elif bug is not None and prop in bug.broken:
            status, message = (
                PropertyStatus.FAILED,
                f"does not hold: {prop.value.replace('_', ' ')}",
            )
        else:
            probed = min(len(visible), PROBED_TESTS_PER_KIND)
            status, message = PropertyStatus.PASSED, holds_message(probed, probed)
        checks.append(PropertyCheck(name=prop.value, status=status, message=message))
    return checks


def _refused(exercise: Exercise, version: str | None) -> Report:
    tests = [
        TestResult(
            name=test.name,
            visibility=test.visibility,
            status=TestStatus.REJECTED,
            score=0.0,
            max_score=test.points,
            message=refused_test_message(Termination.REJECTED)
            if _visible(test)
            else hidden_message(TestStatus.REJECTED),
        )
        for test in exercise.spec.tests
    ]
    return Report(
        exercise=exercise.spec.slug,
        exercise_version=version,
        status=ReportStatus.REJECTED,
        score=0.0,
        max_score=exercise.spec.max_score,
        tests=tests,
        diagnosis=tagged(
            [Finding(code=NOT_ALLOWED_CODE, message=_REFUSAL.message, line=_REFUSAL.line)]
        ),
        message=refusal_message(Termination.REJECTED, [_REFUSAL], ""),
    )


def _fault(exercise: Exercise, version: str | None) -> Report:
    message = f"not graded: {_FAULT} (a grader fault, not your code)"
    tests = [
        TestResult(
            name=test.name,
            visibility=test.visibility,
            status=TestStatus.ERROR,
            score=0.0,
            max_score=test.points,
            message=message,
        )
        for test in exercise.spec.tests
    ]
    return Report(
        exercise=exercise.spec.slug,
        exercise_version=version,
        status=ReportStatus.ERROR,
        score=0.0,
        max_score=exercise.spec.max_score,
        tests=tests,
        message=f"The grader failed: {_FAULT}.",
    )


def _visible(test: TestCaseSpec) -> bool:
    return test.visibility is Visibility.VISIBLE
