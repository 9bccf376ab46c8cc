"""The mistakes a course's staff named (app.courses.models.CourseMistake), as the service applies
them: a failing report that no other mistake explains, whose behaviour a named mistake of its
course and exercise has, gets that mistake as its finding.

Applied where a report is stored (a new submission's, app.grading.job; a regrade's,
app.regrades.store), and once to the group's past reports when it is named (app.staff.naming):
a re-diagnosis, which never changes a score. What a student reads is the staff's words and the
visible tests the behaviour names (grader.report.Behaviour holds nothing of a hidden test).
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.courses.models import CourseMistake
from grader.report import Finding, Report, ReportStatus


def unexplained(report: Report) -> bool:
    """Whether a named mistake may explain the report: it failed, no mistake explains it, and
    its behaviour is known."""
    return (
        report.status is ReportStatus.FAILED
        and not report.diagnosis
        and report.behaviour is not None
    )


def student_message(mistake: CourseMistake) -> str:
    """What a student who makes the mistake reads: what is wrong, then what to change."""
    return f"{mistake.message.strip()} Fix: {mistake.fix.strip()}"


def diagnosed(report: Report, mistake: CourseMistake) -> Report:
    """The report with the mistake as its finding (its score unchanged)."""
    tests = report.behaviour.failing_tests if report.behaviour is not None else []
    finding = Finding(
        code=mistake.code,
        message=student_message(mistake),
        tests=list(tests),
        concepts=list(mistake.concepts),
    )
    return report.model_copy(update={"diagnosis": [finding]})


def with_course_diagnosis(session: Session, course_id: int, report: Report) -> Report:
    """The report, with the course's named mistake as its finding where one explains it."""
    behaviour = report.behaviour
    if behaviour is None or not unexplained(report):
        return report
    mistake = session.scalars(
        select(CourseMistake).where(
            CourseMistake.course_id == course_id,
            CourseMistake.exercise == report.exercise,
            CourseMistake.behaviour_key == behaviour.key,
        )
    ).one_or_none()
    return report if mistake is None else diagnosed(report, mistake)


def named_mistakes(session: Session, course_id: int, exercise: str) -> list[CourseMistake]:
    """The exercise's mistakes the course named, in the order they were named."""
    return list(
        session.scalars(
            select(CourseMistake)
            .where(CourseMistake.course_id == course_id, CourseMistake.exercise == exercise)
            .order_by(CourseMistake.id)
        )
    )


def course_mistakes(session: Session, course_id: int, exercise: str) -> dict[str, str]:
    """Code → what a student reads, of the exercise's mistakes the course named."""
    return {
        mistake.code: student_message(mistake)
        for mistake in named_mistakes(session, course_id, exercise)
    }
