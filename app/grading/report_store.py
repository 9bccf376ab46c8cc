"""Storing a submission's report: the JSON document, its figures as columns, and its lines as
rows (app.grading.models.ReportOutcome), written together so the course's statistics (app.staff) and
attempt budgets (app.courses.budgets) count reports by SQL and never disagree with them. What its
hidden tests did goes to a table of its own, for staff (app.grading.models.HiddenTestsRun)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, insert
from sqlalchemy.orm import Session

from app.grading.models import HiddenTestsRun, OutcomeKind, ReportOutcome
from grader.finding_concepts import tagged
from grader.hidden_detail import HiddenRunDetail
from grader.report import Report, ReportStatus

# A report of these statuses never uses up an attempt: a pass, and the grader's own failure.
_FREE = (ReportStatus.PASSED, ReportStatus.ERROR)


def charges_attempt(report: Report) -> bool:
    """Whether the submission graded so uses up one of the student's attempts."""
    return report.status not in _FREE


def report_columns(report: Report) -> dict[str, Any]:
    """The submission's columns that hold this report."""
    return {
        "report": report.model_dump(mode="json"),
        "report_status": report.status.value,
        "score": report.score,
        "max_score": report.max_score,
        "exercise_version": report.exercise_version,
        "charged": charges_attempt(report),
    }


def outcome_rows(submission_id: str, report: Report) -> list[dict[str, Any]]:
    """The report's tests, findings, their concepts, property checks and behaviour, a row each."""
    tests = [
        (OutcomeKind.TEST, test.name, test.status.value, test.visibility.value)
        for test in report.tests
    ]
    findings = [(OutcomeKind.FINDING, finding.code, "", None) for finding in report.diagnosis]
    concepts = [(OutcomeKind.CONCEPT, concept, "", None) for concept in _concepts(report)]
    checks = [
        (OutcomeKind.PROPERTY, check.name, check.status.value, None) for check in report.properties
    ]
    behaviour = (
        [(OutcomeKind.BEHAVIOUR, report.behaviour.key, "", None)] if report.behaviour else []
    )
    return [
        {
            "submission_id": submission_id,
            "kind": kind,
            "name": name,
            "status": status,
            "visibility": visibility,
        }
        for kind, name, status, visibility in (*tests, *findings, *concepts, *checks, *behaviour)
    ]


def _concepts(report: Report) -> list[str]:
    """The concepts of the report's findings, each once: a finding's own, else its code's."""
    tagged_findings = tagged(report.diagnosis)
    return list(dict.fromkeys(concept for f in tagged_findings for concept in f.concepts))


def add_outcomes(session: Session, submission_id: str, report: Report) -> None:
    """The outcome rows of a submission's first report (it has none yet)."""
    rows = outcome_rows(submission_id, report)
    if rows:
        session.execute(insert(ReportOutcome), rows)


def replace_outcomes(session: Session, submission_id: str, report: Report) -> None:
    """The submission's outcome rows, those of an earlier report replaced by this one's."""
    session.execute(delete(ReportOutcome).where(ReportOutcome.submission_id == submission_id))
    add_outcomes(session, submission_id, report)


def keep_hidden_tests(session: Session, submission_id: str, hidden: HiddenRunDetail | None) -> None:
    """What the hidden tests of the submission's report did, replacing an earlier report's (and
    none kept where the grader could not say: an error report of its own failure)."""
    session.execute(delete(HiddenTestsRun).where(HiddenTestsRun.submission_id == submission_id))
    if hidden is not None:
        row = {"submission_id": submission_id, "detail": hidden.model_dump(mode="json")}
        session.execute(insert(HiddenTestsRun), [row])
