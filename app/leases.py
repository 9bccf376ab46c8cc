"""Leases: who answers for an unfinished submission, kept on its row, the same on both paths.

    lease_holder = <process name>  that grader grades it; its heartbeat renews the lease every
                                   third of `worker_lease_s` and the finished grading drops it
                 = "dispatched"    a dispatcher handed it over (to the broker, or to its own
                                   queue) and answers for it until the lease expires
    lease expired, or none         nobody: the sweeper (app.sweeper) dispatches it again

A grader claims a submission with one conditional UPDATE: a queued one, or a running one whose
grader's lease expired or that has run past `running_stale_after_s` (a wedged grader), so two
graders never both take it. Each claim counts an attempt; past `max_attempts` the grading job
ends it with an error report, so a submission that keeps killing its graders ends too.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, and_, case, func, or_, select, update

from app.db import Database, changed_rows
from app.models import Submission, SubmissionStatus, utcnow
from app.settings import AppSettings

DISPATCHED = "dispatched"


def process_name() -> str:
    # Unique per process on a host, and per container across hosts (their pid is often 1).
    return f"autograder-{os.getpid()}@{socket.gethostname()}"


@dataclass(frozen=True)
class Claim:
    exercise: str
    source: str
    attempts: int


class Held:
    """The submissions this process grades now: the ones its heartbeat renews."""

    def __init__(self) -> None:
        self._ids: set[str] = set()
        self._lock = threading.Lock()

    def add(self, submission_id: str) -> None:
        with self._lock:
            self._ids.add(submission_id)

    def discard(self, submission_id: str) -> None:
        with self._lock:
            self._ids.discard(submission_id)

    def snapshot(self) -> list[str]:
        with self._lock:
            return sorted(self._ids)


def _expired(now: datetime) -> ColumnElement[bool]:
    return or_(Submission.lease_expires_at.is_(None), Submission.lease_expires_at < now)


class Leases:
    def __init__(self, database: Database, settings: AppSettings) -> None:
        self._database = database
        self._lease = timedelta(seconds=settings.worker_lease_s)
        self._stale = timedelta(seconds=settings.running_stale_after_s)

    def _wedged(self, now: datetime) -> ColumnElement[bool]:
        return and_(
            Submission.status == SubmissionStatus.RUNNING,
            Submission.started_at < now - self._stale,
        )

    def claim(self, submission_id: str, holder: str) -> Claim | None:
        """Take the submission to grade it (attempts + 1), or None when it is not claimable:
        done, unknown, or running under a live lease."""
        now = utcnow()
        claimable = or_(
            Submission.status == SubmissionStatus.QUEUED,
            and_(Submission.status == SubmissionStatus.RUNNING, _expired(now)),
            self._wedged(now),
        )
        with self._database.session() as session:
            taken = session.execute(
                update(Submission)
                .where(Submission.id == submission_id, claimable)
                .values(
                    status=SubmissionStatus.RUNNING,
                    attempts=Submission.attempts + 1,
                    started_at=now,
                    lease_holder=holder,
                    lease_expires_at=now + self._lease,
                )
                .execution_options(synchronize_session=False)
            )
            if changed_rows(taken) != 1:
                return None
            row = session.execute(
                select(Submission.exercise, Submission.source, Submission.attempts).where(
                    Submission.id == submission_id
                )
            ).one()
        return Claim(exercise=row.exercise, source=row.source, attempts=row.attempts)

    def renew(self, submission_ids: Iterable[str], holder: str) -> None:
        """Extend the leases this holder still has (a lease the sweeper took back stays lost)."""
        ids = list(submission_ids)
        if not ids:
            return
        with self._database.session() as session:
            session.execute(
                update(Submission)
                .where(Submission.id.in_(ids), Submission.lease_holder == holder)
                .values(lease_expires_at=utcnow() + self._lease)
                .execution_options(synchronize_session=False)
            )

    def orphans(self) -> list[str]:
        """Unfinished submissions nobody answers for, oldest first: an expired lease (a grader
        killed, a message lost, an API that died between its commit and its send) or a wedged
        grader. A row younger than a lease is left alone: its dispatcher may be sending it."""
        now = utcnow()
        query = select(Submission.id).where(self._orphaned(now)).order_by(Submission.id)
        with self._database.session() as session:
            return list(session.scalars(query))

    def _orphaned(self, now: datetime) -> ColumnElement[bool]:
        settled = func.coalesce(Submission.started_at, Submission.created_at) < now - self._lease
        return and_(
            Submission.status != SubmissionStatus.DONE,
            settled,
            or_(_expired(now), and_(self._wedged(now), Submission.lease_holder != DISPATCHED)),
        )

    def take(self, submission_id: str) -> bool:
        """Answer for an orphan before dispatching it again, unless another sweeper did: one
        conditional UPDATE. A dead grader's row goes back to queued (keeping its attempts); a
        wedged one stays running, claimable as it is, and its grader can no longer renew."""
        now = utcnow()
        with self._database.session() as session:
            taken = session.execute(
                update(Submission)
                .where(Submission.id == submission_id, self._orphaned(now))
                .values(
                    status=case(
                        (self._wedged(now), SubmissionStatus.RUNNING),
                        else_=SubmissionStatus.QUEUED,
                    ),
                    lease_holder=DISPATCHED,
                    lease_expires_at=now + self._lease,
                )
                .execution_options(synchronize_session=False)
            )
        return changed_rows(taken) == 1

    def dispatched(self, submission_id: str, for_s: float) -> None:
        """A dispatcher handed the queued submission over and answers for it `for_s` seconds;
        a grader that claimed it meanwhile keeps its own lease."""
        now = utcnow()
        with self._database.session() as session:
            session.execute(
                update(Submission)
                .where(
                    Submission.id == submission_id,
                    Submission.status == SubmissionStatus.QUEUED,
                    or_(_expired(now), Submission.lease_holder == DISPATCHED),
                )
                .values(lease_holder=DISPATCHED, lease_expires_at=now + timedelta(seconds=for_s))
                .execution_options(synchronize_session=False)
            )

    def release_all(self) -> list[str]:
        """For a process that is the only grader of its database (the embedded service, at
        start): every lease died with the last process. Running rows go back to queued with
        their attempts; returns every unfinished submission, oldest first."""
        with self._database.session() as session:
            session.execute(
                update(Submission)
                .where(Submission.status != SubmissionStatus.DONE)
                .values(status=SubmissionStatus.QUEUED, lease_holder=None, lease_expires_at=None)
                .execution_options(synchronize_session=False)
            )
            return list(
                session.scalars(
                    select(Submission.id)
                    .where(Submission.status != SubmissionStatus.DONE)
                    .order_by(Submission.id)
                )
            )

    def depth(self, limit_s: float | None = None) -> int:
        """Submissions accepted and not finished, deployment-wide: the queue's depth."""
        return self.unfinished(course_id=None, limit_s=limit_s)[0]

    def unfinished(self, course_id: int | None, limit_s: float | None = None) -> tuple[int, int]:
        """Submissions accepted and not finished: deployment-wide, and of one course; counted
        within `limit_s` if given (app.db.Database.session)."""
        of_course = func.coalesce(
            func.sum(case((Submission.course_id == course_id, 1), else_=0)), 0
        )
        with self._database.session(limit_s) as session:
            row = session.execute(
                select(func.count(), of_course)
                .select_from(Submission)
                .where(Submission.status != SubmissionStatus.DONE)
            ).one()
        return int(row[0]), int(row[1])
