"""/v1/courses/{course}/...: a course's regrades, and a submission's past reports, for its
staff (app.staff.deps: anyone else gets 404)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Response

from app.access.auth import PrincipalDep
from app.access.served import ExerciseDep
from app.api.deps import SessionDep
from app.api.problem_docs import responses
from app.api.problems import (
    CourseNotFound,
    ExerciseIsDraft,
    ExerciseUnavailable,
    RegradeNotFound,
    SubmissionNotFound,
    Unauthorized,
    UnknownExercise,
)
from app.api.submission_schemas import ID_PATTERN, SLUG_PATTERN
from app.regrades import service
from app.regrades.schemas import (
    PastReportPublic,
    RegradeCreate,
    RegradeList,
    RegradePublic,
    SubmissionHistory,
)
from app.staff.deps import StaffCourseDep
from grader.proof_record import draft_reason

router = APIRouter(prefix="/courses/{course}", tags=["regrades"])

RegradeId = Annotated[str, Path(pattern=ID_PATTERN, description="the regrade's id")]


@router.post(
    "/exercises/{slug}/regrades",
    status_code=202,
    response_model=RegradePublic,
    summary="Grade an exercise's finished submissions again",
    responses={
        200: {
            "model": RegradePublic,
            "description": "A regrade of the same submissions is active: that one.",
        },
        **responses(
            Unauthorized, CourseNotFound, UnknownExercise, ExerciseUnavailable, ExerciseIsDraft
        ),
    },
)
def create_regrade(  # noqa: PLR0917 (FastAPI injects by name)
    course: StaffCourseDep,
    exercise: ExerciseDep,
    body: RegradeCreate,
    session: SessionDep,
    principal: PrincipalDep,
    response: Response,
) -> RegradePublic:
    """Every finished submission of the exercise in the course (or of one student) up to now,
    graded again in the background behind students' new submissions, with the version served
    now. Old reports stay as history; changed scores are posted again to the LMS and announced
    by webhook (`submission.regraded`). Follow it at `GET .../regrades/{id}`. A draft (not
    proven at the version served) is refused: students' scores come from published versions."""
    reason = draft_reason(exercise)
    if reason is not None:
        raise ExerciseIsDraft(f"exercise {exercise.spec.slug!r} is a draft ({reason})")
    requested = service.request(
        session,
        course.id,
        exercise.spec.slug,
        exercise.version,
        body.student_id,
        principal.key_id,
    )
    regrade = requested.regrade
    if not requested.created:
        response.status_code = 200
    response.headers["Location"] = f"/v1/courses/{course.slug}/regrades/{regrade.id}"
    return RegradePublic.from_row(regrade)


@router.get(
    "/regrades",
    response_model=RegradeList,
    summary="A course's regrades, newest first",
    responses=responses(Unauthorized, CourseNotFound),
)
def list_regrades(
    course: StaffCourseDep,
    session: SessionDep,
    exercise: Annotated[str | None, Query(max_length=100, pattern=SLUG_PATTERN)] = None,
) -> RegradeList:
    """The newest 100, of one exercise if asked."""
    rows = service.course_regrades(session, course.id, exercise)
    return RegradeList(regrades=[RegradePublic.from_row(row) for row in rows])


@router.get(
    "/regrades/{regrade_id}",
    response_model=RegradePublic,
    summary="A regrade and its progress",
    responses=responses(Unauthorized, CourseNotFound, RegradeNotFound),
)
def get_regrade(
    course: StaffCourseDep, regrade_id: RegradeId, session: SessionDep
) -> RegradePublic:
    return RegradePublic.from_row(service.find(session, course.id, regrade_id))


@router.delete(
    "/regrades/{regrade_id}",
    response_model=RegradePublic,
    summary="Cancel a regrade",
    responses=responses(Unauthorized, CourseNotFound, RegradeNotFound),
)
def cancel_regrade(
    course: StaffCourseDep, regrade_id: RegradeId, session: SessionDep
) -> RegradePublic:
    """An active regrade stops where it is ("cancelled"): the submissions it graded keep their
    new reports, the others their old ones. A finished regrade is answered as it ended."""
    regrade = service.find(session, course.id, regrade_id)
    return RegradePublic.from_row(service.cancel(session, regrade))


@router.get(
    "/submissions/{submission_id}/history",
    response_model=SubmissionHistory,
    summary="A submission's past reports, newest first",
    responses=responses(Unauthorized, CourseNotFound, SubmissionNotFound),
)
def submission_history(
    course: StaffCourseDep,
    submission_id: Annotated[str, Path(pattern=ID_PATTERN)],
    session: SessionDep,
) -> SubmissionHistory:
    """The reports regrades replaced, each with the exercise's version that graded it; the
    current report is `GET /v1/submissions/{id}`."""
    rows = service.past_reports(session, course.id, submission_id)
    return SubmissionHistory(
        submission_id=submission_id, past_reports=[PastReportPublic.from_row(row) for row in rows]
    )
