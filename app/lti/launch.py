"""OIDC login initiation and the launch: pylti1p3 validates, this module decides what follows.

    login   the platform's third-party-initiated login → a redirect to its auth endpoint, with a
            state cookie (SameSite=None; Secure) and the login stored (state, nonce, params,
            each at most MAX_LOGIN_PARAM long), until AUTOGRADER_LTI_LOGIN_TTL_S
    launch  the platform's form post (id_token, state) → validated by pylti1p3 (state against
            its cookie, signature against the platform's JWKS, registration, deployment,
            message) plus the nonce consumed once (app.lti.adapters.LoginStore) and the claims
            it leaves unchecked (app.lti.claims); then
              - every launch: its LMS course (the context claim) must be bound to one of ours
                (app.lti.contexts), or the launch is refused; that course is the launch's.
                A roster missing or stale is asked for (app.lti.roster: the outbox reads it)
              - a resource-link launch of a student: the launch is stored and the browser
                goes to the exercise page with a signed session token
                (app.lti.sessions.LaunchSession), after the LMS's due date for the exercise
                is kept (app.lti.due_dates); an exercise not published yet (a draft,
                grader.proof_record) is refused with a page that says so
              - a resource-link launch of an Instructor or TA (app.lti.roles): the course
                dashboard, with a staff session token (app.access.staff_sessions)
              - a deep-linking request: the exercise picker (app.lti.deep_linking)

Everything here blocks (database, the platform's key fetch): routes call it in a worker thread.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any
from urllib.parse import quote, urlencode

from pylti1p3.exception import LtiException, OIDCException
from pylti1p3.message_launch import MessageLaunch
from pylti1p3.oidc_login import OIDCLogin

from app.access.staff_sessions import StaffSession
from app.api.api_process import ApiProcess
from app.core.models import Course
from app.courses.due_dates import set_lms_due_date
from app.lti import claims, contexts, deep_linking, due_dates, roles, roster
from app.lti.adapters import (
    CookieJar,
    CookieToSet,
    LoginStore,
    LtiRequest,
    UrlRedirect,
    http_session,
)
from app.lti.models import LtiLaunch, LtiLogin, LtiPlatform
from app.lti.pages import LaunchRefused, Remedy
from app.lti.registrations import DatabaseToolConf, find_platform
from app.lti.sessions import LaunchSession
from app.lti.tool_key import tool_key
from grader.errors import ExerciseDefinitionError, UnknownExerciseError
from grader.proof_record import draft_reason

CUSTOM_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/custom"
# What a login needs to start again in a new window (the OIDC third-party login parameters).
LOGIN_PARAMS = (
    "iss",
    "login_hint",
    "target_link_uri",
    "lti_message_hint",
    "lti_deployment_id",
    "client_id",
)
# Each is stored with the login until it expires: no hint a platform sends is near this long.
MAX_LOGIN_PARAM = 4096


class _Login(OIDCLogin[LtiRequest, DatabaseToolConf, LoginStore, CookieJar, str]):
    def get_redirect(self, url: str) -> UrlRedirect:
        return UrlRedirect(url)


class _Launch(MessageLaunch[LtiRequest, DatabaseToolConf, LoginStore, CookieJar]):
    def _get_request_param(self, key: str) -> str:
        return self._request.get_param(key)

    # Before the nonce is consumed: a token refused here leaves its login usable.
    def validate_jwt_format(self) -> _Launch:
        super().validate_jwt_format()
        claims.check_id_token(self._jwt["body"])
        return self

    def get_client_id(self) -> str:
        return claims.client_id(self._get_jwt_body())


@dataclass(frozen=True)
class Redirect:
    location: str
    cookies: list[CookieToSet] = field(default_factory=list)


@dataclass(frozen=True)
class NewWindow:
    """The launch came without its state cookie: offer the login again, top-level."""

    login_url: str


def _login_store(api: ApiProcess, request: LtiRequest) -> LoginStore:
    return LoginStore(api.database, request, timedelta(seconds=api.settings.lti_login_ttl_s))


def _login_params(request: LtiRequest) -> dict[str, str]:
    params = {name: request.get_param(name) for name in LOGIN_PARAMS if request.get_param(name)}
    for name, value in params.items():
        if len(value) > MAX_LOGIN_PARAM:
            raise LaunchRefused(
                f"the login's {name} is longer than {MAX_LOGIN_PARAM} characters",
                remedy=Remedy.ASK_INSTRUCTOR,
            )
    return params


def _limit_logins(api: ApiProcess, client: str) -> None:
    wait = api.lti_login_limiter.acquire(client)
    if wait is not None:
        raise LaunchRefused(
            f"{client} started too many launches; it may again in {math.ceil(wait)} s",
            429,
            remedy=Remedy.WAIT,
            retry_after_s=math.ceil(wait),
        )


def login(api: ApiProcess, request: LtiRequest, launch_url: str, client: str) -> Redirect:
    """Answer the platform's login initiation with the redirect to its auth endpoint. Each login
    stores a row until it expires, so they are limited per `client` (its address)."""
    _limit_logins(api, client)
    params = _login_params(request)
    conf = DatabaseToolConf(api.database, tool_key(api.database, api.settings))
    cookies = CookieJar(request)
    oidc = _Login(request, conf, _login_store(api, request), cookies)
    try:
        location = oidc.pass_params_to_launch(dict(params)).redirect(launch_url)
    except (OIDCException, LtiException) as error:
        raise LaunchRefused(
            f"login refused: {error}; is this platform registered (autograder lti add-platform)?",
            remedy=Remedy.ASK_INSTRUCTOR,
        ) from None
    return Redirect(location, cookies.to_set)


def launch(
    api: ApiProcess, request: LtiRequest, login_url: str
) -> Redirect | deep_linking.Picker | NewWindow:
    """Validate a launch and say where it leads. `login_url` is where a login restarts."""
    state = request.get_param("state")
    if not state or not request.get_param("id_token"):
        raise LaunchRefused("the launch carries no id_token or no state")
    cookies = CookieJar(request)
    if cookies.get_cookie(state) != state:
        return _without_state_cookie(api, state, login_url)
    key = tool_key(api.database, api.settings)
    message = _Launch(
        request,
        DatabaseToolConf(api.database, key),
        _login_store(api, request),
        cookies,
        requests_session=http_session(),
    )
    try:
        message.validate()
        body: dict[str, Any] = dict(message.get_launch_data())
    except LtiException as error:
        raise LaunchRefused(_reason(str(error)), 403) from None
    with api.database.session() as session:
        platform = find_platform(session, body["iss"], message.get_client_id())
    assert platform is not None  # validate() found this registration
    lms = claims.lms_course(body)
    binding = contexts.course_of_launch(api.database, platform, lms)
    roster.note_launch(api.database, api.settings, binding.context_row, body)
    if message.is_deep_link_launch():
        return deep_linking.picker(api, platform, body)
    if not message.is_resource_launch():
        raise LaunchRefused(
            "this tool answers resource links and deep linking", remedy=Remedy.ASK_INSTRUCTOR
        )
    launched = Launched(platform, lms, binding)
    if roles.is_staff(body):
        return Redirect(_open_dashboard(api, launched, body))
    return Redirect(_start_exercise(api, launched, body))


def _reason(error: str) -> str:
    if error == "Invalid Nonce":
        return "this launch was used already, or it expired (a launch is good once)"
    if error.startswith("Can't decode id_token"):
        return f"the id_token's signature does not verify against the platform's keys ({error})"
    return error


def _without_state_cookie(api: ApiProcess, state: str, login_url: str) -> NewWindow:
    with api.database.session() as session:
        row = session.get(LtiLogin, state)
        params = dict(row.login_params) if row is not None and row.used_at is None else None
    if params is None:
        raise LaunchRefused("this launch's login is unknown or was used")
    params["lti1p3_new_window"] = "1"
    return NewWindow(f"{login_url}?{urlencode(params)}")


@dataclass(frozen=True)
class Launched:
    """Where a launch comes from, and the course of ours it belongs to."""

    platform: LtiPlatform
    lms: claims.LmsCourse
    binding: contexts.Binding


def _linked_exercise(body: dict[str, Any]) -> str:
    """The exercise the resource link names (its custom parameter), or ""."""
    custom = body.get(CUSTOM_CLAIM) or {}
    return str(custom.get("exercise", "")) if isinstance(custom, dict) else ""


def _start_exercise(api: ApiProcess, launched: Launched, body: dict[str, Any]) -> str:
    slug = _linked_exercise(body)
    try:
        exercise = api.catalog.get(slug)
    except UnknownExerciseError:
        raise LaunchRefused(
            f"the resource link names the exercise {slug!r}, which this autograder does not "
            "have; the instructor can pick one again (deep linking)",
            404,
            remedy=Remedy.ASK_INSTRUCTOR,
        ) from None
    except ExerciseDefinitionError as error:
        raise LaunchRefused(f"{error}", 503, remedy=Remedy.ASK_INSTRUCTOR) from None
    draft = draft_reason(exercise)
    if draft is not None:  # staff chose the link: its page may say the exercise exists
        raise LaunchRefused(
            f"the resource link names the exercise {slug!r}, a draft: {draft}",
            404,
            remedy=Remedy.NOT_PUBLISHED,
        )
    sub = claims.user_id(body)
    grades = claims.grade_service(body)
    row = LtiLaunch(
        platform_id=launched.platform.id,
        deployment_id=launched.lms.deployment_id,
        context_id=launched.lms.context_id,
        user_id=sub,
        exercise=slug,
        lineitem_url=grades.lineitem_url,
        ags_scopes=grades.scopes,
    )
    # The student of the launch's course: the same LMS user in two courses is two students.
    course_id = launched.binding.course_id
    lms_due = due_dates.lms_due_date(api, launched.platform, body, grades)
    with api.database.session() as session:
        session.add(row)
        if lms_due is not None:
            set_lms_due_date(session, course_id, slug, lms_due.due_at)
    who = LaunchSession(row.id, slug, claims.student_id(launched.platform.id, sub), course_id)
    token = who.sign(api.settings)
    # In the fragment: browsers never send it to a server (no Referer, no access logs).
    return f"/exercises/{slug}#{urlencode({'lti_session': token})}"


def _open_dashboard(api: ApiProcess, launched: Launched, body: dict[str, Any]) -> str:
    """The dashboard of the launch's course, opened at the link's exercise (when it names one),
    with the staff session in the fragment like a student's."""
    binding = launched.binding
    staff = StaffSession(
        launched.platform.id, claims.user_id(body), binding.course_id, binding.context_row
    )
    with api.database.session() as session:
        slug = session.get_one(Course, binding.course_id).slug
    exercise = _linked_exercise(body)
    query = f"?{urlencode({'exercise': exercise})}" if exercise else ""
    fragment = urlencode({"staff_session": staff.sign(api.settings)})
    return f"/courses/{quote(slug)}/dashboard{query}#{fragment}"
