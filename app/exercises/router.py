"""/v1/exercises: the catalog, and what a student sees of one exercise."""

from __future__ import annotations

from fastapi import APIRouter

from app.access import rules as access
from app.access.auth import PrincipalDep
from app.access.served import CatalogDep, ExerciseDep
from app.api.deps import SessionDep, StudentQuery
from app.api.problem_docs import responses
from app.api.problems import OtherStudent, ReservedStudentId, Unauthorized, UnknownExercise
from app.core.models import utcnow
from app.courses import budgets
from app.exercises.schemas import AttemptBudget, ExercisePublic, ExerciseSummary

router = APIRouter(prefix="/exercises", tags=["exercises"])


@router.get(
    "",
    response_model=list[ExerciseSummary],
    summary="Every exercise",
    responses=responses(Unauthorized),
)
def list_exercises(catalog: CatalogDep) -> list[ExerciseSummary]:
    return [ExerciseSummary.of(exercise) for exercise in catalog]


@router.get(
    "/{slug}",
    response_model=ExercisePublic,
    summary="An exercise: statement, starter code, visible test signatures",
    responses=responses(Unauthorized, UnknownExercise),
)
def get_exercise(exercise: ExerciseDep) -> ExercisePublic:
    return ExercisePublic.of(exercise)


@router.get(
    "/{slug}/attempts",
    response_model=AttemptBudget,
    summary="Where a student stands in the exercise's attempt budget",
    responses=responses(Unauthorized, UnknownExercise, OtherStudent, ReservedStudentId),
)
def get_attempts(
    exercise: ExerciseDep,
    principal: PrincipalDep,
    session: SessionDep,
    student_id: StudentQuery = None,
) -> AttemptBudget:
    """A student sees their own standing; a key names the student. The standing counts the
    submissions the caller may see, as the history does: a submitter key, those it made.
    Without a student, or without a budget for the exercise in the caller's course, `limited`
    is false."""
    student = access.submitting_as(principal, student_id)
    if student is None:
        return AttemptBudget.of(None)
    slug, visible = exercise.spec.slug, access.visible(principal)
    return AttemptBudget.of(
        budgets.standing_now(session, principal.course_id, slug, student, utcnow(), visible=visible)
    )
