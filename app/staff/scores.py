"""Each student's scores per exercise, as one grouped query: what the gradebook, the list of
students, one student's page and the exercises' score figures all read.

Words as in app.staff.schemas: graded, scored, gradebook score.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Subquery, and_, case, distinct, func, literal, select
from sqlalchemy.orm import aliased
from sqlalchemy.sql.elements import SQLCoreOperations

from app.core.models import Submission, SubmissionStatus
from app.courses.due_dates import penalised_score
from app.courses.models import ExercisePolicy, GradebookScore
from grader.report import ReportStatus


def graded(course_id: int, exercise: str | None = None) -> ColumnElement[bool]:
    """The course's finished submissions (of one exercise)."""
    wanted = [Submission.course_id == course_id, Submission.status == SubmissionStatus.DONE]
    if exercise is not None:
        wanted.append(Submission.exercise == exercise)
    return and_(*wanted)


# A grader fault holds no answer of the student's: it neither scores nor counts as a latest.
SCORED = Submission.report_status != ReportStatus.ERROR.value
PASSED = Submission.report_status == ReportStatus.PASSED.value


def outdated(current: ColumnElement[Any] | str) -> ColumnElement[bool]:
    """Graded with another version than `current`, or with none (its exercise was broken)."""
    return func.coalesce(Submission.exercise_version, "") != current


def fraction(
    score: SQLCoreOperations[Any], max_score: SQLCoreOperations[Any]
) -> ColumnElement[Any]:
    """score / max score, 0..1 (null where either is)."""
    return score / func.nullif(max_score, literal(0.0))


def student_scores(
    course_id: int, exercise: str | None = None, student_id: str | None = None
) -> Subquery:
    """Per exercise and student: attempts, passed, best, latest and max score (of the latest
    scored submission), the exercise's gradebook policy and the gradebook score (`score`, and
    `fraction` of the max score), and whether that score is a late submission's (`late`).
    Scores are as the late policy leaves them (app.courses.due_dates: a penalty per day
    late). Students with an id only."""
    wanted = [graded(course_id, exercise), Submission.student_id.is_not(None)]
    if student_id is not None:
        wanted.append(Submission.student_id == student_id)
    counted = penalised_score(
        Submission.score, Submission.days_late, course_id, Submission.exercise
    )
    on_time = SCORED & (Submission.days_late == 0)
    per_student = (
        select(
            Submission.exercise,
            Submission.student_id,
            func.count().label("attempts"),
            func.max(case((PASSED, 1), else_=0)).label("passed"),
            func.max(case((SCORED, counted))).label("best"),
            func.max(case((on_time, Submission.score))).label("best_on_time"),
            # Ids grow with time (ULIDs): the greatest is the latest.
            func.max(case((SCORED, Submission.id))).label("latest_id"),
        )
        .where(*wanted)
        .group_by(Submission.exercise, Submission.student_id)
        .subquery()
    )
    latest = aliased(Submission)
    latest_score = penalised_score(latest.score, latest.days_late, course_id, latest.exercise)
    policy = func.coalesce(ExercisePolicy.gradebook, GradebookScore.BEST.value)
    takes_latest = policy == GradebookScore.LATEST.value
    chosen = case((takes_latest, latest_score), else_=per_student.c.best)
    # The best is late when no submission on time scored as much (a tie goes to the one on time).
    best_late = per_student.c.best > func.coalesce(per_student.c.best_on_time, literal(-1.0))
    late = case((takes_latest, latest.days_late > 0), else_=best_late)
    return (
        select(
            per_student.c.exercise,
            per_student.c.student_id,
            per_student.c.attempts,
            per_student.c.passed,
            per_student.c.best,
            latest_score.label("latest"),
            latest.max_score,
            policy.label("gradebook"),
            chosen.label("score"),
            fraction(chosen, latest.max_score).label("fraction"),
            late.label("late"),
        )
        .outerjoin(latest, latest.id == per_student.c.latest_id)
        .outerjoin(
            ExercisePolicy,
            and_(
                ExercisePolicy.course_id == course_id,
                ExercisePolicy.exercise == per_student.c.exercise,
            ),
        )
        .subquery()
    )


def students_where(condition: ColumnElement[bool]) -> ColumnElement[int]:
    """The distinct students of the rows where `condition` holds."""
    return func.count(distinct(case((condition, Submission.student_id))))


def count_where(condition: ColumnElement[bool]) -> ColumnElement[int]:
    return func.coalesce(func.sum(case((condition, 1), else_=0)), 0)
