"""Admission: which accepted submissions are refused, by what their caller does.

A deadline is not overload: a class of any size, each student submitting, is never refused.
What is refused is one caller holding many submissions in flight (queued or running):

    per student   more than `max_in_flight_per_student` unfinished submissions of one student
                  in one course: 429 TooManyInFlight, in words a student understands
    per key       more than `max_in_flight_per_key` unfinished submissions that name no student,
                  of one API key (a staff script, an integration): 429 TooManyInFlight.
                  Submissions naming a student count for that student only.
    deployment    more than `queue_capacity` unfinished submissions in all: 503 QueueFull. A
                  guard for the disk, set far beyond a class; not a fairness rule.

Counted after the submission is committed (so it counts itself), in the database every API
replica shares: of concurrent requests, the last to commit sees the others, so none overshoots,
but for one that a grader took in the instant between its commit and its count: that one stays
admitted (app.submissions.service._admit).
The per-minute rate limits (app.submissions.service) come before and stay.
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from app.api.problems import QueueFull, TooManyInFlight
from app.core.models import Submission
from app.core.settings import AppSettings
from app.grading.leases import count_unfinished
from app.submissions.fair_order import same_submitter


def refusal(
    settings: AppSettings, session: Session, row: Submission
) -> QueueFull | TooManyInFlight | None:
    """Why the stored `row` is refused, or None when it is admitted."""
    caller = Submission.course_id == row.course_id
    caller &= same_submitter(row.student_id, row.api_key_id)
    depth, in_flight = count_unfinished(session, caller)
    retry_s = settings.queue_retry_after_s
    if row.student_id is not None and in_flight > settings.max_in_flight_per_student:
        return TooManyInFlight(
            f"you have {in_flight - 1} submissions waiting to be graded; submit again once one "
            "is graded",
            retry_s,
        )
    if row.student_id is None and in_flight > settings.max_in_flight_per_key:
        return TooManyInFlight(
            f"this key has {in_flight - 1} submissions naming no student waiting to be graded, "
            "the most it may have at once; submit again once one is graded",
            retry_s,
        )
    if depth > settings.queue_capacity:
        return QueueFull(
            f"{depth - 1} submissions are waiting or being graded; retry later", retry_s
        )
    return None
