"""Grade passback (Assignment and Grade Services), durable like the webhooks.

    track          a launched student's submission is accepted: a `waiting` score post is stored
    mark_graded    app.grading.job's hook: in the transaction that stores the report the post
    becomes
                   `pending` (or `skipped` for an error report: the grader failed, not the student)
    post_again     app.regrades' hook, when a regrade changed the score: the post is due again
    score_channel  how the outbox (app.outbox.sender) sends a due post: the score to the line item
                   through pylti1p3 (an access token from the platform's token URL, signed with
                   the tool's key), retried with backoff up to `lti_score_max_attempts`.

The outbox polls the database, so it posts what workers graded in scale-out too, and what was
pending when the service stopped. The score: scoreGiven/scoreMaximum from the report (less the
late penalty of the exercise's policy: app.courses.due_dates), activityProgress Completed,
gradingProgress FullyGraded, and a one-line comment per outcome, after the lateness if late.
"""

from __future__ import annotations

from pylti1p3.assignments_grades import AssignmentsGradesService
from pylti1p3.exception import LtiException
from pylti1p3.grade import Grade
from pylti1p3.service_connector import ServiceConnector
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from app.core.db import Database, changed_rows
from app.core.models import Submission, SubmissionStatus, utcnow
from app.core.settings import AppSettings
from app.courses.due_dates import Lateness, lateness_of
from app.lti.adapters import HTTP_TIMEOUT_S, http_session, lms_call
from app.lti.models import LtiLaunch, LtiPlatform, LtiScorePost
from app.lti.registrations import to_registration
from app.lti.tool_key import tool_key
from app.outbox.models import OutboxStatus
from app.outbox.sender import Channel, Retry
from grader.report import TEST_NAMES_SEPARATOR, Report, ReportStatus, TestStatus

SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
_COMMENT_LIMIT = 1000


def track(session: Session, submission_id: str, launch_id: str) -> None:
    """Record that this submission's grade goes to the launch's line item."""
    session.add(
        LtiScorePost(submission_id=submission_id, launch_id=launch_id, status=OutboxStatus.WAITING)
    )
    session.flush()
    # Graded already (a fast grader finished before this row existed)? Locking the submission
    # waits for a grading transaction in flight, so its outcome is seen here or it sees this row.
    status = session.scalar(
        select(Submission.status).where(Submission.id == submission_id).with_for_update()
    )
    if status is SubmissionStatus.DONE:
        report = session.scalar(select(Submission.report).where(Submission.id == submission_id))
        mark_graded(session, submission_id, Report.model_validate(report))


def mark_graded(session: Session, submission_id: str, report: Report) -> bool:
    """app.grading.job's hook, in the transaction that stores the report: the score becomes due
    (returns whether one did)."""
    failed = report.status is ReportStatus.ERROR
    result = session.execute(
        update(LtiScorePost)
        .where(
            LtiScorePost.submission_id == submission_id,
            LtiScorePost.status == OutboxStatus.WAITING,
        )
        .values(
            status=OutboxStatus.SKIPPED if failed else OutboxStatus.PENDING,
            next_attempt_at=utcnow(),
            last_error="the grader failed: no score is posted" if failed else None,
        )
        .execution_options(synchronize_session=False)
    )
    return not failed and changed_rows(result) == 1


def post_again(session: Session, submission_id: str) -> bool:
    """app.regrades' hook, in the transaction that keeps a changed score: the submission's post,
    if it came from a launch, is due again from its first attempt; it sends the report as it is
    then, timestamped with the regrade's grading (so the platform takes it as the newer score)."""
    result = session.execute(
        update(LtiScorePost)
        .where(
            LtiScorePost.submission_id == submission_id,
            LtiScorePost.status != OutboxStatus.WAITING,
        )
        .values(
            status=OutboxStatus.PENDING,
            attempts=0,
            next_attempt_at=utcnow(),
            last_error=None,
            last_status_code=None,
        )
        .execution_options(synchronize_session=False)
    )
    return changed_rows(result) == 1


def comment(report: Report) -> str:
    """One line per outcome: the summary, then the tests that did not pass; for a refusal, that
    it was refused and why (its reasons on one line), no test of it having run. A gradebook shows
    no status beside it to say "refused"."""
    if report.status is ReportStatus.REJECTED:
        return f"Refused. {' '.join(report.message.splitlines())}"[:_COMMENT_LIMIT]
    failing = [test.name for test in report.tests if test.status is not TestStatus.PASSED]
    text = report.message
    if failing:
        text += f". Not passed: {TEST_NAMES_SEPARATOR.join(failing)}"
    return text[:_COMMENT_LIMIT]


def grade_for(report: Report, user_id: str, timestamp: str, lateness: Lateness) -> Grade:
    late = lateness.note(report.score, report.max_score)
    return (
        Grade()
        .set_score_given(report.score * lateness.factor)
        .set_score_maximum(report.max_score)
        .set_activity_progress("Completed")
        .set_grading_progress("FullyGraded")
        .set_timestamp(timestamp)
        .set_user_id(user_id)
        .set_comment(f"{late} {comment(report)}"[:_COMMENT_LIMIT] if late else comment(report))
    )


def post_score(database: Database, settings: AppSettings, post_id: int) -> None:
    """Post one score to its line item; raise what went wrong."""
    with database.session() as session:
        post = session.get(LtiScorePost, post_id)
        assert post is not None
        submission = session.get(Submission, post.submission_id)
        launch = session.get(LtiLaunch, post.launch_id)
        assert submission is not None and launch is not None
        platform = session.get(LtiPlatform, launch.platform_id)
        assert platform is not None and submission.report is not None
        report = Report.model_validate(submission.report)
        lateness = lateness_of(session, submission)
        finished = submission.finished_at or utcnow()
    if not launch.lineitem_url or SCORE_SCOPE not in launch.ags_scopes:
        raise LtiException("the launch granted no line item with the score scope")
    connector = ServiceConnector(
        to_registration(platform, tool_key(database, settings)), requests_session=http_session()
    )
    service_data = {"scope": launch.ags_scopes, "lineitem": launch.lineitem_url}
    ags = AssignmentsGradesService(connector, service_data)  # type: ignore[arg-type]
    ags.put_grade(grade_for(report, launch.user_id, finished.isoformat(), lateness))


def score_channel(database: Database, settings: AppSettings) -> Channel:
    """Score posts as the outbox sends them."""

    def send(post_id: int) -> None:
        with lms_call():
            post_score(database, settings, post_id)

    retry = Retry(
        settings.lti_score_max_attempts,
        settings.lti_score_backoff_s,
        settings.webhook_backoff_max_s,
    )
    # An attempt is a token request and the post.
    return Channel("score post", LtiScorePost, send, retry, claim_s=HTTP_TIMEOUT_S * 3 + 5)
