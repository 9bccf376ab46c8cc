"""The regrade runner: background work that only fills the gaps students' work leaves.

Every process that grades runs one (the embedded API, over its grader; each `autograder worker`
in scale-out; an API that does not grade runs none). Each `regrade_poll_s`, and on as long as
it makes progress, it

    yields    while a student's submission waits for a grader anywhere (one is queued in the
              database), or while students' gradings hold every sandbox slot of this process
    holds     one active regrade under a lease (app.grading.leases, as a submission is held): a
              queued one, one whose runner's lease expired (that runner died), or its own;
              the process's heartbeat renews it with the submissions it grades
    grades    the next submission after the cursor, with the grader students' work uses, and
              keeps its report (app.regrades.store), the progress in the same transaction
    finishes  the regrade when no submission is left after its cursor

Priority. A regrade grades one submission at a time, and only when no student's submission is
queued and this process has a free sandbox slot: a student's submission waits at most for the
one regrade grading in flight when it came, never behind the rest of the regrade. The test is
the database, the same in both modes: a submission is stored queued before anything dispatches
it, and stays queued until a grader claims it, which makes it running under that grader's name
(app.grading.leases); fewer such rows under this process's name than it has slots is a free slot. In
scale-out that covers every worker's backlog: the messages in the broker and those a worker
prefetched. A second Celery
queue of lower priority would not give that: Redis orders priorities only approximately, a
worker that took a regrade's message holds a slot with it while students' messages wait, and
the regrade's progress would live in the broker, where a lost message loses it.

Resuming. Progress is committed with each submission, so a stopped runner loses at most the
grading in flight; its lease expires and another runner (or the embedded API restarted, which
as the only grader of its database releases the leases at start) goes on after the cursor. A
runner that lost the lease meanwhile stores nothing (app.regrades.store).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum

from sqlalchemy import ColumnElement, case, func, or_, select
from sqlalchemy.orm import Session

from app.core.db import Database
from app.core.models import Submission, SubmissionStatus, utcnow
from app.core.periodic import Periodic
from app.grading.job import GradingContext, grade_source
from app.regrades.models import REGRADES, Regrade, RegradeStatus
from app.regrades.service import ACTIVE, covered
from app.regrades.store import LostRegrade, OnRegraded, Position, keep

log = logging.getLogger(__name__)


class Step(StrEnum):
    """What one step did."""

    GRADED = "graded"  # one submission graded again, and the progress committed
    FINISHED = "finished"  # the regrade held had nothing left: it is done
    LOST = "lost"  # the regrade was cancelled or taken over: what was graded is dropped
    YIELDED = "yielded"  # students' submissions first: nothing done
    IDLE = "idle"  # no regrade to run


_GOING_ON = (Step.GRADED, Step.FINISHED, Step.LOST)


@dataclass(frozen=True)
class _Held:
    regrade_id: str
    course_id: int
    exercise: str
    student_id: str | None
    last_id: str
    cursor: str | None


def release_regrades(database: Database) -> None:
    """For the only grader of its database (the embedded API, at start): the leases on
    regrades died with the last process, so they are taken at once, not after they expire."""
    with database.session() as session:
        REGRADES.drop(session, Regrade.status.in_(ACTIVE))


class RegradeRunner:
    def __init__(self, context: GradingContext, on_regraded: Sequence[OnRegraded] = ()) -> None:
        self._context = context
        self._on_regraded = on_regraded
        self._database = context.database
        self._settings = context.settings
        self._lease = timedelta(seconds=self._settings.worker_lease_s)
        self._held: str | None = None  # the regrade this runner holds
        self._closing = threading.Event()
        self._loop = Periodic("regrades", self._settings.regrade_poll_s, self.run)

    def start(self) -> None:
        self._loop.start()

    def close(self) -> None:
        """Stop after the grading in flight (bounded): the regrade resumes after its cursor."""
        self._closing.set()
        self._loop.close(timeout_s=self._settings.shutdown_grace_s)

    def run(self) -> None:
        """Step on while steps make progress."""
        while not self._closing.is_set() and self.step() in _GOING_ON:
            pass

    def step(self) -> Step:
        """Grade one submission of a regrade again, if students leave room for it."""
        if self._students_first():
            return Step.YIELDED
        held = self._hold()
        if held is None:
            return Step.IDLE
        following = self._next(held)
        if following is None:
            self._finish(held)
            return Step.FINISHED
        submission_id, source = following
        graded = grade_source(self._context.grader, held.exercise, source)
        position = Position(held.regrade_id, self._context.holder, held.cursor)
        try:
            with self._database.session() as session:
                kept = keep(session, position, submission_id, graded, self._on_regraded)
        except LostRegrade:
            log.info("regrade %s is no longer ours; its last grading is dropped", held.regrade_id)
            self._holding(None)
            return Step.LOST
        log.info(
            "regrade %s: %s graded again, %s",
            held.regrade_id,
            submission_id,
            "score changed" if kept.changed else "score unchanged",
            extra={"submission_id": submission_id},
        )
        self._context.on_done(submission_id, kept.outbox_due)
        return Step.GRADED

    def _holding(self, regrade_id: str | None) -> None:
        """The regrade this runner holds now, renewed by its process's heartbeat."""
        if self._held is not None:
            self._context.held.discard(REGRADES, self._held)
        self._held = regrade_id
        if regrade_id is not None:
            self._context.held.add(REGRADES, regrade_id)

    def _students_first(self) -> bool:
        """Whether a student's submission waits for a grader, or this process's gradings of
        students' submissions hold its every sandbox slot. Read from the rows: a claim turns a
        queued row into one running under this process's name in one UPDATE (app.grading.leases), so
        no submission is ever neither."""
        waiting = func.sum(case((Submission.status == SubmissionStatus.QUEUED, 1), else_=0))
        mine = func.sum(case((Submission.lease_holder == self._context.holder, 1), else_=0))
        with self._database.session() as session:
            queued, graded_here = session.execute(
                select(waiting, mine).where(Submission.status != SubmissionStatus.DONE)
            ).one()
        return bool(queued) or (graded_here or 0) >= self._settings.sandbox_slots

    def _hold(self) -> _Held | None:
        """The regrade this runner holds, or one it may take, under a renewed lease."""
        now, holder = utcnow(), self._context.holder
        free = or_(Regrade.lease_holder == holder, REGRADES.expired(now))
        takeable = Regrade.status.in_(ACTIVE) & free
        with self._database.session() as session:
            candidates = session.scalars(
                select(Regrade.id)
                .where(takeable)
                .order_by(case((Regrade.lease_holder == holder, 0), else_=1), Regrade.id)
            ).all()
            for regrade_id in candidates:
                if REGRADES.hold(
                    session,
                    regrade_id,
                    takeable,
                    holder,
                    now + self._lease,
                    status=RegradeStatus.RUNNING,
                ):
                    self._holding(regrade_id)
                    return _read(session, regrade_id)
        self._holding(None)
        return None

    def _next(self, held: _Held) -> tuple[str, str] | None:
        query = select(Submission.id, Submission.source).where(
            *covered(held.course_id, held.exercise, held.student_id), Submission.id <= held.last_id
        )
        if held.cursor is not None:
            query = query.where(Submission.id > held.cursor)
        with self._database.session() as session:
            row = session.execute(query.order_by(Submission.id).limit(1)).one_or_none()
        return None if row is None else (row.id, row.source)

    def _finish(self, held: _Held) -> None:
        with self._database.session() as session:
            REGRADES.drop(
                session,
                self._mine(held.regrade_id),
                status=RegradeStatus.DONE,
                finished_at=utcnow(),
            )
        self._holding(None)
        log.info("regrade %s done", held.regrade_id)

    def _mine(self, regrade_id: str) -> ColumnElement[bool]:
        return (
            (Regrade.id == regrade_id)
            & (Regrade.status == RegradeStatus.RUNNING)
            & (Regrade.lease_holder == self._context.holder)
        )


def _read(session: Session, regrade_id: str) -> _Held:
    row = session.execute(
        select(
            Regrade.course_id,
            Regrade.exercise,
            Regrade.student_id,
            Regrade.last_id,
            Regrade.cursor,
        ).where(Regrade.id == regrade_id)
    ).one()
    assert row.last_id is not None  # a regrade that covers nothing is done when created
    return _Held(regrade_id, row.course_id, row.exercise, row.student_id, row.last_id, row.cursor)
