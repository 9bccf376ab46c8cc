"""What the submission routes do, apart from HTTP: accept (idempotently), look up, list."""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass, replace

from sqlalchemy import ColumnElement, delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, defer

from app.access import rules as access
from app.access.auth import Principal
from app.api.api_process import ApiProcess
from app.api.problems import (
    AttemptsUsedUp,
    IdempotencyKeyReused,
    RateLimited,
    SubmissionsClosed,
)
from app.api.submission_schemas import (
    QueuePlace,
    SubmissionAccepted,
    SubmissionCreate,
    SubmissionPage,
    SubmissionSummary,
)
from app.core.db import changed_rows
from app.core.logs import bound_submission
from app.core.models import Submission, SubmissionStatus, utcnow
from app.courses import budgets, due_dates
from app.courses.models import ExercisePolicy
from app.submissions import admission, fair_order
from app.submissions.following import queue_place

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Accepted:
    submission: Submission
    replayed: bool  # an earlier request with the same Idempotency-Key made it
    queue: QueuePlace | None  # its place in line as it was accepted; None once it was taken

    def answer(self) -> SubmissionAccepted:
        """The answer to a POST that is not graded yet: where it stands."""
        submission = self.submission
        return SubmissionAccepted(id=submission.id, status=submission.status, queue=self.queue)


def request_hash(body: SubmissionCreate) -> str:
    canonical = json.dumps(body.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def accept(
    api: ApiProcess,
    principal: Principal,
    body: SubmissionCreate,
    idempotency_key: str | None,
) -> Accepted:
    """Store the submission (committed) and hand it to the dispatcher; with its place in line.

    Order: replay of an Idempotency-Key first (a retry is answered even when limits would bite),
    then rate limits (429), the receipt (its time and lateness; 403 past a closed due date),
    the insert with the attempt budget (429) and its rank in line
    (app.submissions.fair_order), then admission (app.submissions.admission: 429 past a
    caller's submissions in flight, 503 past the disk's guard), the hand-over and the place in
    line. The budget is counted in the insert's transaction, under the student's lock
    (app.courses.budgets.lock_student), so concurrent requests cannot overshoot it; admission
    is counted after that commit, in the database that every API replica shares, and a refused
    row is withdrawn. A refusal leaves nothing behind. Two transactions of its own: the
    insert's, and admission's, which also reads the place in line (the scale-out dispatcher
    leases the submission later, from its own thread, once the broker took it).
    """
    digest = request_hash(body)
    if idempotency_key is not None:
        earlier = _replay(api, principal, idempotency_key, digest)
        if earlier is not None:
            return earlier
    student_id = access.submitting_as(principal, body.student_id)
    _check_rate_limits(api, principal, student_id)
    row = Submission(
        course_id=principal.course_id,
        exercise=body.exercise,
        source=body.source,
        student_id=student_id,
        callback_url=str(body.callback_url) if body.callback_url else None,
        api_key_id=principal.key_id,
        idempotency_scope=principal.scope if idempotency_key else None,
        idempotency_key=idempotency_key,
        request_hash=digest,
    )
    try:
        with api.database.session() as session:
            # Read once: it holds both the due date and the attempt budget.
            policy = session.get(ExercisePolicy, (row.course_id, row.exercise))
            _receive(session, principal, row, policy)
            row.queue_rank = fair_order.rank_at_accept(
                session, principal, row, api.settings.fair_window_s
            )
            _store_within_budget(session, principal, row, budgets.budget_in(policy))
    except IntegrityError:  # a concurrent request with the same key stored it first
        if idempotency_key is None:
            raise
        earlier = _replay(api, principal, idempotency_key, digest)
        if earlier is None:
            raise
        return earlier
    with bound_submission(row.id):
        log.info("accepted for %s", row.exercise, extra={"student_id": row.student_id})
        return Accepted(row, replayed=False, queue=_admit(api, row))


def _receive(
    session: Session, principal: Principal, row: Submission, policy: ExercisePolicy | None
) -> None:
    """Stamp the row with the moment it is received and how late that is for its student
    (app.courses.due_dates): what decides its lateness, whenever it is graded. Past a due date
    that closes the exercise, refuse it (but from the course's staff)."""
    received = utcnow()
    row.created_at = received
    due = due_dates.due_date_under(session, policy, row.course_id, row.exercise, row.student_id)
    if due is None:
        return
    if due.closed(received) and not access.is_staff_of(principal, principal.course_id):
        log.info("refused: past the due date", extra={"student_id": row.student_id})
        raise SubmissionsClosed(due_dates.closed_message(due))
    row.days_late = due.days_late(received)


def _store_within_budget(
    session: Session, principal: Principal, row: Submission, budget: budgets.Budget | None
) -> None:
    """Insert the row, unless its attempt `budget` (app.courses.budgets) is spent: then
    raise AttemptsUsedUp, and the transaction is rolled back. The count and the insert are one
    transaction under the student's lock, so of two requests for the last attempt, the one
    that takes the lock second counts the first and is refused."""
    student = row.student_id
    if student is None or budget is None or access.is_staff_of(principal, principal.course_id):
        session.add(row)
        return
    budgets.lock_student(session, row.course_id, row.exercise, student)
    session.add(row)
    session.flush()  # on SQLite, this write takes the database's lock: the count waits for it
    now = utcnow()
    charged = budgets.charged_times(session, row.course_id, row.exercise, student, excluding=row.id)
    standing = budgets.standing(budget, charged, now)
    if standing.remaining > 0 or standing.next_at is None:
        return
    log.info("refused: the attempt budget is spent", extra={"student_id": student})
    raise AttemptsUsedUp(
        budgets.used_up_message(budget, standing.next_at),
        (standing.next_at - now).total_seconds(),
    )


def _admit(api: ApiProcess, row: Submission) -> QueuePlace | None:
    """Admit the stored `row` (or withdraw it and raise the refusal), and read its place in
    line, in one transaction; then hand it over, outside any (a dispatcher may write, and a
    pooled connection is not held across its work). Graders take the head of the line, whichever
    id they were handed, so one may have taken a refused row already: then it stays, admitted,
    rather than spend that grader's turn on nothing (the turn another queued submission counts
    on)."""
    with api.database.session() as session:
        refusal = admission.refusal(api.settings, session, row)
        withdrawn = refusal is not None and _withdrawn(session, row.id)
        place = None if withdrawn else queue_place(api, session, row)
    if refusal is not None and withdrawn:
        log.info("withdrawn: %s", refusal.title)
        raise refusal
    if refusal is not None:
        log.info("admitted after all: a grader took it before it could be withdrawn")
    api.dispatcher.submit(row.id)
    return place


def _withdrawn(session: Session, submission_id: str) -> bool:
    """Delete the stored submission unless a grader took it: a refusal leaves nothing behind."""
    deleted = session.execute(
        delete(Submission).where(
            Submission.id == submission_id, Submission.status == SubmissionStatus.QUEUED
        )
    )
    return changed_rows(deleted) == 1


def _replay(api: ApiProcess, principal: Principal, key: str, digest: str) -> Accepted | None:
    with api.database.session() as session:
        earlier = session.scalars(
            select(Submission).where(
                Submission.idempotency_scope == principal.scope,
                Submission.idempotency_key == key,
            )
        ).one_or_none()
        if earlier is None:
            return None
        if earlier.request_hash != digest:
            raise IdempotencyKeyReused(
                "this Idempotency-Key was used with another request body; use a new key"
            )
        return Accepted(earlier, replayed=True, queue=queue_place(api, session, earlier))


def _check_rate_limits(api: ApiProcess, principal: Principal, student_id: str | None) -> None:
    wait = api.key_limiter.acquire(principal.scope)
    if wait is not None:
        raise RateLimited(
            f"this client may submit {api.key_limiter.per_minute} times a minute", wait
        )
    if student_id is not None:
        wait = api.student_limiter.acquire(f"{principal.scope}|{student_id}")
        if wait is not None:
            raise RateLimited(
                f"student {student_id!r} may submit "
                f"{api.student_limiter.per_minute} times a minute",
                wait,
            )


def reread(api: ApiProcess, accepted: Accepted) -> Accepted:
    """The accepted submission as stored now, with its place in line now (as it was if it has
    gone since)."""
    with api.database.session() as session:
        submission = session.get(Submission, accepted.submission.id)
        if submission is None:
            return accepted
        return replace(accepted, submission=submission, queue=queue_place(api, session, submission))


def history(
    session: Session, wanted: ColumnElement[bool], *, cursor: str | None, limit: int
) -> SubmissionPage:
    """The `wanted` submissions (what the caller may see, and its filters), newest first;
    `cursor` is the last id of the previous page (ids sort by creation)."""
    query = select(Submission).where(wanted).options(defer(Submission.source))  # no source
    if cursor is not None:
        query = query.where(Submission.id < cursor)
    rows = list(session.scalars(query.order_by(Submission.id.desc()).limit(limit + 1)))
    more = len(rows) > limit
    rows = rows[:limit]
    return SubmissionPage(
        items=[SubmissionSummary.from_row(row) for row in rows],
        next_cursor=rows[-1].id if more and rows else None,
    )
