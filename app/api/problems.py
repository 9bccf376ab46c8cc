"""Domain errors of the service, and the one place that turns them into RFC 9457 problems.

    Problem                       (any status; `type` names the kind, `title` says it in words)
    ├── Unauthorized              401  no credential, or one that is not known, expired, revoked
    ├── OtherStudent              403  a student submitting as someone else
    ├── NotFound                  404  (or not the caller's to see: app.access.rules)
    │   ├── UnknownExercise
    │   ├── SubmissionNotFound
    │   ├── CourseNotFound        (or not one the caller teaches)
    │   └── RegradeNotFound       (or not of that course)
    ├── NotFinished               409  results asked of a submission still being graded
    ├── IdempotencyKeyReused      422  the same Idempotency-Key with another request body
    ├── ReservedStudentId         422  an `lti:` student id from anything but a launch
    ├── CallbackUrlRefused        422  a callback_url the service will not call (SSRF)
    ├── PayloadTooLarge           413  source (or body) over the limit
    ├── RateLimited               429  with Retry-After
    ├── AttemptsUsedUp            429  with Retry-After: the exercise's attempt budget is spent
    ├── CourseQueueFull           429  with Retry-After: the course's share of the queue is taken
    ├── QueueFull                 503  with Retry-After: the work is refused, never dropped
    ├── ExerciseUnavailable       503  the exercise's folder is broken (its faults in `detail`)
    ├── StorageFull               503  with Retry-After: the disk or the database is full
    ├── DatabaseBusy              503  with Retry-After: a statement ran, or waited on a lock,
    │                                  past the database timeouts (a locked table)
    └── app.lti.tool_key.ToolKeyUnreadable  503  the LTI key is under another secret

Routes and dependencies raise these; `install(app)` answers every one of them, and FastAPI's
validation errors, malformed JSON, plain HTTP errors and anything unforeseen, as
`application/problem+json`. A full disk is told apart from other failures of a write (ENOSPC,
SQLite's SQLITE_FULL, PostgreSQL's disk_full) and answered as StorageFull, and so is a statement
stopped by the database timeouts (app.core.db.Timeouts) as DatabaseBusy. Nothing else in the
service catches errors to shape responses. How routes document them in OpenAPI is
app.api.problem_docs'.
"""

from __future__ import annotations

import errno
import logging
import math
from collections.abc import Mapping, Sequence
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from sqlalchemy.exc import DBAPIError
from starlette.exceptions import HTTPException as StarletteHTTPException

log = logging.getLogger(__name__)

MEDIA_TYPE = "application/problem+json"
TYPE_PREFIX = "urn:autograder:problem:"


class ProblemDetail(BaseModel):
    """RFC 9457 problem details. `errors` lists the fields at fault in a 422."""

    type: str = Field(examples=[f"{TYPE_PREFIX}unknown-exercise"])
    title: str = Field(examples=["Unknown exercise"])
    status: int = Field(examples=[404])
    detail: str = Field(examples=["no exercise is called 'attention'"])
    instance: str = Field(examples=["/v1/exercises/attention"])
    errors: list[dict[str, Any]] | None = None


class Problem(Exception):
    status: int = 500
    kind: str = "internal-error"
    title: str = "Internal error"

    def __init__(self, detail: str, *, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.headers = dict(headers or {})


class Unauthorized(Problem):
    status, kind, title = 401, "unauthorized", "API key required"

    def __init__(self, detail: str) -> None:
        super().__init__(detail, headers={"WWW-Authenticate": "Bearer"})


class NotFound(Problem):
    status, kind, title = 404, "not-found", "Not found"


class UnknownExercise(NotFound):
    kind, title = "unknown-exercise", "Unknown exercise"


class SubmissionNotFound(NotFound):
    kind, title = "unknown-submission", "Unknown submission"


class CourseNotFound(NotFound):
    kind, title = "unknown-course", "Unknown course"


class RegradeNotFound(NotFound):
    kind, title = "unknown-regrade", "Unknown regrade"


class NotFinished(Problem):
    status, kind, title = 409, "not-finished", "Submission not graded yet"

    def __init__(self, detail: str, retry_after_s: int = 1) -> None:
        super().__init__(detail, headers={"Retry-After": str(retry_after_s)})


class IdempotencyKeyReused(Problem):
    status, kind, title = 422, "idempotency-key-reused", "Idempotency-Key reused"


class ReservedStudentId(Problem):
    status, kind, title = 422, "reserved-student-id", "Student id reserved"


class OtherStudent(Problem):
    status, kind, title = 403, "other-student", "Not your student id"


class CallbackUrlRefused(Problem):
    status, kind, title = 422, "callback-url-refused", "Callback URL refused"


class PayloadTooLarge(Problem):
    status, kind, title = 413, "payload-too-large", "Payload too large"


class _RetryLater(Problem):
    def __init__(self, detail: str, retry_after_s: float) -> None:
        super().__init__(detail, headers={"Retry-After": str(max(1, math.ceil(retry_after_s)))})
        self.retry_after_s = retry_after_s


class RateLimited(_RetryLater):
    status, kind, title = 429, "rate-limited", "Too many requests"


class AttemptsUsedUp(_RetryLater):
    status, kind, title = 429, "attempts-used-up", "No attempts left for now"


class QueueFull(_RetryLater):
    status, kind, title = 503, "queue-full", "Grading queue full"


class ExerciseUnavailable(Problem):
    status, kind, title = 503, "exercise-unavailable", "Exercise unavailable"


class CourseQueueFull(_RetryLater):
    status, kind, title = 429, "course-queue-full", "Too much of this course's work in flight"


class StorageFull(_RetryLater):
    status, kind, title = 503, "storage-full", "Storage full"


class DatabaseBusy(_RetryLater):
    status, kind, title = 503, "database-busy", "Database busy"


# How long a client waits before it retries a write refused for a full disk: room is made by
# an operator, not in a second.
_STORAGE_FULL_RETRY_S = 60
_SQLITE_FULL = 13  # SQLite's result code SQLITE_FULL: "database or disk is full"
_PG_DISK_FULL = "53100"  # PostgreSQL's SQLSTATE disk_full
# A statement stopped by a timeout: SQLite's SQLITE_BUSY past its busy timeout, PostgreSQL's
# query_canceled (statement_timeout) and lock_not_available (lock_timeout).
_SQLITE_BUSY = 5
_PG_TIMED_OUT = ("57014", "55P03")
_DATABASE_BUSY_RETRY_S = 5


def problem_response(
    request: Request,
    *,
    status: int,
    kind: str | None,
    title: str,
    detail: str,
    headers: Mapping[str, str] | None = None,
    errors: list[dict[str, Any]] | None = None,
) -> JSONResponse:
    body = ProblemDetail(
        type=f"{TYPE_PREFIX}{kind}" if kind else "about:blank",
        title=title,
        status=status,
        detail=detail,
        instance=request.url.path,
        errors=errors,
    )
    return JSONResponse(
        body.model_dump(exclude_none=True),
        status_code=status,
        headers=dict(headers or {}),
        media_type=MEDIA_TYPE,
    )


async def _on_problem(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, Problem)
    return problem_response(
        request,
        status=error.status,
        kind=error.kind,
        title=error.title,
        detail=error.detail,
        headers=error.headers,
    )


async def _on_validation(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, RequestValidationError)
    errors = [_field_error(item) for item in error.errors()]
    malformed = any(item["type"] == "json_invalid" for item in errors)
    return problem_response(
        request,
        status=422,
        kind="malformed-body" if malformed else "invalid-request",
        title="Malformed JSON" if malformed else "Invalid request",
        detail="; ".join(f"{_where(item['loc'])}: {item['msg']}" for item in errors[:5]),
        errors=errors,
    )


def _field_error(item: Mapping[str, Any]) -> dict[str, Any]:
    # Never echo the input back: it may be a whole submission, and it need not be JSON-safe.
    return {
        "loc": [str(part) for part in item.get("loc", ())],
        "msg": str(item.get("msg", "")),
        "type": str(item.get("type", "")),
    }


def _where(loc: Sequence[str]) -> str:
    return ".".join(loc) or "request"


async def _on_http(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, StarletteHTTPException)
    try:
        title = HTTPStatus(error.status_code).phrase
    except ValueError:
        title = "Error"
    detail = error.detail if isinstance(error.detail, str) else title
    return problem_response(
        request,
        status=error.status_code,
        kind=None,
        title=title,
        detail=detail,
        headers=error.headers,
    )


def _disk_full(error: Exception) -> bool:
    """Whether `error` says the disk is full: an OSError of this process, or a database's own
    (SQLAlchemy wraps the driver's error in `orig`)."""
    if isinstance(error, OSError):
        return error.errno == errno.ENOSPC
    original = getattr(error, "orig", None)
    return (
        getattr(original, "sqlite_errorcode", None) == _SQLITE_FULL
        or getattr(original, "sqlstate", None) == _PG_DISK_FULL
    )


def database_timed_out(error: Exception) -> bool:
    """Whether `error` is a database's refusal to wait any longer (app.core.db.Timeouts)."""
    original = getattr(error, "orig", None)
    return (
        getattr(original, "sqlite_errorcode", None) == _SQLITE_BUSY
        or getattr(original, "sqlstate", None) in _PG_TIMED_OUT
    )


async def _on_write_failure(request: Request, error: Exception) -> JSONResponse:
    if database_timed_out(error):
        log.warning("database busy on %s %s: %s", request.method, request.url.path, error)
        busy = DatabaseBusy(
            "the database did not answer in time (a table is locked); retry later",
            _DATABASE_BUSY_RETRY_S,
        )
        return await _on_problem(request, busy)
    if not _disk_full(error):
        raise error  # unforeseen: on to _on_unexpected, a 500
    log.error("storage full on %s %s: %s", request.method, request.url.path, error)
    full = StorageFull("no room left to store this; retry later", _STORAGE_FULL_RETRY_S)
    return await _on_problem(request, full)


async def _on_unexpected(request: Request, error: Exception) -> JSONResponse:
    log.exception("unhandled error on %s %s", request.method, request.url.path)
    return problem_response(
        request,
        status=500,
        kind="internal-error",
        title="Internal error",
        detail="the service failed; the error is logged",
    )


def install(app: FastAPI) -> None:
    app.add_exception_handler(Problem, _on_problem)
    app.add_exception_handler(RequestValidationError, _on_validation)
    app.add_exception_handler(StarletteHTTPException, _on_http)
    app.add_exception_handler(OSError, _on_write_failure)
    app.add_exception_handler(DBAPIError, _on_write_failure)
    app.add_exception_handler(Exception, _on_unexpected)
