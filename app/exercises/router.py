"""/v1/exercises: the catalog, and what a student sees of one exercise."""

from __future__ import annotations

from fastapi import APIRouter

from app.deps import CatalogDep, ExerciseDep
from app.exercises.schemas import ExercisePublic, ExerciseSummary
from app.problem_docs import responses
from app.problems import Unauthorized, UnknownExercise

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
