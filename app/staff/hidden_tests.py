"""What the hidden tests of one of a course's submissions did, for its staff: the input set and
the inputs' shapes, the first mismatch, the error or where the run stopped
(grader.hidden_detail). Read from its own table (app.grading.models.HiddenTestsRun), which no
route a student reaches reads: a student learns one bit per hidden test."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.api.deps import find_submission
from app.core.models import Course, Submission
from app.grading.models import HiddenTestsRun
from app.staff import examples
from grader.hidden_detail import HiddenRunDetail


class SubmissionHiddenTests(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [examples.HIDDEN_TESTS]})

    submission: str
    exercise: str
    student_id: str | None
    hidden: HiddenRunDetail | None = Field(
        description="null where none was kept: not graded yet, graded before the service kept "
        "it (a regrade records it), or an error report of the grader's own failure"
    )


def submission_hidden_tests(
    session: Session, course: Course, submission_id: str
) -> SubmissionHiddenTests:
    """Raises SubmissionNotFound for an id that is not one of the course's submissions."""
    row = find_submission(session, submission_id, Submission.course_id == course.id)
    detail = session.scalar(
        select(HiddenTestsRun.detail).where(HiddenTestsRun.submission_id == row.id)
    )
    return SubmissionHiddenTests(
        submission=row.id,
        exercise=row.exercise,
        student_id=row.student_id,
        hidden=None if detail is None else HiddenRunDetail.model_validate(detail),
    )
