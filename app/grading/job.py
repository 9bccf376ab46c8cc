"""The grading job: the one function that grades a stored submission, whoever runs it.

`grade_next(handed_id, context)` is what the embedded dispatcher's threads and the scale-out
worker's task alike run for each hand-over: it claims the first submission in line (fair order,
app.submissions.fair_order) under a lease (app.grading.leases); `grade_submission(id, context)`
claims the one named. Either grades it, and stores the report and marks it done (only the first
finisher writes). In that same transaction the hooks the integrations registered record what
must follow the report (a webhook delivery, an LTI score post) in the outbox, which
app.outbox.sender sends; the job knows none of them. Then it wakes whoever waits for the submission.

Past `max_attempts` claims the submission is finished with an explicit error report instead of
being graded again, so it is never lost and never stuck: what a dead grader held is dispatched
again by the sweeper (app.grading.sweeper) once its lease expires.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from sqlalchemy.orm import Session

from app.core.db import Database
from app.core.logs import bound_submission
from app.core.metrics import Metrics
from app.core.models import Submission, SubmissionStatus, utcnow
from app.core.settings import AppSettings
from app.courses.mistakes import with_course_diagnosis
from app.grading.catalog_watch import log_changes
from app.grading.leases import SUBMISSIONS, Claim, Held, Leases
from app.grading.report_store import add_outcomes, keep_hidden_tests, report_columns
from grader.catalog import Catalog
from grader.errors import AutograderError
from grader.judge import internal_error
from grader.report import Report, ReportStatus
from grader.runner import Graded, Grader

log = logging.getLogger(__name__)

# Records, in the transaction that stores a report, what must follow it (app.outbox.sender); returns
# whether it recorded a message that is due now.
OnGraded = Callable[[Session, str, Report], bool]
# Called with the submission id once its report is stored, and whether the outbox has something
# new to send: wakes ?wait=true requests, and the outbox only when it has work.
OnDone = Callable[[str, bool], None]


def _nobody_waits(submission_id: str, outbox_due: bool) -> None:
    """A process where nothing waits for a grading to end (tests)."""


@dataclass(frozen=True)
class GradingContext:
    """What a grading needs; built once per process (service or worker) and shared by threads."""

    settings: AppSettings
    database: Database
    grader: Grader
    holder: str  # this process's name on the leases it holds
    held: Held = field(default_factory=Held)
    on_graded: Sequence[OnGraded] = ()
    metrics: Metrics | None = None
    on_done: OnDone = _nobody_waits

    @property
    def leases(self) -> Leases:
        return Leases(self.database, self.settings)


def warm_up(grader: Grader) -> None:
    """Before the first submission: every exercise's plan (the references run once; one that
    fails sets its exercise apart, logged) and the sandbox's warm process."""
    log_changes(Catalog([]), grader.warm())
    grader.sandbox.layers()


def grade_submission(submission_id: str, context: GradingContext) -> None:
    """Grade this stored submission to the end. Returns quietly when it is not claimable (done,
    or running under a live lease elsewhere, or unknown); raises only when the database fails,
    in which case the submission stays claimable and is graded again later."""
    with bound_submission(submission_id):
        claim = context.leases.claim(submission_id, context.holder)
        if claim is None:
            log.info("not claimable (finished, or being graded elsewhere)")
            return
        _grade_held(claim, context)


def grade_next(handed_id: str, context: GradingContext) -> None:
    """What a hand-over of `handed_id` does, on both paths: grade the first submission in line
    (app.grading.leases.Leases.claim_next), the handed one when none is queued. A hand-over
    grades one submission whenever any is queued, and every accepted submission is handed over
    once at least, so every one is graded. Fails as `grade_submission` does."""
    claim = context.leases.claim_next(handed_id, context.holder)
    if claim is None:
        with bound_submission(handed_id):
            log.info("nothing queued, and this one is not claimable")
        return
    with bound_submission(claim.submission_id):
        _grade_held(claim, context)


def _grade_held(claim: Claim, context: GradingContext) -> None:
    context.held.add(SUBMISSIONS, claim.submission_id)
    try:
        _grade_claimed(claim, context)
    finally:
        context.held.discard(SUBMISSIONS, claim.submission_id)


def _grade_claimed(claim: Claim, context: GradingContext) -> None:
    started = time.perf_counter()
    if claim.attempts > context.settings.max_attempts:
        log.error("giving up after %d interrupted gradings", claim.attempts - 1)
        report = error_report(
            context.grader,
            claim.exercise,
            f"grading was interrupted {claim.attempts - 1} times (the grader stopped or was "
            "killed while running it)",
        )
        graded = Graded(report, None)
    else:
        log.info("grading %s, attempt %d", claim.exercise, claim.attempts)
        graded = grade_source(context.grader, claim.exercise, claim.source)
    report = graded.report
    outbox_due = _finish(context, claim.submission_id, claim.course_id, graded)
    if outbox_due is None:
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
    context.on_done(claim.submission_id, bool(outbox_due))


def grade_source(grader: Grader, exercise: str, source: str) -> Graded:
    """The report of `source` and what its hidden tests did: the grader's, or an error report
    when the grader failed (a new submission's grading and a regrade's alike)."""
    try:
        return grader.grade_in_full(exercise, source)
    except AutograderError as error:  # unknown exercise (removed since), broken reference, ...
        log.exception("the grader failed")
        return Graded(error_report(grader, exercise, str(error)), None)
    except Exception as error:  # a grader bug must end in an explicit report, not a stuck row
        log.exception("the grader failed unexpectedly")
        reason = f"internal error ({type(error).__name__})"
        return Graded(error_report(grader, exercise, reason), None)


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


def _finish(
    context: GradingContext, submission_id: str, course_id: int, graded: Graded
) -> bool | None:
    """Store the report (with the mistake its course named, where one explains it) and, for
    staff, what its hidden tests did; mark the submission done and drop its lease, and record
    what follows; returns whether the outbox got a message due now, or None when another grader
    finished first (this result is dropped)."""
    with context.database.session() as session:
        report = with_course_diagnosis(session, course_id, graded.report)
        finished = SUBMISSIONS.drop(
            session,
            Submission.id == submission_id,
            Submission.status != SubmissionStatus.DONE,
            status=SubmissionStatus.DONE,
            **report_columns(report),
            finished_at=utcnow(),
        )
        if finished != 1:
            return None
        add_outcomes(session, submission_id, report)  # done once: the row was not done
        keep_hidden_tests(session, submission_id, graded.hidden)
        recorded = [record(session, submission_id, report) for record in context.on_graded]
    return any(recorded)
