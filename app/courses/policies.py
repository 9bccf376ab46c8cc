"""A course's settings per exercise (app.courses.models.ExercisePolicy): which score its gradebook
takes, and its attempt budget. An exercise without a row has the defaults."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator
from sqlalchemy.orm import Session

from app.courses.models import ExercisePolicy, GradebookScore

# For the OpenAPI documentation of the staff routes that read and write a policy.
_EXAMPLE: dict[str, Any] = {"gradebook": "latest", "attempts": 5, "window_s": 86400}


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

    @model_validator(mode="after")
    def _budget_whole(self) -> ExercisePolicyBody:
        if (self.attempts is None) != (self.window_s is None):
            raise ValueError("attempts and window_s go together: give both, or neither")
        return self


def read_policy(session: Session, course_id: int, exercise: str) -> ExercisePolicyBody:
    row = session.get(ExercisePolicy, (course_id, exercise))
    if row is None:
        return ExercisePolicyBody()
    return ExercisePolicyBody(gradebook=row.gradebook, attempts=row.attempts, window_s=row.window_s)


def write_policy(
    session: Session, course_id: int, exercise: str, policy: ExercisePolicyBody
) -> ExercisePolicyBody:
    row = session.get(ExercisePolicy, (course_id, exercise))
    if row is None:
        row = ExercisePolicy(course_id=course_id, exercise=exercise)
        session.add(row)
    row.gradebook = policy.gradebook
    row.attempts = policy.attempts
    row.window_s = policy.window_s
    session.flush()
    return policy
