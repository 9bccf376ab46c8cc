"""Leases: who answers for unfinished work, kept on its row; one model for every kind of work.

Work is a row of a leased table (app.core.models.Leased): a submission to grade, a regrade to run.

    lease_holder = <process name>  that process works on it: its heartbeat (`renew_held`) renews
                                   the lease every third of `worker_lease_s`, and the work's end
                                   drops it
                 = "dispatched"    a dispatcher handed the submission over (to the broker, or to
                                   its own queue) and answers for it until the lease expires
    lease expired, or none         nobody: anyone may take it (the sweeper, app.grading.sweeper,
                                   dispatches such a submission again; any runner goes on with
                                   such a regrade)

`LeaseTable` writes these columns, the same for every table: a process takes a row with one
conditional UPDATE (`hold`), so two never both take it; only the holder renews it; and the
work's end (or the only grader of a database at start) drops the lease in the UPDATE that sets
the row's status (`drop`).

A grader claims a submission: a queued one, or a running one whose grader's lease expired or
that has run past `running_stale_after_s` (a wedged grader). Handed an id, it claims the head
of the line of queued submissions, in order of (queue_rank, id), whichever id it was handed
(`claim_next`; app.submissions.fair_order sets the rank), and the handed one only when none is
queued. Each claim counts an attempt; past `max_attempts` the grading job ends it with an error
report, so a submission that keeps killing its graders ends too.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, and_, case, false, func, or_, select, update
from sqlalchemy.orm import Session

from app.core.db import Database, changed_rows
from app.core.models import Leased, Submission, SubmissionStatus, utcnow
from app.core.settings import AppSettings

DISPATCHED = "dispatched"


def process_name() -> str:
    # Unique per process on a host, and per container across hosts (their pid is often 1).
    return f"autograder-{os.getpid()}@{socket.gethostname()}"


@dataclass(frozen=True)
class LeaseTable:
    """The leases on one table's rows, as every kind of work holds them."""

    model: type[Leased]

    def expired(self, now: datetime) -> ColumnElement[bool]:
        expires = self.model.lease_expires_at
        return or_(expires.is_(None), expires < now)

    def hold(
        self,
        session: Session,
        row_id: str,
        where: ColumnElement[bool],
        holder: str,
        until: datetime,
        **values: Any,
    ) -> bool:
        """`holder` answers for the row until `until` (and sets `values` with it) if `where`
        holds for it: one conditional UPDATE, so of two processes taking it one does."""
        model = self.model
        taken = session.execute(
            update(model)
            .where(model.id == row_id, where)
            .values(lease_holder=holder, lease_expires_at=until, **values)
            .execution_options(synchronize_session=False)
        )
        return changed_rows(taken) == 1

    def renew(self, session: Session, row_ids: Iterable[str], holder: str, until: datetime) -> None:
        """Extend the leases this holder still has (a lease taken back stays lost)."""
        ids = list(row_ids)
        if ids:
            session.execute(
                update(self.model)
                .where(self.model.id.in_(ids), self.model.lease_holder == holder)
                .values(lease_expires_at=until)
                .execution_options(synchronize_session=False)
            )

    def drop(self, session: Session, *where: ColumnElement[bool], **values: Any) -> int:
        """Finish the work where `where` holds (`values`: its status, its result) and drop its
        lease, in one UPDATE; returns how many rows it changed."""
        return changed_rows(
            session.execute(
                update(self.model)
                .where(*where)
                .values(lease_holder=None, lease_expires_at=None, **values)
                .execution_options(synchronize_session=False)
            )
        )


SUBMISSIONS = LeaseTable(Submission)


class Held:
    """The rows this process works on now, of every leased table: what its heartbeat renews."""

    def __init__(self) -> None:
        self._rows: dict[LeaseTable, set[str]] = {}
        self._lock = threading.Lock()

    def add(self, table: LeaseTable, row_id: str) -> None:
        with self._lock:
            self._rows.setdefault(table, set()).add(row_id)

    def discard(self, table: LeaseTable, row_id: str) -> None:
        with self._lock:
            self._rows.get(table, set()).discard(row_id)

    def snapshot(self) -> dict[LeaseTable, list[str]]:
        with self._lock:
            return {table: sorted(ids) for table, ids in self._rows.items() if ids}


def renew_held(database: Database, held: Held, holder: str, lease_s: float) -> None:
    """One beat of a process's heartbeat: every lease it holds, of every table, extended."""
    rows = held.snapshot()
    if not rows:
        return
    until = utcnow() + timedelta(seconds=lease_s)
    with database.session() as session:
        for table, ids in rows.items():
            table.renew(session, ids, holder, until)


@dataclass(frozen=True)
class Claim:
    submission_id: str
    course_id: int
    exercise: str
    source: str
    attempts: int


class Leases:
    """Submissions' leases: claimed by graders, handed over by dispatchers, taken back by the
    sweeper."""

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
            and_(Submission.status == SubmissionStatus.RUNNING, SUBMISSIONS.expired(now)),
            self._wedged(now),
        )
        with self._database.session() as session:
            return self._take_to_grade(session, submission_id, claimable, holder, now)

    def claim_next(self, handed_id: str, holder: str) -> Claim | None:
        """Take the first queued submission in line, in order of (queue_rank, id): the handed
        one or one ahead of it in line; when none is queued, the handed one as `claim` does (a
        stale running one the sweeper sent again). A head that another grader takes first (or
        that its request withdrew) is passed over: each pass through the loop finds the line
        shorter by one."""
        queued = Submission.status == SubmissionStatus.QUEUED
        head_of_line = (
            select(Submission.id).where(queued).order_by(Submission.queue_rank, Submission.id)
        ).limit(1)
        while True:
            with self._database.session() as session:
                # PostgreSQL: a head that another transaction holds is skipped rather than
                # waited for. When every queued row is held, this turn waits for one: skipped,
                # a row whose API was still writing its hand-over's lease (the API's own turn,
                # handed to another grader first) would be left with no turn to grade it.
                # SQLite has one writer, and the conditional UPDATE decides.
                head = session.scalar(head_of_line.with_for_update(skip_locked=True))
                if head is None:
                    head = session.scalar(head_of_line.with_for_update())
                if head is None:
                    break
                taken = self._take_to_grade(session, head, queued, holder, utcnow())
            if taken is not None:
                return taken
        return self.claim(handed_id, holder)

    def _take_to_grade(
        self,
        session: Session,
        submission_id: str,
        claimable: ColumnElement[bool],
        holder: str,
        now: datetime,
    ) -> Claim | None:
        if not SUBMISSIONS.hold(
            session,
            submission_id,
            claimable,
            holder,
            now + self._lease,
            status=SubmissionStatus.RUNNING,
            attempts=Submission.attempts + 1,
            started_at=now,
        ):
            return None
        row = session.execute(
            select(
                Submission.course_id, Submission.exercise, Submission.source, Submission.attempts
            ).where(Submission.id == submission_id)
        ).one()
        return Claim(submission_id, row.course_id, row.exercise, row.source, row.attempts)

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
            or_(
                SUBMISSIONS.expired(now),
                and_(self._wedged(now), Submission.lease_holder != DISPATCHED),
            ),
        )

    def take(self, submission_id: str) -> bool:
        """Answer for an orphan before dispatching it again, unless another sweeper did: one
        conditional UPDATE. A dead grader's row goes back to queued (keeping its attempts); a
        wedged one stays running, claimable as it is, and its grader can no longer renew."""
        now = utcnow()
        with self._database.session() as session:
            return SUBMISSIONS.hold(
                session,
                submission_id,
                self._orphaned(now),
                DISPATCHED,
                now + self._lease,
                status=case(
                    (self._wedged(now), SubmissionStatus.RUNNING),
                    else_=SubmissionStatus.QUEUED,
                ),
            )

    def dispatched(self, submission_ids: Iterable[str], for_s: float) -> None:
        """A dispatcher handed the queued submissions over and answers for them `for_s`
        seconds, in one transaction; a grader that claimed one meanwhile keeps its own lease."""
        now = utcnow()
        handed_over = and_(
            Submission.status == SubmissionStatus.QUEUED,
            or_(SUBMISSIONS.expired(now), Submission.lease_holder == DISPATCHED),
        )
        until = now + timedelta(seconds=for_s)
        with self._database.session() as session:
            for submission_id in submission_ids:
                SUBMISSIONS.hold(session, submission_id, handed_over, DISPATCHED, until)

    def release_all(self) -> list[str]:
        """For a process that is the only grader of its database (the embedded service, at
        start): every lease died with the last process. Running rows go back to queued with
        their attempts; returns every unfinished submission, oldest first."""
        unfinished = Submission.status != SubmissionStatus.DONE
        with self._database.session() as session:
            SUBMISSIONS.drop(session, unfinished, status=SubmissionStatus.QUEUED)
            return list(
                session.scalars(select(Submission.id).where(unfinished).order_by(Submission.id))
            )

    def depth(self, limit_s: float | None = None) -> int:
        """Submissions accepted and not finished, deployment-wide: the queue's depth; counted
        within `limit_s` if given (app.core.db.Database.session)."""
        with self._database.session(limit_s) as session:
            return count_unfinished(session, None)[0]


def count_unfinished(session: Session, of: ColumnElement[bool] | None) -> tuple[int, int]:
    """Submissions accepted and not finished: deployment-wide, and those where `of` holds (one
    caller's)."""
    mine = func.coalesce(func.sum(case((of if of is not None else false(), 1), else_=0)), 0)
    # IN rather than != done: the status index then reads the unfinished rows only, not every
    # row the deployment ever graded.
    unfinished = Submission.status.in_((SubmissionStatus.QUEUED, SubmissionStatus.RUNNING))
    query = select(func.count(), mine).select_from(Submission).where(unfinished)
    depth, of_them = session.execute(query).one()
    return int(depth), int(of_them)
