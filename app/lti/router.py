"""/lti: the tool's endpoints for the platform and the browser. Thin: each reads the request,
calls its module in a worker thread (pylti1p3 and the database block), and answers; refusals are
pages (`LaunchRefused`). The launched student's API is app.lti.student_api.

    GET|POST /lti/login          OIDC login initiation (app.lti.launch.login)
    POST     /lti/launch         the launch (app.lti.launch.launch)
    POST     /lti/deep-link      the picker's choice → LtiDeepLinkingResponse (app.lti.deep_linking)
    GET      /lti/return.js      the script of the page that posts that answer to the platform
    GET      /lti/jwks           the tool's public keys
    GET      /lti/canvas.json    Canvas's developer-key configuration
"""

from __future__ import annotations

import logging
import secrets
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, Form, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.api.api_process import ApiDep
from app.api.deps import SettingsDep
from app.core.settings import AppSettings
from app.lti import deep_linking, passback, student_api
from app.lti import launch as launches
from app.lti.adapters import LtiRequest
from app.lti.nrps import MEMBERSHIPS_SCOPE
from app.lti.pages import (
    RETURN_SCRIPT,
    RETURN_SCRIPT_URL,
    STYLESHEET,
    STYLESHEET_URL,
    LaunchRefused,
    Remedy,
    exercise_picker,
    open_in_new_window,
    post_to_platform,
)
from app.lti.pages import refused as refused_page
from app.lti.tool_key import tool_key

router = APIRouter(prefix="/lti", tags=["lti"])
log = logging.getLogger(__name__)


def tool_url(request: Request, settings: AppSettings, path: str) -> str:
    """The tool's URL of `path`, from AUTOGRADER_PUBLIC_URL; a request's Host is believed only
    on loopback, where nobody else can send one."""
    if settings.public_url:
        base = settings.public_url
    elif settings.listens_on_loopback():
        base = str(request.base_url)
    else:
        raise LaunchRefused(
            "the tool's address is unknown: set AUTOGRADER_PUBLIC_URL",
            503,
            remedy=Remedy.ASK_INSTRUCTOR,
        )
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
    client = request.client.host if request.client else "unknown"
    redirect = await run_in_threadpool(launches.login, api, lti, launch_url, client)
    response = RedirectResponse(redirect.location, status_code=302)
    for cookie in redirect.cookies:
        # The launch is a cross-site POST from the LMS: only SameSite=None comes along with it.
        response.set_cookie(
            cookie.name,
            cookie.value,
            max_age=min(cookie.max_age, api.settings.lti_login_ttl_s),
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


@router.get(RETURN_SCRIPT_URL.removeprefix("/lti"), include_in_schema=False)
def return_script() -> Response:
    return Response(RETURN_SCRIPT, media_type="text/javascript")


@router.get(STYLESHEET_URL.removeprefix("/lti"), include_in_schema=False)
def stylesheet() -> Response:
    return Response(STYLESHEET, media_type="text/css")


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
            MEMBERSHIPS_SCOPE,
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


async def _on_refused(request: Request, error: Exception) -> Response:
    """The page for the person, the reason for the operator: one log line, found by the
    reference the page shows."""
    assert isinstance(error, LaunchRefused)
    reference = secrets.token_hex(4)
    log.warning(
        "LTI %s refused (%s): %s",
        request.url.path,
        reference,
        error.reason,
        extra={
            "event": "lti_refused",
            "path": request.url.path,
            "status": error.status,
            "reason": error.reason,
            "reference": reference,
        },
    )
    return refused_page(error, reference)


def install(app: FastAPI) -> None:
    """Mount /lti and show its refusals as pages."""
    app.include_router(router)
    app.include_router(student_api.router)
    app.add_exception_handler(LaunchRefused, _on_refused)
