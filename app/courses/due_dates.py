"""Due dates: when a student's submissions to an exercise are due, and what a late one gets.

due date     a student's, for an exercise of a course: the first there is of their
             extension (app.courses.models.DueExtension, set by staff), the LMS's (its line
             item's endDateTime, read at each launch: app.lti.due_dates) and the course's
             (the exercise policy's `due_at`, set by staff)
lateness     decided when a submission is received (app.submissions.service.accept), and
             stored with it: `days_late`, the days (whole or begun) from the due date to its
             receipt. Grading comes after and changes nothing, so a queue at the deadline
             makes nobody late. A new due date (an extension, a policy's) decides again the
             lateness of the stored submissions it covers (`decide_again`).
late policy  accept: graded in full, marked late; penalty: `penalty_per_day` percent off
             per day late, never below 0 (applied where a score counts: the gradebook,
             app.staff.scores, and the LMS passback); close: refused after the due date
             (course staff, who try exercises out, are not)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from sqlalchemy import ColumnElement, case, func, literal, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, aliased
from sqlalchemy.sql.elements import SQLCoreOperations

from app.core.models import Submission
from app.courses.models import DueExtension, ExercisePolicy, LatePolicy

DAY = timedelta(days=1)


class DueSource(StrEnum):
    """Where a student's due date comes from."""

    EXTENSION = "extension"
    LMS = "lms"
    COURSE = "course"


@dataclass(frozen=True)
class DueDate:
    due_at: datetime
    source: DueSource
    late_policy: LatePolicy
    penalty_per_day: float | None

    def days_late(self, received: datetime) -> int:
        return days_late(received, self.due_at)

    def closed(self, now: datetime) -> bool:
        """Whether a submission received `now` is refused."""
        return self.late_policy is LatePolicy.CLOSE and now > self.due_at


def days_late(received: datetime, due_at: datetime) -> int:
    """0 when received by the due date, else the days after it, a begun day counting whole."""
    if received <= due_at:
        return 0
    return math.ceil((received - due_at) / DAY)


def penalty_factor(late_policy: LatePolicy, penalty_per_day: float | None, days: int) -> float:
    """What share of its score a submission `days` late keeps."""
    if late_policy is not LatePolicy.PENALTY or penalty_per_day is None:
        return 1.0
    return max(0.0, 1.0 - days * penalty_per_day / 100)


@dataclass(frozen=True)
class Lateness:
    """A stored submission's lateness, under its exercise's late policy now."""

    days: int
    late_policy: LatePolicy
    penalty_per_day: float | None

    @property
    def factor(self) -> float:
        return penalty_factor(self.late_policy, self.penalty_per_day, self.days)

    def note(self, score: float, max_score: float) -> str:
        """What a gradebook comment says of it ("" when on time)."""
        if self.days == 0:
            return ""
        days = "1 day" if self.days == 1 else f"{self.days} days"
        if self.factor == 1.0:
            return f"Late by {days}."
        kept = score * self.factor
        return (
            f"Late by {days}: {kept:g} of {max_score:g} after {100 * (1 - self.factor):g}% off "
            f"({score:g} before)."
        )


def lateness_of(session: Session, submission: Submission) -> Lateness:
    policy = session.get(ExercisePolicy, (submission.course_id, submission.exercise))
    if policy is None:
        return Lateness(submission.days_late, LatePolicy.ACCEPT, None)
    return Lateness(submission.days_late, policy.late_policy, policy.penalty_per_day)


def penalised_score(
    score: SQLCoreOperations[Any],
    days: SQLCoreOperations[Any],
    course_id: int,
    exercise: SQLCoreOperations[Any],
) -> ColumnElement[Any]:
    """`penalty_factor` in SQL: the score a submission `days` late keeps under its exercise's
    policy in the course. The policy is read for a late submission only (a scalar subquery
    that the many on time never run), so a course's grouped scores cost what they did."""
    policy = aliased(ExercisePolicy)  # its own: never the policy row a caller joined
    off = days * func.coalesce(policy.penalty_per_day, literal(0.0)) / 100.0
    factor = (
        select(
            case(
                (policy.late_policy != LatePolicy.PENALTY.value, literal(1.0)),
                (off >= 1.0, literal(0.0)),
                else_=1.0 - off,
            )
        )
        .where(policy.course_id == course_id, policy.exercise == exercise)
        .scalar_subquery()
    )
    return case((days == 0, score), else_=score * func.coalesce(factor, literal(1.0)))


def _chosen(policy: ExercisePolicy | None, extension: DueExtension | None) -> DueDate | None:
    if policy is None and extension is None:
        return None
    late_policy = policy.late_policy if policy is not None else LatePolicy.ACCEPT
    penalty = policy.penalty_per_day if policy is not None else None
    candidates = (
        (extension.due_at if extension is not None else None, DueSource.EXTENSION),
        (policy.lms_due_at if policy is not None else None, DueSource.LMS),
        (policy.due_at if policy is not None else None, DueSource.COURSE),
    )
    for due_at, source in candidates:
        if due_at is not None:
            return DueDate(due_at, source, late_policy, penalty)
    return None


def due_date(
    session: Session, course_id: int, exercise: str, student_id: str | None
) -> DueDate | None:
    """The student's due date for the exercise (without a student: the course's), or None."""
    policy = session.get(ExercisePolicy, (course_id, exercise))
    return due_date_under(session, policy, course_id, exercise, student_id)


def due_date_under(
    session: Session,
    policy: ExercisePolicy | None,
    course_id: int,
    exercise: str,
    student_id: str | None,
) -> DueDate | None:
    """`due_date`, with the exercise's policy already read (None: it has none)."""
    extension = (
        None if student_id is None else session.get(DueExtension, (course_id, exercise, student_id))
    )
    return _chosen(policy, extension)


def closed_message(due: DueDate) -> str:
    """Why a student may not submit any more, in their words."""
    return (
        f"this exercise was due at {due.due_at:%Y-%m-%d %H:%M} UTC and takes no submissions "
        "after that. If you need more time, ask your instructor for an extension."
    )


def decide_again(
    session: Session, course_id: int, exercise: str, student_id: str | None = None
) -> list[str]:
    """Decide again, against the due dates as they are now, the lateness of the exercise's
    stored submissions in the course (of one student); the ids whose lateness changed."""
    wanted = [Submission.course_id == course_id, Submission.exercise == exercise]
    extensions = select(DueExtension).where(
        DueExtension.course_id == course_id, DueExtension.exercise == exercise
    )
    if student_id is not None:
        wanted.append(Submission.student_id == student_id)
        extensions = extensions.where(DueExtension.student_id == student_id)
    policy = session.get(ExercisePolicy, (course_id, exercise))
    granted = {row.student_id: row for row in session.scalars(extensions)}
    rows = session.execute(
        select(Submission.id, Submission.student_id, Submission.created_at, Submission.days_late)
        .where(*wanted)
        .order_by(Submission.id)
    )
    changes: list[dict[str, Any]] = []
    for submission_id, student, received, before in rows:
        due = _chosen(policy, granted.get(student) if student is not None else None)
        now_late = 0 if due is None else due.days_late(received)
        if now_late != before:
            changes.append({"id": submission_id, "days_late": now_late})
    if changes:
        session.execute(update(Submission), changes)
    return [change["id"] for change in changes]


def set_lms_due_date(
    session: Session, course_id: int, exercise: str, due_at: datetime | None
) -> None:
    """Keep the due date the LMS gives for the exercise in the course (None: it gives none), and
    decide again the lateness it covers when it changed."""
    policy = session.get(ExercisePolicy, (course_id, exercise))
    if policy is None:
        if due_at is None:
            return
        policy = _new_policy(session, course_id, exercise)
    if policy.lms_due_at == due_at:
        return
    policy.lms_due_at = due_at
    session.flush()
    decide_again(session, course_id, exercise)


def _new_policy(session: Session, course_id: int, exercise: str) -> ExercisePolicy:
    """The exercise's policy row with the defaults, made here or, when a launch of another
    student made it at the same moment (a class opening the link at once), theirs."""
    try:
        with session.begin_nested():
            session.add(ExercisePolicy(course_id=course_id, exercise=exercise))
    except IntegrityError:
        pass
    return session.get_one(ExercisePolicy, (course_id, exercise))


def grant_extension(
    session: Session, course_id: int, exercise: str, student_id: str, due_at: datetime
) -> list[str]:
    """Give the student their own due date; their submissions' lateness is decided again."""
    row = session.get(DueExtension, (course_id, exercise, student_id))
    if row is None:
        row = DueExtension(course_id=course_id, exercise=exercise, student_id=student_id)
        session.add(row)
    row.due_at = due_at
    session.flush()
    return decide_again(session, course_id, exercise, student_id)


def withdraw_extension(
    session: Session, course_id: int, exercise: str, student_id: str
) -> list[str] | None:
    """Take the student's extension back (None: they had none)."""
    row = session.get(DueExtension, (course_id, exercise, student_id))
    if row is None:
        return None
    session.delete(row)
    session.flush()
    return decide_again(session, course_id, exercise, student_id)


def extensions(session: Session, course_id: int, exercise: str) -> list[DueExtension]:
    return list(
        session.scalars(
            select(DueExtension)
            .where(DueExtension.course_id == course_id, DueExtension.exercise == exercise)
            .order_by(DueExtension.student_id)
        )
    )
