"""What a caller may be served, as FastAPI dependencies: the catalog as they may see it (staff
see drafts; anyone else, the published exercises alone, a draft unknown to them: 404), an
exercise of it, and a new submission naming one."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends
from fastapi.concurrency import run_in_threadpool

from app.access import rules as access
from app.access.auth import PrincipalDep
from app.api.api_process import ApiDep
from app.api.deps import SettingsDep, served_exercise
from app.api.problems import CallbackUrlRefused, PayloadTooLarge
from app.api.submission_schemas import SubmissionCreate
from app.core.callback_urls import CallbackPolicy, CallbackRefused
from grader.catalog import Catalog
from grader.spec import Exercise


async def get_catalog(api: ApiDep, principal: PrincipalDep) -> Catalog:
    """The catalog as the caller may see it: staff see drafts, anyone else the published
    exercises alone (a draft is unknown to them: 404)."""
    return api.catalog if access.sees_drafts(principal) else api.catalog.published


CatalogDep = Annotated[Catalog, Depends(get_catalog)]


async def valid_exercise(slug: str, catalog: CatalogDep) -> Exercise:
    return served_exercise(slug, catalog)


ExerciseDep = Annotated[Exercise, Depends(valid_exercise)]


async def valid_new_submission(
    body: SubmissionCreate, catalog: CatalogDep, settings: SettingsDep
) -> SubmissionCreate:
    served_exercise(body.exercise, catalog)
    size = len(body.source.encode("utf-8"))
    if size > settings.max_source_bytes:
        raise PayloadTooLarge(
            f"the source is {size} bytes; the limit is {settings.max_source_bytes}"
        )
    if body.callback_url is not None:
        # A name that does not resolve now is refused too: it could resolve anywhere later.
        # Resolving blocks, so it runs in the thread pool.
        policy = CallbackPolicy(settings.webhook_allowed_hosts)
        try:
            await run_in_threadpool(policy.check, str(body.callback_url))
        except CallbackRefused as refused:
            raise CallbackUrlRefused(f"callback_url: {refused}") from None
    return body


NewSubmissionDep = Annotated[SubmissionCreate, Depends(valid_new_submission)]
