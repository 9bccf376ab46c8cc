"""What a course's reports say of an exercise's checks, counted by SQL over the reports' rows
(app.grading.models.ReportOutcome): each test's pass rate, the known mistakes found in failing
submissions and the failures no mistake explains, and each property's failures. Part of the
exercise's figures (app.staff.stats).

Words as in app.staff.schemas.
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, distinct, exists, func, select
from sqlalchemy.orm import Session

from app.core.models import Submission
from app.courses.mistakes import course_mistakes
from app.grading.models import OutcomeKind, ReportOutcome
from app.staff.mistakes import known_mistakes
from app.staff.schemas import (
    KnownMisconception,
    Misconceptions,
    PropertyFigures,
    TestFigures,
    Unrecognised,
)
from app.staff.scores import count_where, graded, students_where
from grader.report import PropertyStatus, ReportStatus, TestStatus
from grader.spec import Exercise

FAILING = Submission.report_status == ReportStatus.FAILED.value
# Tests ran in a passed or failed report; a refused one and a grader fault ran none.
_RAN = Submission.report_status.in_((ReportStatus.PASSED.value, ReportStatus.FAILED.value))


def _outcomes(course_id: int, slug: str, kind: OutcomeKind) -> list[ColumnElement[bool]]:
    """The outcome rows of this kind of the exercise's graded submissions (joined to them)."""
    return [
        ReportOutcome.submission_id == Submission.id,
        ReportOutcome.kind == kind,
        graded(course_id, slug),
    ]


def test_figures(session: Session, course_id: int, exercise: Exercise) -> list[TestFigures]:
    rows = session.execute(
        select(
            ReportOutcome.name,
            func.count().label("ran"),
            count_where(ReportOutcome.status == TestStatus.PASSED.value).label("passed"),
        )
        .where(*_outcomes(course_id, exercise.spec.slug, OutcomeKind.TEST), _RAN)
        .group_by(ReportOutcome.name)
    ).all()
    counts = {row.name: row for row in rows}
    # The exercise's tests in its order, then any that only older versions had.
    visibility = {test.name: test.visibility for test in exercise.spec.tests}
    names = [*visibility, *sorted(set(counts) - set(visibility))]
    return [
        TestFigures(
            name=name,
            visibility=visibility.get(name),
            submissions=counts[name].ran if name in counts else 0,
            passed=counts[name].passed if name in counts else 0,
            pass_rate=_ratio(counts[name].passed, counts[name].ran) if name in counts else None,
        )
        for name in names
    ]


def undiagnosed() -> ColumnElement[bool]:
    """The submission's report names no mistake."""
    return ~exists().where(
        ReportOutcome.submission_id == Submission.id, ReportOutcome.kind == OutcomeKind.FINDING
    )


def misconceptions(session: Session, course_id: int, exercise: Exercise) -> Misconceptions:
    slug = exercise.spec.slug
    failing = session.execute(
        select(
            func.count().label("submissions"),
            students_where(FAILING).label("students"),
            count_where(undiagnosed()).label("unknown_submissions"),
            students_where(undiagnosed()).label("unknown_students"),
        ).where(graded(course_id, slug), FAILING)
    ).one()
    found = session.execute(
        select(
            ReportOutcome.name,
            students_where(FAILING).label("students"),
            func.count(distinct(Submission.id)).label("submissions"),
        )
        .where(*_outcomes(course_id, slug, OutcomeKind.FINDING), FAILING)
        .group_by(ReportOutcome.name)
    ).all()
    return Misconceptions(
        failing_students=failing.students,
        failing_submissions=failing.submissions,
        known=_known(
            known_mistakes(exercise) | course_mistakes(session, course_id, slug),
            {row.name: (row.students, row.submissions) for row in found},
            failing.students,
        ),
        unrecognised=Unrecognised(
            students=failing.unknown_students,
            submissions=failing.unknown_submissions,
            share=_ratio(failing.unknown_students, failing.students) or 0.0,
        ),
    )


def _known(
    mistakes: dict[str, str], counts: dict[str, tuple[int, int]], failing_students: int
) -> list[KnownMisconception]:
    """Every mistake the exercise knows (and any code its reports name that it no longer knows,
    by its code), most students first; `counts`: (students, submissions) by code."""
    codes = [*mistakes, *sorted(set(counts) - set(mistakes))]
    known = [
        KnownMisconception(
            code=code,
            message=mistakes.get(code, code),
            students=counts.get(code, (0, 0))[0],
            submissions=counts.get(code, (0, 0))[1],
            share=_ratio(counts.get(code, (0, 0))[0], failing_students) or 0.0,
        )
        for code in codes
    ]
    return sorted(known, key=lambda mistake: (-mistake.students, mistake.code))


def property_figures(session: Session, course_id: int, exercise: Exercise) -> list[PropertyFigures]:
    failed = ReportOutcome.status == PropertyStatus.FAILED.value
    rows = session.execute(
        select(
            ReportOutcome.name,
            count_where(ReportOutcome.status != PropertyStatus.SKIPPED.value).label("checked"),
            count_where(failed).label("failed"),
            students_where(failed).label("failed_students"),
        )
        .where(*_outcomes(course_id, exercise.spec.slug, OutcomeKind.PROPERTY))
        .group_by(ReportOutcome.name)
    ).all()
    counts = {row.name: row for row in rows}
    names = [*(prop.value for prop in exercise.spec.properties), *sorted(counts)]
    return [
        PropertyFigures(
            name=name,
            checked=counts[name].checked if name in counts else 0,
            failed=counts[name].failed if name in counts else 0,
            failed_students=counts[name].failed_students if name in counts else 0,
        )
        for name in dict.fromkeys(names)
    ]


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None
