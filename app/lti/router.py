"""/lti: the tool's endpoints. Thin: each reads the request, calls its module in a worker thread
(pylti1p3 and the database block), and answers; refusals are pages (`LaunchRefused`).

    GET|POST /lti/login          OIDC login initiation (app.lti.launch.login)
    POST     /lti/launch         the launch (app.lti.launch.launch)
    POST     /lti/deep-link      the picker's choice → LtiDeepLinkingResponse (app.lti.deep_linking)
    GET      /lti/jwks           the tool's public keys
    GET      /lti/canvas.json    Canvas's developer-key configuration
    POST     /lti/submissions    a submission as the launched student (Bearer: the session token)
    GET      /lti/submissions    that student's history of the launch's exercise
    GET      /lti/submissions/ID one of that student's submissions
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, Form, Header, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import BaseModel, ConfigDict, ValidationError

from app.api_process import ApiProcess
from app.auth import Principal
from app.deps import (
    ApiDep,
    SessionDep,
    SettingsDep,
    find_submission,
    valid_new_submission,
)
from app.lti import deep_linking, passback
from app.lti import launch as launches
from app.lti.adapters import LOGIN_TTL, LtiRequest
from app.lti.pages import LaunchRefused, exercise_picker, open_in_new_window, post_to_platform
from app.lti.pages import refused as refused_page
from app.lti.sessions import InvalidToken, LaunchSession
from app.lti.tool_key import tool_key
from app.models import DEFAULT_COURSE_ID, Role, Submission
from app.problems import (
    PayloadTooLarge,
    QueueFull,
    RateLimited,
    SubmissionNotFound,
    Unauthorized,
    responses,
)
from app.settings import AppSettings
from app.submissions import service as submissions
from app.submissions.schemas import (
    ID_PATTERN,
    SubmissionAccepted,
    SubmissionCreate,
    SubmissionPage,
    SubmissionPublic,
    SubmissionSummary,
)

router = APIRouter(prefix="/lti", tags=["lti"])


def tool_url(request: Request, settings: AppSettings, path: str) -> str:
    base = settings.lti_public_url or str(request.base_url)
    return base.rstrip("/") + path


async def _lti_request(request: Request) -> LtiRequest:
    params = dict(request.query_params)
    if request.method == "POST":
        form = await request.form()
        params.update({key: value for key, value in form.items() if isinstance(value, str)})
    return LtiRequest(params, dict(request.cookies), request.url.scheme == "https")


LtiRequestDep = Annotated[LtiRequest, Depends(_lti_request)]


@router.api_route("/login", methods=["GET", "POST"], include_in_schema=False)
async def login(request: Request, lti: LtiRequestDep, api: ApiDep) -> Response:
    """The platform starts a launch here (OIDC third-party-initiated login)."""
    launch_url = tool_url(request, api.settings, "/lti/launch")
    redirect = await run_in_threadpool(launches.login, api, lti, launch_url)
    response = RedirectResponse(redirect.location, status_code=302)
    for cookie in redirect.cookies:
        # The launch is a cross-site POST from the LMS: only SameSite=None comes along with it.
        response.set_cookie(
            cookie.name,
            cookie.value,
            max_age=min(cookie.max_age, int(LOGIN_TTL.total_seconds())),
            path="/lti",
            secure=True,
            httponly=True,
            samesite="none",
        )
    return response


@router.post("/launch", include_in_schema=False)
async def launch(request: Request, lti: LtiRequestDep, api: ApiDep) -> Response:
    """The platform posts the id_token here after the login."""
    login_url = tool_url(request, api.settings, "/lti/login")
    outcome = await run_in_threadpool(launches.launch, api, lti, login_url)
    if isinstance(outcome, launches.Redirect):
        return RedirectResponse(outcome.location, status_code=303)
    if isinstance(outcome, deep_linking.Picker):
        action = tool_url(request, api.settings, "/lti/deep-link")
        return exercise_picker(outcome.slugs_and_titles, action, outcome.context)
    return open_in_new_window(outcome.login_url)


@router.post("/deep-link", include_in_schema=False)
async def deep_link(
    request: Request,
    api: ApiDep,
    context: Annotated[str, Form(max_length=16384)],
    exercise: Annotated[str, Form(max_length=100)],
) -> HTMLResponse:
    """The instructor's choice in the picker: answer the platform with the signed link."""
    launch_url = tool_url(request, api.settings, "/lti/launch")
    answer = await run_in_threadpool(deep_linking.answer, api, context, exercise, launch_url)
    return post_to_platform(answer.return_url, answer.jwt)


_JWKS_EXAMPLE = {
    "keys": [{"kty": "RSA", "kid": "x1...", "n": "0vx7...", "e": "AQAB", "alg": "RS256"}]
}


@router.get(
    "/jwks",
    summary="The tool's public keys (JWKS)",
    responses={200: {"content": {"application/json": {"example": _JWKS_EXAMPLE}}}},
)
async def jwks(api: ApiDep) -> dict[str, Any]:
    """The tool's public keys: platforms check the tool's signatures (deep linking, tokens)."""
    key = await run_in_threadpool(tool_key, api.database, api.settings)
    return key.jwks()


@router.get(
    "/canvas.json",
    summary="The tool's configuration for a Canvas developer key",
    responses={
        200: {
            "content": {
                "application/json": {
                    "example": {
                        "title": "Autograder",
                        "oidc_initiation_url": "https://grader.example.edu/lti/login",
                        "target_link_uri": "https://grader.example.edu/lti/launch",
                        "public_jwk_url": "https://grader.example.edu/lti/jwks",
                    }
                }
            }
        }
    },
)
def canvas_configuration(request: Request, settings: SettingsDep) -> dict[str, Any]:
    """Paste this URL into Canvas (Developer Keys → LTI Key → Enter URL)."""
    launch_url = tool_url(request, settings, "/lti/launch")
    return {
        "title": "Autograder",
        "description": "Deep-learning exercises, graded in a sandbox; grades flow back.",
        "oidc_initiation_url": tool_url(request, settings, "/lti/login"),
        "target_link_uri": launch_url,
        "public_jwk_url": tool_url(request, settings, "/lti/jwks"),
        "scopes": [
            "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
            "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly",
            passback.SCORE_SCOPE,
        ],
        "extensions": [
            {
                "platform": "canvas.instructure.com",
                "privacy_level": "public",
                "settings": {
                    "placements": [
                        {
                            "placement": placement,
                            "message_type": "LtiDeepLinkingRequest",
                            "target_link_uri": launch_url,
                        }
                        for placement in ("assignment_selection", "link_selection")
                    ]
                },
            }
        ],
        "custom_fields": {},
    }


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
    principal = Principal(None, DEFAULT_COURSE_ID, Role.SUBMITTER, scope=f"lti:{who.launch_id}")
    accepted = submissions.accept(api, principal, body, None)
    with api.database.session() as session:
        passback.track(session, accepted.submission.id, who.launch_id)
    return SubmissionAccepted(id=accepted.submission.id, status=accepted.submission.status)


@router.post(
    "/submissions",
    status_code=202,
    response_model=SubmissionAccepted,
    summary="Submit as the launched student",
    responses=responses(Unauthorized, PayloadTooLarge, RateLimited, QueueFull),
)
async def submit(
    body: LtiSubmissionCreate, who: LaunchSessionDep, api: ApiDep
) -> SubmissionAccepted:
    """Submit as the launched student: the exercise and student come from the session token,
    and the grade goes to the launch's line item. Poll `GET /lti/submissions/{id}`."""
    try:
        new = SubmissionCreate(exercise=who.exercise, source=body.source, student_id=who.student_id)
    except ValidationError as error:  # the same checks as /v1/submissions, answered the same
        raise RequestValidationError(error.errors()) from None
    valid_new_submission(new, api.catalog, api.settings)
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
    rows, next_cursor = submissions.history(
        session,
        Submission.student_id == who.student_id,
        student_id=None,
        exercise=who.exercise,
        cursor=cursor,
        limit=limit,
    )
    return SubmissionPage(
        items=[SubmissionSummary.from_row(row) for row in rows], next_cursor=next_cursor
    )


@router.get(
    "/submissions/{submission_id}",
    response_model=SubmissionPublic,
    summary="One of the launched student's submissions",
    responses=responses(Unauthorized, SubmissionNotFound),
)
def get_submission(
    submission_id: str, who: LaunchSessionDep, session: SessionDep
) -> SubmissionPublic:
    """One of the launched student's own submissions, with its code and, once graded, its
    report."""
    row = find_submission(session, submission_id, Submission.student_id == who.student_id)
    return SubmissionPublic.from_row(row, show_source=True)


async def _on_refused(request: Request, error: Exception) -> Response:
    assert isinstance(error, LaunchRefused)
    return refused_page(error)


def install(app: FastAPI) -> None:
    """Mount /lti and show its refusals as pages."""
    app.include_router(router)
    app.add_exception_handler(LaunchRefused, _on_refused)
