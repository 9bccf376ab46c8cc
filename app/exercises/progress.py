"""/v1/progress: where the caller stands on every exercise (not tried, in progress with the best
score so far, passed), for the list of exercises to show in one request.

Authorized like the history listing (app.access.rules.visible), and counted in one grouped query
over the report's columns (app.grading.report_store), so a course of many submissions costs one
index walk.
"""

from __future__ import annotations

from enum import StrEnum

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict
from sqlalchemy import ColumnElement, and_, case, func, select
from sqlalchemy.orm import Session

from app.access import rules as access
from app.access.auth import PrincipalDep
from app.access.served import CatalogDep
from app.api.deps import SessionDep, StudentQuery
from app.api.problem_docs import responses
from app.api.problems import Unauthorized
from app.core.models import Submission
from grader.report import ReportStatus

router = APIRouter(prefix="/progress", tags=["exercises"])


class ProgressStatus(StrEnum):
    NOT_TRIED = "not_tried"
    IN_PROGRESS = "in_progress"  # submitted, never passed (or not graded yet)
    PASSED = "passed"


class ExerciseProgress(BaseModel):
    """One exercise, as far as the caller got."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "exercise": "multi-headed-self-attention",
                    "status": "in_progress",
                    "submissions": 3,
                    "best_score": 6.0,
                    "max_score": 10.0,
                }
            ]
        }
    )

    exercise: str
    status: ProgressStatus
    submissions: int
    # The highest score of a graded submission; None until one is graded.
    best_score: float | None
    # The exercise's points today.
    max_score: float


def _standings(
    session: Session, wanted: ColumnElement[bool]
) -> dict[str, tuple[int, float | None, bool]]:
    """Per exercise: how many submissions, the best score, whether one passed."""
    passed = func.max(case((Submission.report_status == ReportStatus.PASSED.value, 1), else_=0))
    query = (
        select(Submission.exercise, func.count(), func.max(Submission.score), passed)
        .where(wanted)
        .group_by(Submission.exercise)
    )
    return {
        exercise: (count, best, bool(any_passed))
        for exercise, count, best, any_passed in session.execute(query)
    }


def _status(submissions: int, passed: bool) -> ProgressStatus:
    if passed:
        return ProgressStatus.PASSED
    return ProgressStatus.IN_PROGRESS if submissions else ProgressStatus.NOT_TRIED


@router.get(
    "",
    response_model=list[ExerciseProgress],
    summary="Where the caller stands on every exercise",
    responses=responses(Unauthorized),
)
def list_progress(
    session: SessionDep,
    principal: PrincipalDep,
    catalog: CatalogDep,
    student_id: StudentQuery = None,
) -> list[ExerciseProgress]:
    """Every exercise of the catalog, counting the submissions the caller may see (a student:
    their own), of `student_id` if asked, as the history does."""
    wanted = [access.visible(principal)]
    if student_id is not None:
        wanted.append(Submission.student_id == student_id)
    standings = _standings(session, and_(*wanted))
    progress = []
    for exercise in catalog:
        submissions, best, passed = standings.get(exercise.spec.slug, (0, None, False))
        progress.append(
            ExerciseProgress(
                exercise=exercise.spec.slug,
                status=_status(submissions, passed),
                submissions=submissions,
                best_score=best,
                max_score=exercise.spec.max_score,
            )
        )
    return progress
