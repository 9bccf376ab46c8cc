"""A course's regrades as its staff ask for them: create (or find the active one), list, cancel;
and a submission's past reports. The work itself is app.regrades.runner's."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import ColumnElement, case, func, select
from sqlalchemy.orm import Session

from app.api.problems import RegradeNotFound, SubmissionNotFound
from app.core.models import Course, Submission, SubmissionStatus, utcnow
from app.regrades.models import REGRADES, PastReport, Regrade, RegradeStatus
from app.regrades.schemas import RegradeReason
from app.staff.scores import outdated

ACTIVE = (RegradeStatus.QUEUED, RegradeStatus.RUNNING)
# A course's regrades listed at most (newest first).
LISTED = 100


def covered(course_id: int, exercise: str, student_id: str | None) -> list[ColumnElement[bool]]:
    """The submissions a regrade covers, up to its `last_id`: the exercise's finished ones in
    the course, or one student's."""
    conditions = [
        Submission.course_id == course_id,
        Submission.exercise == exercise,
        Submission.status == SubmissionStatus.DONE,
    ]
    if student_id is not None:
        conditions.append(Submission.student_id == student_id)
    return conditions


@dataclass(frozen=True)
class Requested:
    regrade: Regrade
    created: bool  # False: the active regrade of the same submissions, asked again


def request(  # noqa: PLR0917 (what a regrade is of, and who asks)
    session: Session,
    course_id: int,
    exercise: str,
    version: str,
    student_id: str | None,
    requested_by: int | None,
) -> Requested:
    """A regrade of the exercise's finished submissions (one student's, if named) up to the
    newest now, counted now; or the active regrade of the same ones. `version`: the exercise's
    version served now (the reason says whether any was graded with another)."""
    # One request at a time per course (its row locked), so two at once make one regrade.
    session.execute(select(Course.id).where(Course.id == course_id).with_for_update())
    same = Regrade.student_id.is_(None) if student_id is None else Regrade.student_id == student_id
    active = session.scalars(
        select(Regrade)
        .where(
            Regrade.course_id == course_id,
            Regrade.exercise == exercise,
            same,
            Regrade.status.in_(ACTIVE),
        )
        .order_by(Regrade.id)
    ).first()
    if active is not None:
        return Requested(active, created=False)
    other_version = func.sum(case((outdated(version), 1), else_=0))
    last_id, total, other_versions = session.execute(
        select(func.max(Submission.id), func.count(), other_version).where(
            *covered(course_id, exercise, student_id)
        )
    ).one()
    regrade = Regrade(
        course_id=course_id,
        exercise=exercise,
        student_id=student_id,
        reason=RegradeReason.NEW_VERSION if other_versions else RegradeReason.REQUESTED,
        last_id=last_id,
        total=total,
        graded=0,
        changed=0,
        requested_by=requested_by,
        # Nothing to grade again: done as it starts.
        status=RegradeStatus.QUEUED if total else RegradeStatus.DONE,
        finished_at=None if total else utcnow(),
    )
    session.add(regrade)
    session.flush()
    return Requested(regrade, created=True)


def course_regrades(session: Session, course_id: int, exercise: str | None) -> list[Regrade]:
    """The course's regrades (of one exercise, if named), newest first."""
    query = select(Regrade).where(Regrade.course_id == course_id)
    if exercise is not None:
        query = query.where(Regrade.exercise == exercise)
    return list(session.scalars(query.order_by(Regrade.id.desc()).limit(LISTED)))


def find(session: Session, course_id: int, regrade_id: str) -> Regrade:
    row = session.get(Regrade, regrade_id)
    if row is None or row.course_id != course_id:
        raise RegradeNotFound(f"this course has no regrade {regrade_id!r}")
    return row


def cancel(session: Session, regrade: Regrade) -> Regrade:
    """Stop an active regrade where it is: what it graded stays, the grading in flight (if
    any) is dropped (app.regrades.store). A finished one stays as it ended."""
    REGRADES.drop(
        session,
        Regrade.id == regrade.id,
        Regrade.status.in_(ACTIVE),
        status=RegradeStatus.CANCELLED,
        finished_at=utcnow(),
    )
    session.refresh(regrade)
    return regrade


def past_reports(session: Session, course_id: int, submission_id: str) -> list[PastReport]:
    """The reports a submission of the course had before regrades replaced them, newest first."""
    exists = session.scalar(
        select(Submission.id).where(
            Submission.id == submission_id, Submission.course_id == course_id
        )
    )
    if exists is None:
        raise SubmissionNotFound(f"this course has no submission {submission_id!r}")
    return list(
        session.scalars(
            select(PastReport)
            .where(PastReport.submission_id == submission_id)
            .order_by(PastReport.id.desc())
        )
    )
