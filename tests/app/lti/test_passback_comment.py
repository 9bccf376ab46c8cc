"""The comment a score carries to the LMS's gradebook: one line, each fact of the report once."""

from __future__ import annotations

from app.lti.passback import comment
from grader.contract import Termination, Violation
from grader.refusal import refusal_message, refused_test_message
from grader.report import Report, ReportStatus, TestResult, TestStatus
from grader.spec import Visibility

FORBIDDEN = (
    Violation("importing `os` is not allowed", line=1),
    Violation("importing `sys` is not allowed", line=2),
)


def report(
    status: ReportStatus, test_status: TestStatus, message: str, test_message: str
) -> Report:
    test = TestResult(
        name="batch 1, 2 heads",
        visibility=Visibility.VISIBLE,
        status=test_status,
        score=0.0,
        max_score=1.0,
        message=test_message,
    )
    return Report(
        exercise="multi-headed-self-attention",
        status=status,
        score=0.0,
        max_score=1.0,
        tests=[test],
        message=message,
    )


def test_a_failing_report_names_the_tests_not_passed_apart() -> None:
    failed = report(ReportStatus.FAILED, TestStatus.FAILED, "0 of 2 tests passed", "wrong")
    failed.tests.append(failed.tests[0].model_copy(update={"name": "16 heads"}))
    assert comment(failed) == "0 of 2 tests passed. Not passed: batch 1, 2 heads; 16 heads"


def test_a_refusal_says_it_was_refused_and_each_reason_on_one_line() -> None:
    message = refusal_message(Termination.REJECTED, FORBIDDEN, "")
    refused = report(
        ReportStatus.REJECTED,
        TestStatus.REJECTED,
        message,
        refused_test_message(Termination.REJECTED),
    )
    assert comment(refused) == (
        "Refused. Nothing ran: - line 1: importing `os` is not allowed "
        "- line 2: importing `sys` is not allowed"
    )
