"""/v1/submissions: submit, poll, history, Gradescope results."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from sqlalchemy import and_

from app.access import rules as access
from app.access.auth import PrincipalDep
from app.access.served import NewSubmissionDep
from app.api.api_process import ApiDep
from app.api.deps import IdempotencyKeyDep, SessionDep, find_submission
from app.api.problem_docs import responses
from app.api.problems import (
    AttemptsUsedUp,
    CallbackUrlRefused,
    DatabaseBusy,
    IdempotencyKeyReused,
    NotFinished,
    OtherStudent,
    PayloadTooLarge,
    QueueFull,
    RateLimited,
    ReservedStudentId,
    StorageFull,
    SubmissionNotFound,
    SubmissionsClosed,
    TooManyInFlight,
    Unauthorized,
    UnknownExercise,
)
from app.api.submission_schemas import (
    ID_PATTERN,
    SLUG_PATTERN,
    GradescopeResults,
    SubmissionAccepted,
    SubmissionPage,
    SubmissionPublic,
)
from app.core.models import Submission, SubmissionStatus
from app.core.student_ids import StudentId
from app.submissions import following, service
from app.submissions.following import WaitDep
from grader.report import Report

router = APIRouter(prefix="/submissions", tags=["submissions"])


def visible_submission(
    submission_id: str, session: SessionDep, principal: PrincipalDep
) -> Submission:
    return find_submission(session, submission_id, access.visible(principal))


VisibleSubmissionDep = Annotated[Submission, Depends(visible_submission)]


@router.post(
    "",
    status_code=202,
    response_model=SubmissionAccepted,
    summary="Submit a source file for grading",
    responses={
        200: {
            "model": SubmissionPublic,
            "description": "With ?wait=true: the graded submission.",
        },
        **responses(
            Unauthorized,
            UnknownExercise,
            PayloadTooLarge,
            IdempotencyKeyReused,
            CallbackUrlRefused,
            ReservedStudentId,
            OtherStudent,
            RateLimited,
            AttemptsUsedUp,
            SubmissionsClosed,
            TooManyInFlight,
            QueueFull,
            StorageFull,
            DatabaseBusy,
        ),
    },
)
async def create_submission(  # noqa: PLR0917 (FastAPI injects by name)
    body: NewSubmissionDep,
    principal: PrincipalDep,
    api: ApiDep,
    response: Response,
    idempotency_key: IdempotencyKeyDep = None,
    wait: Annotated[
        bool, Query(description="hold the request until graded, and answer 200 with the result")
    ] = False,
) -> SubmissionAccepted | JSONResponse:
    """Stored before the answer: a 202 means the submission will be graded (and graded once,
    however often a request with the same Idempotency-Key is retried), with its place in line.
    Follow it with `GET /v1/submissions/{id}?wait=S`, or pass `?wait=true`; a wait that
    outlasts AUTOGRADER_WAIT_TIMEOUT_S answers 202 with the state so far."""
    accepted = await run_in_threadpool(service.accept, api, principal, body, idempotency_key)
    if wait and accepted.submission.status is not SubmissionStatus.DONE:
        await api.waiters.wait(accepted.submission.id, api.settings.wait_timeout_s)
        accepted = await run_in_threadpool(service.reread, api, accepted)
    submission = accepted.submission
    location = f"/v1/submissions/{submission.id}"
    if wait and submission.status is SubmissionStatus.DONE:
        return JSONResponse(
            access.public_view(submission, principal).model_dump(mode="json"),
            status_code=200,
            headers={"Location": location},
        )
    response.headers["Location"] = location
    return accepted.answer()


@router.get(
    "",
    response_model=SubmissionPage,
    summary="A history of submissions, newest first",
    responses=responses(Unauthorized),
)
def list_submissions(  # noqa: PLR0917 (FastAPI injects by name)
    session: SessionDep,
    principal: PrincipalDep,
    student_id: Annotated[StudentId | None, Query()] = None,
    exercise: Annotated[str | None, Query(max_length=100, pattern=SLUG_PATTERN)] = None,
    cursor: Annotated[
        str | None, Query(pattern=ID_PATTERN, description="next_cursor of the previous page")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
) -> SubmissionPage:
    """What the caller may see (app.access.rules), filtered by student and exercise if asked."""
    wanted = [access.visible(principal)]
    if student_id is not None:
        wanted.append(Submission.student_id == student_id)
    if exercise is not None:
        wanted.append(Submission.exercise == exercise)
    return service.history(session, and_(*wanted), cursor=cursor, limit=limit)


@router.get(
    "/{submission_id}",
    response_model=SubmissionPublic,
    summary="A submission, with its report once graded",
    responses=responses(Unauthorized, SubmissionNotFound),
)
async def get_submission(
    submission_id: str, principal: PrincipalDep, api: ApiDep, wait: WaitDep = None
) -> SubmissionPublic:
    """With its source for the key that submitted it and for the course's staff, and its place
    in line while queued. With `?wait=S`, answered as soon as it is graded, else after S
    seconds (at most AUTOGRADER_WAIT_TIMEOUT_S) with its state then: follow a submission by
    asking again, with no pause in between."""
    return await following.followed(api, submission_id, principal, wait)


@router.get(
    "/{submission_id}/results.json",
    response_model=GradescopeResults,
    summary="The report as Gradescope's results.json",
    responses=responses(Unauthorized, SubmissionNotFound, NotFinished),
)
def get_gradescope_results(submission: VisibleSubmissionDep) -> GradescopeResults:
    if submission.status is not SubmissionStatus.DONE or submission.report is None:
        raise NotFinished(f"submission {submission.id} is {submission.status.value}")
    return GradescopeResults.model_validate(
        Report.model_validate(submission.report).to_gradescope()
    )
