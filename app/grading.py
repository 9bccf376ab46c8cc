"""The grading job: the one function that grades a stored submission, whoever runs it.

`grade_submission(submission_id, context)` is called by the embedded dispatcher's threads and by
the scale-out worker's task alike. It claims the submission (queued → running, attempts + 1, in
one conditional UPDATE, so two graders never both take it), grades it, stores the report and
marks it done (only the first finisher writes), records a webhook delivery in the same
transaction, and only then hands the delivery to the sender and wakes any waiting request.

Durability: a submission is claimable again when it is `queued`, or `running` for longer than
`running_stale_after_s` (its grader died). Each claim counts an attempt; past `max_attempts` the
submission is finished with an explicit error report instead of being graded again. So a
submission is never lost and never stuck, provided someone dispatches unfinished work again:
`unfinished_submissions()` finds it (the embedded service does that at start-up and periodically;
in scale-out, app.scaleout.sweeper does it for what no worker holds).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Protocol, cast

from sqlalchemy import CursorResult, and_, or_, select, update

from app.db import Database
from app.logs import bound_submission
from app.lti import passback as lti_passback
from app.metrics import Metrics
from app.models import (
    DeliveryStatus,
    Submission,
    SubmissionStatus,
    WebhookDelivery,
    utcnow,
)
from app.settings import AppSettings
from grader.errors import AutograderError
from grader.judge import internal_error
from grader.report import Report, ReportStatus
from grader.runner import Grader

log = logging.getLogger(__name__)


class WebhookQueue(Protocol):
    def enqueue(self, delivery_id: int) -> None:
        """Deliver this stored webhook soon, off the caller's path, with retries."""
        ...


@dataclass(frozen=True)
class GradingContext:
    """What a grading needs; built once per process (service or worker) and shared by threads."""

    settings: AppSettings
    database: Database
    grader: Grader
    webhooks: WebhookQueue
    metrics: Metrics | None = None
    # Called with the submission id once its report is stored (wakes ?wait=true requests).
    on_done: Callable[[str], None] = field(default=lambda submission_id: None)


@dataclass(frozen=True)
class _Claim:
    exercise: str
    source: str
    attempts: int


def grade_submission(submission_id: str, context: GradingContext) -> None:
    """Grade one stored submission to the end. Returns quietly when it is not claimable (done,
    or running in a live grader elsewhere, or unknown); raises only when the database fails, in
    which case the submission stays claimable and is graded again later."""
    with bound_submission(submission_id):
        claim = _claim(context, submission_id)
        if claim is None:
            log.info("not claimable (finished, or being graded elsewhere)")
            return
        started = time.perf_counter()
        if claim.attempts > context.settings.max_attempts:
            log.error("giving up after %d interrupted gradings", claim.attempts - 1)
            report = error_report(
                context.grader,
                claim.exercise,
                f"grading was interrupted {claim.attempts - 1} times (the grader stopped or was "
                "killed while running it)",
            )
        else:
            log.info("grading %s, attempt %d", claim.exercise, claim.attempts)
            report = _grade(context.grader, claim)
        delivery_id = _finish(context.database, submission_id, report)
        if delivery_id is None and report is not None:
            log.info("already finished by another grader; this result is dropped")
        elapsed = time.perf_counter() - started
        if context.metrics is not None:
            context.metrics.grading_seconds.observe(elapsed)
            context.metrics.reports.labels(report.status.value).inc()
        log.info(
            "graded: %s, %g/%g in %.0f ms",
            report.status.value,
            report.score,
            report.max_score,
            elapsed * 1000,
            extra={"report_status": report.status.value, "duration_ms": round(elapsed * 1000, 1)},
        )
        context.on_done(submission_id)
        if delivery_id:
            context.webhooks.enqueue(delivery_id)


def _grade(grader: Grader, claim: _Claim) -> Report:
    try:
        return grader.grade(claim.exercise, claim.source)
    except AutograderError as error:  # unknown exercise (removed since), broken reference, ...
        log.exception("the grader failed")
        return error_report(grader, claim.exercise, str(error))
    except Exception as error:  # a grader bug must end in an explicit report, not a stuck row
        log.exception("the grader failed unexpectedly")
        return error_report(grader, claim.exercise, f"internal error ({type(error).__name__})")


def error_report(grader: Grader, exercise: str, reason: str) -> Report:
    """A report with status "error": the grader failed, nothing is held against the student."""
    try:
        return internal_error(grader.plan(exercise), reason)
    except Exception:  # no plan to list the tests from: a report without tests still says why
        return Report(
            exercise=exercise,
            status=ReportStatus.ERROR,
            score=0.0,
            max_score=0.0,
            tests=[],
            message=f"The grader failed: {reason}.",
        )


def _claim(context: GradingContext, submission_id: str) -> _Claim | None:
    now = utcnow()
    stale = now - timedelta(seconds=context.settings.running_stale_after_s)
    claimable = and_(
        Submission.id == submission_id,
        or_(
            Submission.status == SubmissionStatus.QUEUED,
            and_(Submission.status == SubmissionStatus.RUNNING, Submission.started_at < stale),
        ),
    )
    with context.database.session() as session:
        result = cast(
            CursorResult[Any],
            session.execute(
                update(Submission)
                .where(claimable)
                .values(
                    status=SubmissionStatus.RUNNING,
                    attempts=Submission.attempts + 1,
                    started_at=now,
                )
                .execution_options(synchronize_session=False)
            ),
        )
        if result.rowcount != 1:
            return None
        row = session.execute(
            select(Submission.exercise, Submission.source, Submission.attempts).where(
                Submission.id == submission_id
            )
        ).one()
    return _Claim(exercise=row.exercise, source=row.source, attempts=row.attempts)


def _finish(database: Database, submission_id: str, report: Report) -> int | None:
    """Store the report and mark the submission done, unless another grader did first. Return
    the id of the webhook delivery recorded with it, 0 when there is none to make, None when this
    result was dropped."""
    with database.session() as session:
        result = cast(
            CursorResult[Any],
            session.execute(
                update(Submission)
                .where(Submission.id == submission_id, Submission.status != SubmissionStatus.DONE)
                .values(
                    status=SubmissionStatus.DONE,
                    report=report.model_dump(mode="json"),
                    finished_at=utcnow(),
                )
                .execution_options(synchronize_session=False)
            ),
        )
        if result.rowcount != 1:
            return None
        lti_passback.mark_graded(session, submission_id, report)  # due with the report, durably
        callback_url = session.scalar(
            select(Submission.callback_url).where(Submission.id == submission_id)
        )
        if not callback_url:
            return 0
        delivery = WebhookDelivery(submission_id=submission_id, url=callback_url)
        session.add(delivery)
        session.flush()
        return delivery.id


def unfinished_submissions(database: Database, *, reset_running: bool) -> list[str]:
    """The submissions to dispatch again, oldest first. With `reset_running` (the embedded
    service at start-up: no grader of the previous process survives it), the ones left running
    go back to queued, keeping their attempt count."""
    with database.session() as session:
        if reset_running:
            session.execute(
                update(Submission)
                .where(Submission.status == SubmissionStatus.RUNNING)
                .values(status=SubmissionStatus.QUEUED)
                .execution_options(synchronize_session=False)
            )
        return list(
            session.scalars(
                select(Submission.id)
                .where(Submission.status != SubmissionStatus.DONE)
                .order_by(Submission.id)
            )
        )


def stale_submissions(database: Database, settings: AppSettings, known: Sequence[str]) -> list[str]:
    """Unfinished submissions that no grader of this process holds: queued ones it does not
    know of, and running ones past `running_stale_after_s`."""
    stale = utcnow() - timedelta(seconds=settings.running_stale_after_s)
    with database.session() as session:
        rows = session.execute(
            select(Submission.id, Submission.status, Submission.started_at).where(
                Submission.status != SubmissionStatus.DONE
            )
        ).all()
    known_ids = set(known)
    return sorted(
        row.id
        for row in rows
        if row.id not in known_ids
        and (
            row.status == SubmissionStatus.QUEUED
            or (row.started_at is not None and row.started_at < stale)
        )
    )


def pending_deliveries(database: Database) -> list[int]:
    with database.session() as session:
        return list(
            session.scalars(
                select(WebhookDelivery.id)
                .where(WebhookDelivery.status == DeliveryStatus.PENDING)
                .order_by(WebhookDelivery.id)
            )
        )
