"""A course's figures per exercise, every one counted by SQL: grouped queries over the
submissions' columns and their reports' rows (app.grading.models.ReportOutcome), the same on SQLite
and PostgreSQL, a bounded number per request however large the class. Python only shapes what they
return (a row per test, per mistake, per bin, per day).

Words as in app.staff.schemas.
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate
from typing import Any

from sqlalchemy import case, distinct, func, select
from sqlalchemy.orm import Session

from app.core.models import Course, Submission
from app.core.utc_day import utc_day
from app.courses.models import ExercisePolicy, GradebookScore
from app.staff.check_stats import misconceptions, property_figures, test_figures
from app.staff.schemas import (
    AttemptsBin,
    AttemptsToPass,
    CourseExercises,
    Day,
    ExerciseStats,
    ExerciseSummary,
    ScoreBin,
)
from app.staff.scores import (
    PASSED,
    SCORED,
    count_where,
    fraction,
    graded,
    outdated,
    student_scores,
    students_where,
)
from grader.catalog import Catalog
from grader.proof_record import draft_reason
from grader.report import ReportStatus
from grader.spec import Exercise

BINS = 10


def course_exercises(session: Session, course: Course, catalog: Catalog) -> CourseExercises:
    """Every exercise served, with its totals: two grouped queries for the whole course."""
    versions = {exercise.spec.slug: exercise.version for exercise in catalog}
    current = case(versions, value=Submission.exercise, else_="")
    totals = {
        row.exercise: row
        for row in session.execute(
            select(
                Submission.exercise,
                func.count().label("submissions"),
                func.count(distinct(Submission.student_id)).label("students"),
                students_where(PASSED).label("passed_students"),
                count_where(outdated(current)).label("outdated"),
            )
            .where(graded(course.id))
            .group_by(Submission.exercise)
        )
    }
    scores = student_scores(course.id)
    averaged = session.execute(
        select(scores.c.exercise, func.avg(scores.c.fraction)).group_by(scores.c.exercise)
    )
    means = {exercise: mean for exercise, mean in averaged}
    return CourseExercises(
        course=course.slug,
        exercises=[
            _summary(exercise, totals.get(exercise.spec.slug), means.get(exercise.spec.slug))
            for exercise in catalog
        ],
    )


def _summary(exercise: Exercise, totals: Any, mean: float | None) -> ExerciseSummary:
    return ExerciseSummary(
        exercise=exercise.spec.slug,
        title=exercise.spec.title,
        submissions=totals.submissions if totals else 0,
        students=totals.students if totals else 0,
        passed_students=totals.passed_students if totals else 0,
        mean_score=mean,
        outdated_submissions=totals.outdated if totals else 0,
        draft=draft_reason(exercise),
    )


def exercise_stats(session: Session, course: Course, exercise: Exercise) -> ExerciseStats:
    slug = exercise.spec.slug
    totals = session.execute(
        select(
            func.count().label("submissions"),
            func.count(distinct(Submission.student_id)).label("students"),
            students_where(PASSED).label("passed_students"),
            count_where(outdated(exercise.version)).label("outdated"),
        ).where(graded(course.id, slug))
    ).one()
    policy = session.scalar(
        select(ExercisePolicy.gradebook).where(
            ExercisePolicy.course_id == course.id, ExercisePolicy.exercise == slug
        )
    )
    return ExerciseStats(
        course=course.slug,
        exercise=slug,
        title=exercise.spec.title,
        version=exercise.version,
        gradebook=policy or GradebookScore.BEST,
        submissions=totals.submissions,
        students=totals.students,
        passed_students=totals.passed_students,
        outdated_submissions=totals.outdated,
        score_histogram=_score_histogram(session, course.id, slug),
        tests=test_figures(session, course.id, exercise),
        misconceptions=misconceptions(session, course.id, exercise),
        properties=property_figures(session, course.id, exercise),
        attempts_to_pass=_attempts_to_pass(session, course.id, slug, totals.students),
        timeline=_timeline(session, course.id, slug),
    )


def _score_histogram(session: Session, course_id: int, slug: str) -> list[ScoreBin]:
    scores = student_scores(course_id, slug)
    edges = [(n + 1) / BINS for n in range(BINS - 1)]
    # [k/10, (k+1)/10) for bin k, and the last bin holds 1.0.
    bin_ = case(*((scores.c.fraction < edge, n) for n, edge in enumerate(edges)), else_=BINS - 1)
    counted = session.execute(
        select(bin_.label("bin"), func.count())
        .where(scores.c.fraction.is_not(None))
        .group_by("bin")
    )
    counts: dict[int, int] = {bin_number: students for bin_number, students in counted}
    return [
        ScoreBin(low=n / BINS, high=(n + 1) / BINS, students=counts.get(n, 0)) for n in range(BINS)
    ]


def _attempts_to_pass(session: Session, course_id: int, slug: str, students: int) -> AttemptsToPass:
    numbered = (
        select(
            Submission.student_id,
            Submission.report_status,
            func.row_number()
            .over(partition_by=Submission.student_id, order_by=Submission.id)
            .label("attempt"),
        )
        .where(graded(course_id, slug), Submission.student_id.is_not(None))
        .subquery()
    )
    until_pass = (
        select(func.min(numbered.c.attempt).label("attempts"))
        .where(numbered.c.report_status == ReportStatus.PASSED.value)
        .group_by(numbered.c.student_id)
        .subquery()
    )
    histogram = session.execute(
        select(until_pass.c.attempts, func.count())
        .group_by(until_pass.c.attempts)
        .order_by(until_pass.c.attempts)
    ).all()
    bins = [AttemptsBin(attempts=attempts, students=count) for attempts, count in histogram]
    passed = sum(entry.students for entry in bins)
    return AttemptsToPass(histogram=bins, median=_median(bins), never_passed=students - passed)


def _median(bins: list[AttemptsBin]) -> float | None:
    """The median of the values a histogram (in increasing order) counts."""
    ends = list(accumulate(entry.students for entry in bins))  # each bin's last rank + 1
    if not ends or ends[-1] == 0:
        return None

    def value(rank: int) -> int:
        return bins[bisect_right(ends, rank)].attempts

    total = ends[-1]
    return (value((total - 1) // 2) + value(total // 2)) / 2


def _timeline(session: Session, course_id: int, slug: str) -> list[Day]:
    day = utc_day(Submission.created_at).label("day")
    rows = session.execute(
        select(
            day,
            func.count().label("submissions"),
            func.count(distinct(Submission.student_id)).label("students"),
            count_where(PASSED).label("passed"),
            func.avg(case((SCORED, fraction(Submission.score, Submission.max_score)))).label(
                "mean_score"
            ),
        )
        .where(graded(course_id, slug))
        .group_by(day)
        .order_by(day)
    ).all()
    return [
        Day(
            day=row.day,
            submissions=row.submissions,
            students=row.students,
            passed_submissions=row.passed,
            mean_score=row.mean_score,
        )
        for row in rows
    ]
