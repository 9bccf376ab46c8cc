"""/v1/courses/{course}/exercises/{slug}/extensions: a student's own due date for an exercise,
set by the course's staff (app.courses.due_dates). Granting, changing or withdrawing one decides
again the lateness of that student's submissions to the exercise."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Path, Response
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from app.access.served import ExerciseDep
from app.api.deps import SessionDep
from app.api.problem_docs import responses
from app.api.problems import (
    CourseNotFound,
    ExerciseUnavailable,
    ExtensionNotFound,
    Unauthorized,
    UnknownExercise,
)
from app.core.student_ids import StudentId
from app.courses import due_dates
from app.courses.models import DueExtension
from app.staff.deps import StaffCourseDep

router = APIRouter(prefix="/courses/{course}/exercises/{slug}", tags=["course staff"])

_EXERCISE = responses(Unauthorized, CourseNotFound, UnknownExercise, ExerciseUnavailable)


class ExtensionBody(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"student_id": "ada", "due_at": "2026-12-20T23:59:00Z"}]},
    )

    student_id: StudentId
    due_at: AwareDatetime = Field(description="the student's own due date, with its time zone")


class ExtensionPublic(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "student_id": "ada",
                    "due_at": "2026-12-20T23:59:00Z",
                    "granted_at": "2026-12-17T10:12:00Z",
                    "decided_again": 1,
                }
            ]
        }
    )

    student_id: str
    due_at: datetime
    granted_at: datetime
    decided_again: int = Field(
        default=0, description="the student's submissions whose lateness this changed"
    )

    @classmethod
    def of(cls, row: DueExtension, decided_again: int = 0) -> ExtensionPublic:
        return cls(
            student_id=row.student_id,
            due_at=row.due_at,
            granted_at=row.granted_at,
            decided_again=decided_again,
        )


@router.get(
    "/extensions",
    response_model=list[ExtensionPublic],
    summary="The exercise's extensions in the course",
    responses=_EXERCISE,
)
def list_extensions(
    course: StaffCourseDep, exercise: ExerciseDep, session: SessionDep
) -> list[ExtensionPublic]:
    return [
        ExtensionPublic.of(row)
        for row in due_dates.extensions(session, course.id, exercise.spec.slug)
    ]


@router.put(
    "/extensions",
    response_model=ExtensionPublic,
    summary="Give a student their own due date for the exercise",
    responses=_EXERCISE,
)
def put_extension(
    course: StaffCourseDep, exercise: ExerciseDep, session: SessionDep, body: ExtensionBody
) -> ExtensionPublic:
    """It replaces the LMS's and the course's due date for that student (earlier or later),
    and the lateness of their submissions so far is decided again against it."""
    slug = exercise.spec.slug
    changed = due_dates.grant_extension(session, course.id, slug, body.student_id, body.due_at)
    row = session.get_one(DueExtension, (course.id, slug, body.student_id))
    return ExtensionPublic.of(row, len(changed))


@router.delete(
    "/extensions/{student_id:path}",
    status_code=204,
    summary="Withdraw a student's extension",
    responses=responses(
        Unauthorized, CourseNotFound, UnknownExercise, ExerciseUnavailable, ExtensionNotFound
    ),
)
def delete_extension(
    course: StaffCourseDep,
    exercise: ExerciseDep,
    session: SessionDep,
    student_id: Annotated[StudentId, Path()],
) -> Response:
    """The student has the course's (or the LMS's) due date again."""
    if due_dates.withdraw_extension(session, course.id, exercise.spec.slug, student_id) is None:
        raise ExtensionNotFound(f"{student_id!r} has no extension for {exercise.spec.slug!r}")
    return Response(status_code=204)
