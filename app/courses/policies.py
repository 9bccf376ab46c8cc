"""A course's settings per exercise (app.core.models.ExercisePolicy): which score its gradebook
takes, and its attempt budget. An exercise without a row has the defaults."""

from __future__ import annotations

from sqlalchemy.orm import Session

from app.core.models import ExercisePolicy
from app.staff.schemas import ExercisePolicyBody


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
