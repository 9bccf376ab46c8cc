"""A report's lines as rows: the concepts of its findings, once each."""

from app.grading.models import OutcomeKind
from app.grading.report_store import outcome_rows
from grader.report import Finding, Report, ReportStatus


def test_each_concept_of_a_report_s_findings_is_a_row_once() -> None:
    findings = [
        Finding(code="missing-scaling", message="m"),
        Finding(code="scaled-by-d-k", message="m"),  # scaling again
        Finding(code="course-mistake", message="m", concepts=["masking", "softmax-axis"]),
        Finding(code="a-code-of-no-concept", message="m"),
    ]
    report = Report(
        exercise="e", status=ReportStatus.FAILED, score=0, max_score=1, tests=[], diagnosis=findings
    )
    rows = outcome_rows("s1", report)
    concepts = [row["name"] for row in rows if row["kind"] is OutcomeKind.CONCEPT]
    assert concepts == ["scaling", "masking", "softmax-axis"]
    assert [row["name"] for row in rows if row["kind"] is OutcomeKind.FINDING] == [
        finding.code for finding in findings
    ]
