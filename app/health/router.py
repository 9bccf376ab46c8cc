"""Liveness, readiness and metrics, outside /v1 and without keys (for orchestrators)."""

from __future__ import annotations

import anyio
import anyio.to_thread
from fastapi import APIRouter, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict

from app.api.api_process import ApiDep, ApiProcess
from app.api.problem_docs import responses
from app.api.problem_responses import database_timed_out
from app.api.problems import DatabaseBusy
from app.core.metrics import CONTENT_TYPE
from app.grading.dispatch import Check
from grader.catalog import Catalog

router = APIRouter(tags=["health"])


class Alive(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [{"status": "alive"}]})

    status: str


class CheckResult(BaseModel):
    name: str
    ok: bool
    detail: str


class LayerState(BaseModel):
    name: str
    active: bool
    detail: str


class DraftExercise(BaseModel):
    slug: str
    reason: str  # why it is not published, and what publishes it


class DegradedExercise(BaseModel):
    slug: str
    serving: str | None  # the last good version still served, or None: answers 503
    problems: list[str]  # file: field: what is expected


class Readiness(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "status": "ready",
                    "checks": [
                        {"name": "database", "ok": True, "detail": "sqlite"},
                        {"name": "sandbox pool", "ok": True, "detail": "warm"},
                    ],
                    "sandbox_layers": [
                        {"name": "seccomp", "active": True, "detail": "20 calls allowed"},
                        {"name": "network namespace", "active": False, "detail": "needs root"},
                    ],
                    "degraded_exercises": [
                        {
                            "slug": "attention",
                            "serving": None,
                            "problems": ["attention/exercise.toml: tests.0.seed: Field required"],
                        }
                    ],
                    "draft_exercises": [
                        {
                            "slug": "layer-norm",
                            "reason": "not proven: run `autograder check-exercise layer-norm`",
                        }
                    ],
                }
            ]
        }
    )

    status: str  # "ready" | "not_ready"
    checks: list[CheckResult]
    sandbox_layers: list[LayerState]
    # Broken exercise folders: the rest is served, so they do not make the process not ready.
    degraded_exercises: list[DegradedExercise] = []
    # Exercises not proven at their version: served to staff alone, so not a fault either.
    draft_exercises: list[DraftExercise] = []


@router.get("/healthz", response_model=Alive, summary="The process answers")
async def healthz() -> Alive:
    # On the event loop, touching nothing: it answers even while requests stuck on the broker
    # or the database hold every thread of the pool.
    return Alive(status="alive")


@router.get(
    "/readyz",
    response_model=Readiness,
    summary="Ready to grade: database, broker, warm sandbox pool; which sandbox layers are "
    "active; which exercises are broken",
    responses={503: {"model": Readiness, "description": "Not ready (see the failing checks)."}},
)
async def readyz(api: ApiDep) -> JSONResponse:
    readiness = _late
    # Abandoned, not awaited, past the deadline: a thread stuck on a silent database or broker
    # must not hold the probe's answer (it ends at its own socket timeout).
    with anyio.move_on_after(_READINESS_DEADLINE_S):
        readiness = await anyio.to_thread.run_sync(_readiness, api, abandon_on_cancel=True)
    return JSONResponse(
        readiness.model_dump(), status_code=200 if readiness.status == "ready" else 503
    )


# An orchestrator's probe is answered within this, whatever the database or the broker do
# (Docker's health checks give up after 5 s).
_READINESS_DEADLINE_S = 3.0
_late = Readiness(
    status="not_ready",
    checks=[
        CheckResult(
            name="readiness",
            ok=False,
            detail=f"the database or the broker did not answer within {_READINESS_DEADLINE_S:g} s",
        )
    ],
    sandbox_layers=[],
)


def _readiness(api: ApiProcess) -> Readiness:
    checks = [_database_check(api), *api.dispatcher.checks()]
    try:
        layers = [
            LayerState(name=layer.name, active=layer.active, detail=layer.detail)
            for layer in api.dispatcher.layers()
        ]
    except Exception as error:
        checks.append(Check("sandbox layers", False, f"{type(error).__name__}: {error}"))
        layers = []
    ready = all(check.ok for check in checks)
    return Readiness(
        status="ready" if ready else "not_ready",
        checks=[CheckResult(name=c.name, ok=c.ok, detail=c.detail) for c in checks],
        sandbox_layers=layers,
        degraded_exercises=_degraded(api.catalog),
        draft_exercises=[
            DraftExercise(slug=slug, reason=reason) for slug, reason in api.catalog.drafts().items()
        ],
    )


def _degraded(catalog: Catalog) -> list[DegradedExercise]:
    return [
        DegradedExercise(
            slug=slug,
            serving=exercise.version if (exercise := catalog.serving(slug)) else None,
            problems=error.lines(),
        )
        for slug, error in sorted(catalog.problems.items())
    ]


# The submissions table must take a write within this, well inside the probe's deadline, so a
# locked table is told apart from a silent server.
_WRITABLE_WITHIN_S = 1.0


def _database_check(api: ApiProcess) -> Check:
    """Not only that the database answers: that a submission could be stored now (a table
    locked by a migration or an operator's session answers SELECT 1 and stalls every POST)."""
    try:
        api.database.check_writable(_WRITABLE_WITHIN_S)
    except Exception as error:
        cause = (
            f"the submissions table took no write within {_WRITABLE_WITHIN_S:g} s (locked): "
            if database_timed_out(error)
            else ""
        )
        return Check("database", False, f"{cause}{type(error).__name__}: {error}"[:300])
    return Check("database", True, api.database.engine.dialect.name)


@router.get(
    "/metrics",
    summary="Prometheus metrics",
    response_class=Response,
    responses={
        200: {"content": {CONTENT_TYPE: {"example": "autograder_queue_depth 0.0\n"}}},
        **responses(DatabaseBusy),
    },
)
async def metrics(api: ApiDep) -> Response:
    """One scrape at a time asks the database (app.core.metrics): the others get the last answer,
    or a 503 before the first, so scrapes never pile up on a locked table."""
    body = await run_in_threadpool(api.metrics.render_alone)
    if body is None:
        raise DatabaseBusy("the metrics are being counted; retry later", _METRICS_RETRY_S)
    return Response(body, media_type=CONTENT_TYPE)


_METRICS_RETRY_S = 5
