"""What one API process holds, as its request handlers see it (built by app.assembly)."""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends, Request

from app.core.db import Database
from app.core.metrics import Metrics
from app.core.ratelimit import Limiter
from app.core.settings import AppSettings
from app.grading.catalog_watch import CatalogHolder
from app.grading.dispatch import Dispatcher
from app.grading.leases import Leases
from app.grading.line import Line
from app.grading.waiters import Waiters
from grader.catalog import Catalog


@dataclass
class ApiProcess:
    settings: AppSettings
    database: Database
    exercises: CatalogHolder  # the Grader, or the catalog followed by a non-grading API
    leases: Leases
    dispatcher: Dispatcher
    waiters: Waiters
    metrics: Metrics
    key_limiter: Limiter
    student_limiter: Limiter
    lti_login_limiter: Limiter  # per client address
    # Everything started for it, closed last-started-first.
    resources: ExitStack = field(default_factory=ExitStack)
    # The place of a queued submission, with the pace of grading this process last read.
    line: Line = field(default_factory=Line)

    @property
    def catalog(self) -> Catalog:
        """The catalog served now (it changes when the exercises folder does)."""
        return self.exercises.catalog

    def close(self) -> None:
        self.resources.close()


async def get_api(request: Request) -> ApiProcess:
    api: ApiProcess = request.app.state.api
    return api


ApiDep = Annotated[ApiProcess, Depends(get_api)]
