"""The one place that turns the service's domain errors (app.api.problems) into RFC 9457
problems: `install(app)` answers every one of them, and FastAPI's validation errors, malformed
JSON, plain HTTP errors and anything unforeseen, as `application/problem+json`. A full disk is
told apart from other failures of a write (ENOSPC, SQLite's SQLITE_FULL, PostgreSQL's disk_full)
and answered as StorageFull, and so is a statement stopped by the database timeouts
(app.core.db.Timeouts) as DatabaseBusy. Nothing else in the service catches errors to shape
responses."""

from __future__ import annotations

import errno
import logging
from collections.abc import Mapping, Sequence
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DBAPIError
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.api.problems import (
    MEDIA_TYPE,
    TYPE_PREFIX,
    DatabaseBusy,
    Problem,
    ProblemDetail,
    StorageFull,
)

log = logging.getLogger(__name__)

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
