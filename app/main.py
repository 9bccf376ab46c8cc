"""The FastAPI application: `create_app(settings)` builds it; nothing starts until it is served.

Start-up (the lifespan) builds the API process (app.assembly: database, grading, outbox,
sweeper, and what the last run left unfinished); shutdown stops taking work and waits, bounded,
for gradings in flight.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import APIRouter, Depends, FastAPI
from starlette.middleware.trustedhost import TrustedHostMiddleware

from app.access.auth import authenticate
from app.api import problem_responses, problems
from app.api.security_headers import SecurityHeaders
from app.assembly import build_api
from app.core.settings import AppSettings, get_settings
from app.exercises.progress import router as progress_router
from app.exercises.router import router as exercises_router
from app.health.router import router as health_router
from app.lti import router as lti
from app.lti.registrations import platform_origins
from app.regrades.router import router as regrades_router
from app.staff.extensions import router as extensions_router
from app.staff.roster_router import router as roster_router
from app.staff.router import router as staff_router
from app.submissions.router import router as submissions_router
from app.ui import router as ui
from grader.runner import Grader

log = logging.getLogger(__name__)

DESCRIPTION = """Grades deep-learning exercises in a sandbox. Submit a source file for an
exercise, then poll for the report (or pass `?wait=true`). Errors are RFC 9457 problem documents
(`application/problem+json`)."""


def create_app(settings: AppSettings | None = None, *, grader: Grader | None = None) -> FastAPI:
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.api = build_api(settings, grader=grader)
        try:
            yield
        finally:
            app.state.api.close()

    app = FastAPI(
        title="autograder",
        version="1",
        description=DESCRIPTION,
        lifespan=lifespan,
        # app.ui serves /docs and /redoc from the page's bundle, under the strict CSP.
        docs_url=None,
        redoc_url=None,
        # Bodies over this are refused (413) before they are buffered. JSON escaping may grow a
        # source up to 6x (\uXXXX), plus room for the other fields; the source's own limit,
        # in bytes of UTF-8, is checked after parsing.
        max_body_size=settings.max_source_bytes * 6 + 64 * 1024,
    )
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=settings.answered_hosts())
    # outermost: on every answer
    app.add_middleware(SecurityHeaders, settings=settings, platform_origins=platform_origins)
    problem_responses.install(app)
    v1 = APIRouter(prefix="/v1", dependencies=[Depends(authenticate)])
    v1.include_router(exercises_router)
    v1.include_router(progress_router)
    v1.include_router(submissions_router)
    v1.include_router(staff_router)
    v1.include_router(roster_router)
    v1.include_router(extensions_router)
    v1.include_router(regrades_router)
    app.include_router(v1)
    app.include_router(health_router)
    lti.install(app)
    ui.install(app)
    _document_problem_schema(app)
    return app


def _document_problem_schema(app: FastAPI) -> None:
    original = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = original()
            components = schema.setdefault("components", {}).setdefault("schemas", {})
            components["ProblemDetail"] = problems.ProblemDetail.model_json_schema()
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
