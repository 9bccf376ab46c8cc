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
from app.courses import budgets, due_dates
from app.exercises.schemas import AttemptBudget, DueDatePublic, ExercisePublic, ExerciseSummary

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


@router.get(
    "/{slug}/due",
    response_model=DueDatePublic,
    summary="A student's due date for the exercise, and where they stand",
    responses=responses(Unauthorized, UnknownExercise, OtherStudent, ReservedStudentId),
)
def get_due_date(
    exercise: ExerciseDep,
    principal: PrincipalDep,
    session: SessionDep,
    student_id: StudentQuery = None,
) -> DueDatePublic:
    """The student's own due date (an extension) or else the LMS's or the course's; without a
    student, the course's. `state` says whether a submission now is on time, late, or refused."""
    student = access.submitting_as(principal, student_id)
    due = due_dates.due_date(session, principal.course_id, exercise.spec.slug, student)
    return DueDatePublic.of(due, utcnow())
