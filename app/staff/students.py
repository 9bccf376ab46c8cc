"""A course's students as its staff see them: every student's scores on every exercise (one
grouped query), enrolled students who submitted nothing among them (app.lti.roster_view), and
one student's scores and submissions."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, defer

from app.api.submission_schemas import SubmissionSummary
from app.core.models import Submission
from app.lti.roster_view import enrolled_students
from app.staff.schemas import (
    CourseStudents,
    StudentDetail,
    StudentExercise,
    StudentExerciseDetail,
    StudentRow,
)
from app.staff.scores import student_scores
from grader.catalog import Catalog


def _figures(row: Any) -> dict[str, Any]:
    return {
        "best": row.best,
        "latest": row.latest,
        "max_score": row.max_score,
        "attempts": row.attempts,
        "passed": bool(row.passed),
    }


def course_students(session: Session, course_id: int, catalog: Catalog) -> CourseStudents:
    """Every student who submitted, and every active student of the course's LMS rosters, who
    may not have (no exercise tried: not submitted)."""
    scores = student_scores(course_id)
    rows = session.execute(select(scores).order_by(scores.c.student_id, scores.c.exercise))
    enrolled = enrolled_students(session, course_id)
    students: dict[str, dict[str, StudentExercise]] = {student: {} for student in enrolled}
    for row in rows:
        students.setdefault(row.student_id, {})[row.exercise] = StudentExercise(**_figures(row))
    return CourseStudents(
        exercises=catalog.slugs(),
        students=[
            StudentRow(student_id=student, name=enrolled.get(student), exercises=exercises)
            for student, exercises in sorted(students.items())
        ],
    )


def student_detail(
    session: Session, course_id: int, student_id: str, catalog: Catalog
) -> StudentDetail:
    scores = student_scores(course_id, student_id=student_id)
    rows = session.execute(select(scores).order_by(scores.c.exercise)).all()
    submissions = session.scalars(
        select(Submission)
        .where(Submission.course_id == course_id, Submission.student_id == student_id)
        .options(defer(Submission.source))
        .order_by(Submission.id.desc())
    )
    return StudentDetail(
        student_id=student_id,
        exercises=[
            StudentExerciseDetail(
                exercise=row.exercise,
                title=_title(catalog, row.exercise),
                gradebook=row.gradebook,
                **_figures(row),
            )
            for row in rows
        ],
        submissions=[SubmissionSummary.from_row(row) for row in submissions],
    )


def _title(catalog: Catalog, slug: str) -> str:
    """The exercise's title; its slug, for one the catalog no longer serves."""
    exercise = catalog.serving(slug)
    return exercise.spec.title if exercise else slug
