"""Who calls the API: an API key (app.access.api_keys), a student link's token
(app.access.student_links) or the token of an LMS launch as the course's staff
(app.access.staff_sessions), sent as a bearer token or `X-API-Key`; or anyone on loopback when the
service runs open: the default course's admin, or, with `X-Act-As-Student: S`, its student S (so
that attempt budgets, which staff are spared, can be tried locally as a student meets them).
Every /v1 route depends on `authenticate`."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Header, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from app.access import student_links
from app.access.api_keys import find_key
from app.access.signed_tokens import ExpiredToken, InvalidToken
from app.access.staff_sessions import StaffSession, is_staff_token
from app.api.api_process import ApiDep, ApiProcess
from app.api.problems import ActingAsStudentRefused, ReservedStudentId, Unauthorized
from app.core.models import DEFAULT_COURSE_ID, LTI_STUDENTS, Role
from app.core.student_ids import StudentId

# The header by which a page on an open service acts as one student (web/src/api.js sends it).
ACT_AS_STUDENT = "X-Act-As-Student"


@dataclass(frozen=True)
class Principal:
    """Who is calling: an API key; one student (by a student link or an LMS launch); or anyone
    (the service runs open on loopback, as the default course's admin). What each may see and do
    is app.access.rules's."""

    key_id: int | None
    course_id: int
    role: Role
    # Owner of idempotency keys and of the per-key rate limit.
    scope: str
    # Set when the caller is this one student of the course, and acts as nobody else.
    student_id: str | None = None


_bearer = HTTPBearer(auto_error=False, description="an API key from `autograder keys create`")
_api_key_header = APIKeyHeader(name="X-API-Key", auto_error=False)


async def authenticate(
    request: Request,
    api: ApiDep,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    api_key: Annotated[str | None, Depends(_api_key_header)],
    as_student: Annotated[
        StudentId | None,
        Header(
            alias=ACT_AS_STUDENT,
            description="only when the service runs open on loopback (no credential): act as "
            "this student of the default course, attempt budgets included",
        ),
    ] = None,
) -> Principal:
    key = bearer.credentials if bearer is not None else api_key
    if as_student is not None and (key is not None or api.settings.api_keys_required()):
        raise ActingAsStudentRefused(
            f"{ACT_AS_STUDENT} is honoured only without a credential, on a service that runs "
            "open on loopback; here, a student signs in with their link or LMS launch"
        )
    if key is None:
        if api.settings.api_keys_required():
            raise Unauthorized(
                "send an API key as `Authorization: Bearer <key>` or `X-API-Key: <key>`"
            )
        client = request.client.host if request.client else "unknown"
        if as_student is not None:
            return _open_student(as_student, scope=f"open:{client}")
        return Principal(None, DEFAULT_COURSE_ID, Role.ADMIN, scope=f"open:{client}")
    # Async, and to the thread pool only for the database: one hop fewer on every request.
    if student_links.is_link_token(key):
        return await run_in_threadpool(_linked_student, api, key)
    if is_staff_token(key):
        return _launched_staff(api, key)
    return await run_in_threadpool(_api_key_holder, api, key)


def _open_student(student_id: str, scope: str) -> Principal:
    if student_id.startswith(LTI_STUDENTS):
        raise ReservedStudentId(f"student ids starting {LTI_STUDENTS!r} are made by LMS launches")
    return student_principal(DEFAULT_COURSE_ID, student_id, scope)


def _api_key_holder(api: ApiProcess, key: str) -> Principal:
    with api.database.session() as session:
        row = find_key(session, key)
    if row is None:
        raise Unauthorized("this API key is not known, or was revoked")
    return Principal(row.id, row.course_id, row.role, scope=f"key:{row.id}")


def _linked_student(api: ApiProcess, token: str) -> Principal:
    try:
        with api.database.session() as session:
            student = student_links.check(session, api.settings, token)
    except ExpiredToken:
        raise Unauthorized(
            "this student link has expired: ask your instructor for a new one"
        ) from None
    except InvalidToken:
        raise Unauthorized(
            "this student link is not valid, or was revoked: ask your instructor for a new one"
        ) from None
    return student_principal(student.course_id, student.student_id, f"link:{student.link_id}")


def _launched_staff(api: ApiProcess, token: str) -> Principal:
    """An instructor or TA launched from the course's LMS: the course's instructor, nobody's
    student. Its scope (rate limits, idempotency keys) is the launched person."""
    try:
        staff = StaffSession.verify(api.settings, token)
    except ExpiredToken:
        raise Unauthorized(
            "this session has expired: open the dashboard from your course again"
        ) from None
    except InvalidToken as error:
        raise Unauthorized(f"this session token is not valid ({error}); launch again") from None
    person = hashlib.sha256(staff.user_id.encode()).hexdigest()[:24]
    scope = f"lti-staff:{staff.platform_id}:{person}"
    return Principal(None, staff.course_id, Role.INSTRUCTOR, scope=scope)


def student_principal(course_id: int, student_id: str, scope: str) -> Principal:
    """One student of a course, acting as nobody else (a student link, or an LMS launch)."""
    return Principal(None, course_id, Role.SUBMITTER, scope=scope, student_id=student_id)


PrincipalDep = Annotated[Principal, Depends(authenticate)]
