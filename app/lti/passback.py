"""Grade passback (Assignment and Grade Services), durable like the webhooks.

    track        a launched student's submission is accepted: a `waiting` score post is stored
    mark_graded  app.grading stores the report: in that same transaction the post becomes
                 `pending` (or `skipped` for an error report: the grader failed, not the student)
    ScoreSender  a thread of the API process: takes due pending posts from the database (one
                 conditional UPDATE claims each, so replicas never post one twice at once),
                 posts the score to the line item through pylti1p3 (an access token from the
                 platform's token URL, signed with the tool's key), retries with backoff up to
                 `lti_score_max_attempts`, then marks it `failed`.

The sender polls the database, so it posts what workers graded in scale-out too, and what was
pending when the service stopped. The score: scoreGiven/scoreMaximum from the report,
activityProgress Completed, gradingProgress FullyGraded, and a one-line comment per outcome.
"""

from __future__ import annotations

import logging
import threading
from datetime import timedelta
from typing import Any, cast

from pylti1p3.assignments_grades import AssignmentsGradesService
from pylti1p3.exception import LtiException, LtiServiceException
from pylti1p3.grade import Grade
from pylti1p3.service_connector import ServiceConnector
from requests import RequestException
from sqlalchemy import CursorResult, select, update
from sqlalchemy.orm import Session

from app.db import Database
from app.lti.adapters import HTTP_TIMEOUT_S, http_session
from app.lti.keys import tool_key
from app.lti.models import LtiLaunch, LtiPlatform, LtiScorePost, ScorePostStatus
from app.lti.registrations import to_registration
from app.models import Submission, SubmissionStatus, utcnow
from app.settings import AppSettings
from grader.report import Report, ReportStatus, TestStatus

log = logging.getLogger(__name__)

SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
# A claimed post is not taken again by another sender before this (longer than one attempt).
_CLAIM = timedelta(seconds=HTTP_TIMEOUT_S * 3 + 5)
_COMMENT_LIMIT = 1000


def track(session: Session, submission_id: str, launch_id: str) -> None:
    """Record that this submission's grade goes to the launch's line item."""
    session.add(LtiScorePost(submission_id=submission_id, launch_id=launch_id))
    session.flush()
    # Graded already (a fast grader finished before this row existed)? Locking the submission
    # waits for a grading transaction in flight, so its outcome is seen here or it sees this row.
    status = session.scalar(
        select(Submission.status).where(Submission.id == submission_id).with_for_update()
    )
    if status is SubmissionStatus.DONE:
        report = session.scalar(select(Submission.report).where(Submission.id == submission_id))
        mark_graded(session, submission_id, Report.model_validate(report))


def mark_graded(session: Session, submission_id: str, report: Report) -> None:
    """Called in the transaction that stores the report: the score becomes due."""
    failed = report.status is ReportStatus.ERROR
    session.execute(
        update(LtiScorePost)
        .where(
            LtiScorePost.submission_id == submission_id,
            LtiScorePost.status == ScorePostStatus.WAITING,
        )
        .values(
            status=ScorePostStatus.SKIPPED if failed else ScorePostStatus.PENDING,
            next_attempt_at=utcnow(),
            last_error="the grader failed: no score is posted" if failed else None,
        )
        .execution_options(synchronize_session=False)
    )


def comment(report: Report) -> str:
    """One line per outcome: the summary, then the tests that did not pass."""
    failing = [test.name for test in report.tests if test.status is not TestStatus.PASSED]
    text = report.message
    if failing:
        text += f". Not passed: {', '.join(failing)}"
    return text[:_COMMENT_LIMIT]


def grade_for(report: Report, user_id: str, timestamp: str) -> Grade:
    return (
        Grade()
        .set_score_given(report.score)
        .set_score_maximum(report.max_score)
        .set_activity_progress("Completed")
        .set_grading_progress("FullyGraded")
        .set_timestamp(timestamp)
        .set_user_id(user_id)
        .set_comment(comment(report))
    )


def post_score(database: Database, post_id: int) -> None:
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
        finished = submission.finished_at or utcnow()
    if not launch.lineitem_url or SCORE_SCOPE not in launch.ags_scopes:
        raise LtiException("the launch granted no line item with the score scope")
    connector = ServiceConnector(
        to_registration(platform, tool_key(database)), requests_session=http_session()
    )
    service_data = {"scope": launch.ags_scopes, "lineitem": launch.lineitem_url}
    ags = AssignmentsGradesService(connector, service_data)  # type: ignore[arg-type]
    ags.put_grade(grade_for(report, launch.user_id, finished.isoformat()))


class ScoreSender:
    """Posts due scores from a thread; see the module's docstring."""

    def __init__(self, database: Database, settings: AppSettings) -> None:
        self._database = database
        self._settings = settings
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lti-scores", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=HTTP_TIMEOUT_S * 3)

    def _run(self) -> None:
        while not self._stop.wait(self._settings.lti_score_poll_s):
            try:
                for post_id in self._due():
                    if self._stop.is_set() or not self._claim(post_id):
                        continue
                    self._attempt(post_id)
            except Exception:  # the database is away: try again at the next poll
                log.exception("looking for scores to post failed")

    def _due(self) -> list[int]:
        with self._database.session() as session:
            return list(
                session.scalars(
                    select(LtiScorePost.id)
                    .where(
                        LtiScorePost.status == ScorePostStatus.PENDING,
                        LtiScorePost.next_attempt_at <= utcnow(),
                    )
                    .order_by(LtiScorePost.id)
                    .limit(100)
                )
            )

    def _claim(self, post_id: int) -> bool:
        now = utcnow()
        with self._database.session() as session:
            result = cast(
                CursorResult[Any],
                session.execute(
                    update(LtiScorePost)
                    .where(
                        LtiScorePost.id == post_id,
                        LtiScorePost.status == ScorePostStatus.PENDING,
                        LtiScorePost.next_attempt_at <= now,
                    )
                    .values(next_attempt_at=now + _CLAIM, attempts=LtiScorePost.attempts + 1)
                    .execution_options(synchronize_session=False)
                ),
            )
        return result.rowcount == 1

    def _attempt(self, post_id: int) -> None:
        error: str | None = None
        try:
            post_score(self._database, post_id)
        except LtiServiceException as failure:
            error = f"HTTP {failure.response.status_code}: {failure.response.text[:300]}"
        except (LtiException, RequestException) as failure:
            error = f"{type(failure).__name__}: {failure}"[:1000]
        with self._database.session() as session:
            post = session.get(LtiScorePost, post_id)
            assert post is not None
            post.last_error = error
            if error is None:
                post.status = ScorePostStatus.DELIVERED
            elif post.attempts >= self._settings.lti_score_max_attempts:
                post.status = ScorePostStatus.FAILED
            else:
                backoff = min(
                    self._settings.lti_score_backoff_s * 2 ** (post.attempts - 1),
                    self._settings.webhook_backoff_max_s,
                )
                post.next_attempt_at = utcnow() + timedelta(seconds=backoff)
            log.info(
                "score post %d attempt %d: %s",
                post_id,
                post.attempts,
                error or "delivered",
                extra={"submission_id": post.submission_id},
            )
