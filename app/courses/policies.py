"""A course's settings per exercise (app.courses.models.ExercisePolicy): which score its gradebook
takes, its attempt budget, its due date and late policy (app.courses.due_dates). An exercise
without a row has the defaults."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, model_validator
from sqlalchemy.orm import Session

from app.courses.due_dates import decide_again
from app.courses.models import ExercisePolicy, GradebookScore, LatePolicy

# For the OpenAPI documentation of the staff routes that read and write a policy.
_EXAMPLE: dict[str, Any] = {
    "gradebook": "latest",
    "attempts": 5,
    "window_s": 86400,
    "due_at": "2026-12-18T23:59:00Z",
    "late_policy": "penalty",
    "penalty_per_day": 10,
}


class ExercisePolicyBody(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [_EXAMPLE]})

    gradebook: GradebookScore = Field(
        default=GradebookScore.BEST, description="which score the gradebook takes"
    )
    attempts: int | None = Field(
        default=None,
        ge=1,
        le=1000,
        description="an attempt budget: this many attempts per window, refilled evenly",
    )
    window_s: int | None = Field(default=None, ge=60, le=366 * 24 * 3600)
    due_at: AwareDatetime | None = Field(
        default=None,
        description="the due date (with its time zone), unless the LMS or an extension gives one",
    )
    late_policy: LatePolicy = Field(
        default=LatePolicy.ACCEPT,
        description="after the due date: accept (marked late), penalty (per day late) or close",
    )
    penalty_per_day: float | None = Field(
        default=None, gt=0, le=100, description="percent off per day late (or part), with penalty"
    )

    @model_validator(mode="after")
    def _budget_whole(self) -> ExercisePolicyBody:
        if (self.attempts is None) != (self.window_s is None):
            raise ValueError("attempts and window_s go together: give both, or neither")
        return self

    @model_validator(mode="after")
    def _penalty_with_its_rate(self) -> ExercisePolicyBody:
        if (self.late_policy is LatePolicy.PENALTY) != (self.penalty_per_day is not None):
            raise ValueError(
                'penalty_per_day goes with late_policy "penalty": give both, or neither'
            )
        return self


class ExercisePolicyPublic(ExercisePolicyBody):
    lms_due_at: datetime | None = Field(
        default=None,
        description="the due date the LMS gives (its line item's), read at launches; it comes "
        "before due_at",
    )


def read_policy(session: Session, course_id: int, exercise: str) -> ExercisePolicyPublic:
    row = session.get(ExercisePolicy, (course_id, exercise))
    if row is None:
        return ExercisePolicyPublic()
    return ExercisePolicyPublic(
        gradebook=row.gradebook,
        attempts=row.attempts,
        window_s=row.window_s,
        due_at=row.due_at,
        late_policy=row.late_policy,
        penalty_per_day=row.penalty_per_day,
        lms_due_at=row.lms_due_at,
    )


def write_policy(
    session: Session, course_id: int, exercise: str, policy: ExercisePolicyBody
) -> ExercisePolicyPublic:
    """Replace the settings (but the LMS's due date); a changed due date decides again the
    lateness of the exercise's submissions."""
    row = session.get(ExercisePolicy, (course_id, exercise))
    if row is None:
        row = ExercisePolicy(course_id=course_id, exercise=exercise)
        session.add(row)
    row.gradebook = policy.gradebook
    row.attempts = policy.attempts
    row.window_s = policy.window_s
    moved = row.due_at != policy.due_at
    row.due_at = policy.due_at
    row.late_policy = policy.late_policy
    row.penalty_per_day = policy.penalty_per_day
    session.flush()
    if moved:
        decide_again(session, course_id, exercise)
    return read_policy(session, course_id, exercise)
