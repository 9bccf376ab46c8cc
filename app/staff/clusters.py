"""An exercise's wrong answers that no mistake explains, grouped by what they do: the failing
submissions of a course without a finding, by the key of their report's behaviour
(grader.report.Behaviour, stored as a row of app.grading.models.ReportOutcome), most students
first, each with a few examples beside the reference's output.

Built from visible tests only: the behaviour holds nothing of a hidden test, and what a report
holds of one is dropped here too (a test the exercise does not show, an excerpt of it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import ColumnElement, Row, desc, distinct, func, select
from sqlalchemy.orm import Session, aliased

from app.core.models import Course, Submission
from app.courses.mistakes import named_mistakes, student_message
from app.courses.models import CourseMistake
from app.grading.models import OutcomeKind, ReportOutcome
from app.staff.check_stats import FAILING, undiagnosed
from app.staff.cluster_schemas import Cluster, ClusterExample, ExerciseClusters, NamedMistake
from app.staff.scores import graded, students_where
from grader.concepts import CONCEPTS
from grader.report import Report
from grader.spec import Exercise, Visibility

MAX_CLUSTERS = 12
EXAMPLES = 3
# The newest submissions of a group its examples are drawn from, one per student.
_EXAMPLES_FROM = 30

_behaviour = aliased(ReportOutcome, name="behaviour")
# A submission shown as an example: id, student, source, report.
_Example = Row[str, str | None, str, dict[str, Any] | None]


def unexplained_submissions(course_id: int, slug: str) -> list[ColumnElement[bool]]:
    """The exercise's failing submissions that no mistake explains, joined to their behaviour."""
    return [
        graded(course_id, slug),
        FAILING,
        _behaviour.submission_id == Submission.id,
        _behaviour.kind == OutcomeKind.BEHAVIOUR,
        undiagnosed(),
    ]


def behaving(key: str) -> ColumnElement[bool]:
    """Of `unexplained_submissions`' rows: those of this behaviour."""
    return _behaviour.name == key


def exercise_clusters(session: Session, course: Course, exercise: Exercise) -> ExerciseClusters:
    slug = exercise.spec.slug
    groups = session.execute(
        select(
            _behaviour.name.label("key"),
            students_where(FAILING).label("students"),
            func.count(distinct(Submission.id)).label("submissions"),
        )
        .where(*unexplained_submissions(course.id, slug))
        .group_by(_behaviour.name)
        .order_by(desc("students"), desc("submissions"), "key")
        .limit(MAX_CLUSTERS)
    ).all()
    students = session.scalar(
        select(students_where(FAILING)).where(*unexplained_submissions(course.id, slug))
    )
    return ExerciseClusters(
        course=course.slug,
        exercise=slug,
        unexplained_students=students or 0,
        clusters=[_cluster(session, course.id, exercise, group) for group in groups],
        named=[named(mistake) for mistake in named_mistakes(session, course.id, slug)],
        concepts=CONCEPTS,
    )


def _cluster(
    session: Session, course_id: int, exercise: Exercise, group: Row[str, int, int]
) -> Cluster:
    """The group of `exercise_clusters`' row (key, students, submissions)."""
    visible = {test.name for test in exercise.spec.tests if test.visibility is Visibility.VISIBLE}
    newest = session.execute(
        select(Submission.id, Submission.student_id, Submission.source, Submission.report)
        .where(*unexplained_submissions(course_id, exercise.spec.slug), behaving(group.key))
        .order_by(Submission.id.desc())
        .limit(_EXAMPLES_FROM)
    ).all()
    rows = _one_per_student(newest)[:EXAMPLES]
    reports = [Report.model_validate(row.report) for row in rows]
    behaviour = reports[0].behaviour
    assert behaviour is not None  # a row of kind BEHAVIOUR is written from it
    return Cluster(
        key=group.key,
        facts=behaviour.facts,
        failing_tests=[test for test in behaviour.failing_tests if test in visible],
        broken_properties=behaviour.broken_properties,
        students=group.students,
        submissions=group.submissions,
        examples=[
            ClusterExample(
                submission_id=row.id,
                student_id=row.student_id,
                source=row.source,
                excerpts=[
                    excerpt
                    for excerpt in (report.behaviour.excerpts if report.behaviour else [])
                    if excerpt.test in visible
                ],
            )
            for row, report in zip(rows, reports, strict=True)
        ],
    )


def named(mistake: CourseMistake) -> NamedMistake:
    return NamedMistake(
        code=mistake.code,
        message=mistake.message,
        fix=mistake.fix,
        concepts=mistake.concepts,
        behaviour_key=mistake.behaviour_key,
        student_message=student_message(mistake),
        created_at=mistake.created_at,
    )


def _one_per_student(rows: Sequence[_Example]) -> list[_Example]:
    """Each student's first row (every row without a student)."""
    seen: set[str] = set()
    kept = []
    for row in rows:
        student = row.student_id
        if student is None or student not in seen:
            kept.append(row)
            seen.add(student or "")
    return kept
