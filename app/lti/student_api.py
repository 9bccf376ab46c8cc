"""/lti/submissions: the launched student's API, called by the exercise page with the launch's
session token (`Authorization: Bearer ...`, app.lti.sessions.LaunchSession).

    POST     /lti/submissions    a submission as the launched student
    GET      /lti/submissions    that student's history of the launch's exercise
    GET      /lti/submissions/ID one of that student's submissions
    GET      /lti/attempts       that student's standing in the exercise's attempt budget
    GET      /lti/due            that student's due date for the exercise
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Header, Query
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict, ValidationError

from app.access import rules as access
from app.access.served import valid_new_submission
from app.access.signed_tokens import InvalidToken
from app.api.api_process import ApiDep, ApiProcess
from app.api.deps import SessionDep, SettingsDep
from app.api.problem_docs import responses
from app.api.problems import (
    AttemptsUsedUp,
    PayloadTooLarge,
    QueueFull,
    RateLimited,
    SubmissionNotFound,
    SubmissionsClosed,
    TooManyInFlight,
    Unauthorized,
)
from app.api.submission_schemas import (
    ID_PATTERN,
    SubmissionAccepted,
    SubmissionCreate,
    SubmissionPage,
    SubmissionPublic,
)
from app.core.models import Submission, utcnow
from app.courses import budgets, due_dates
from app.exercises.schemas import AttemptBudget, DueDatePublic
from app.lti import passback
from app.lti.sessions import LaunchSession
from app.submissions import following
from app.submissions import service as submissions
from app.submissions.following import WaitDep

router = APIRouter(prefix="/lti", tags=["lti"])


class LtiSubmissionCreate(BaseModel):
    """A submission from the exercise page of a launch: the exercise and the student are the
    session token's."""

    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"examples": [{"source": "import torch\n..."}]}
    )

    source: str


def launch_session(
    settings: SettingsDep, authorization: Annotated[str, Header()] = ""
) -> LaunchSession:
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token:
        raise Unauthorized("send the launch's session token as `Authorization: Bearer <token>`")
    try:
        return LaunchSession.verify(settings, token)
    except InvalidToken as error:
        raise Unauthorized(f"this session token is not valid ({error}); launch again") from None


LaunchSessionDep = Annotated[LaunchSession, Depends(launch_session)]


def _submit(api: ApiProcess, who: LaunchSession, body: SubmissionCreate) -> SubmissionAccepted:
    accepted = submissions.accept(api, who.principal(), body, None)
    with api.database.session() as session:
        passback.track(session, accepted.submission.id, who.launch_id)
    return accepted.answer()


@router.post(
    "/submissions",
    status_code=202,
    response_model=SubmissionAccepted,
    summary="Submit as the launched student",
    responses=responses(
        Unauthorized,
        PayloadTooLarge,
        RateLimited,
        AttemptsUsedUp,
        SubmissionsClosed,
        TooManyInFlight,
        QueueFull,
    ),
)
async def submit(
    body: LtiSubmissionCreate, who: LaunchSessionDep, api: ApiDep
) -> SubmissionAccepted:
    """Submit as the launched student: the exercise and student come from the session token,
    and the grade goes to the launch's line item. Follow it with
    `GET /lti/submissions/{id}?wait=S`."""
    try:
        new = SubmissionCreate(exercise=who.exercise, source=body.source, student_id=who.student_id)
    except ValidationError as error:  # the same checks as /v1/submissions, answered the same
        raise RequestValidationError(error.errors()) from None
    await valid_new_submission(new, api.catalog.published, api.settings)
    return await run_in_threadpool(_submit, api, who, new)


@router.get(
    "/submissions",
    response_model=SubmissionPage,
    summary="The launched student's submissions to the launch's exercise, newest first",
    responses=responses(Unauthorized),
)
def list_submissions(
    who: LaunchSessionDep,
    session: SessionDep,
    cursor: Annotated[
        str | None, Query(pattern=ID_PATTERN, description="next_cursor of the previous page")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
) -> SubmissionPage:
    mine = access.visible(who.principal()) & (Submission.exercise == who.exercise)
    return submissions.history(session, mine, cursor=cursor, limit=limit)


@router.get(
    "/submissions/{submission_id}",
    response_model=SubmissionPublic,
    summary="One of the launched student's submissions",
    responses=responses(Unauthorized, SubmissionNotFound),
)
async def get_submission(
    submission_id: str, who: LaunchSessionDep, api: ApiDep, wait: WaitDep = None
) -> SubmissionPublic:
    """One of the launched student's own submissions, with its code, its place in line while
    queued and, once graded, its report. `?wait=S` holds the answer until it is graded, or for
    S seconds (as `GET /v1/submissions/{id}?wait=S`)."""
    return await following.followed(api, submission_id, who.principal(), wait)


@router.get(
    "/attempts",
    response_model=AttemptBudget,
    summary="The launched student's standing in the exercise's attempt budget",
    responses=responses(Unauthorized),
)
def get_attempts(who: LaunchSessionDep, session: SessionDep) -> AttemptBudget:
    return AttemptBudget.of(
        budgets.standing_now(session, who.course_id, who.exercise, who.student_id, utcnow())
    )


@router.get(
    "/due",
    response_model=DueDatePublic,
    summary="The launched student's due date for the exercise",
    responses=responses(Unauthorized),
)
def get_due_date(who: LaunchSessionDep, session: SessionDep) -> DueDatePublic:
    due = due_dates.due_date(session, who.course_id, who.exercise, who.student_id)
    return DueDatePublic.of(due, utcnow())
