"""Fair order: the rank a submission takes in the line of queued submissions when it is accepted.

Graders take queued submissions in order of (queue_rank, id) (app.grading.leases.Leases.claim_next),
so the rank decides who goes first at a deadline: the number of the same student's submissions
in the course within `fair_window_s` before this one. A student's first submission ranks 0 and
goes before anyone's fifth of the same minute (rank 4); within a rank, the older goes first.
Regrades are not in this line: they yield to it (app.regrades.runner).
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.orm import Session

from app.access import rules as access
from app.access.auth import Principal
from app.core.models import Submission, first_id_made_at, utcnow


def rank_at_accept(session: Session, principal: Principal, row: Submission, window_s: float) -> int:
    """The rank of `row`, about to be stored, counted in the transaction that stores it."""
    since = first_id_made_at(utcnow() - timedelta(seconds=window_s))
    recent = session.scalar(
        select(func.count())
        .select_from(Submission)
        .where(
            Submission.course_id == row.course_id,
            same_submitter(row.student_id, row.api_key_id),
            Submission.id >= since,
        )
    )
    if row.student_id is None or access.is_staff_of(principal, row.course_id):
        # Staff trying an exercise and an integration's batch can wait a few seconds; a student
        # at a deadline is waiting for a first verdict. So they go behind every student's first
        # submission, as if they had submitted once already.
        return (recent or 0) + 1
    return recent or 0


def same_submitter(student_id: str | None, api_key_id: int | None) -> ColumnElement[bool]:
    """Submissions of the same submitter: the same student, or, for submissions that name no
    student, the same API key's (the open service's have none, and count as one submitter)."""
    if student_id is not None:
        return Submission.student_id == student_id
    return Submission.student_id.is_(None) & Submission.api_key_id.is_not_distinct_from(api_key_id)
