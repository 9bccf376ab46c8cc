"""/: where a student lands without a path, the list of exercises;
/exercises/{slug}: the page where a student reads an exercise, writes and submits a solution;
/exercises: the list of exercises, where a student link without an exercise lands;
/courses/{course}/dashboard: the course dashboard of its staff;
/docs and /redoc: the API's docs pages (app.ui.api_docs), in place of FastAPI's own.

Public like the statement it shows; the API calls the page makes go through /v1 and its auth.
An LMS frames the page: who may is app.api.security_headers' `frame-ancestors`, for every response.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles
from starlette.responses import Response
from starlette.types import Scope

from app.api.api_process import ApiDep
from app.api.deps import SettingsDep
from app.core.models import DEFAULT_COURSE
from app.courses.registry import COURSE_PATTERN
from app.ui import api_docs, dashboard, page
from grader.catalog import Catalog
from grader.errors import ExerciseDefinitionError, UnknownExerciseError

router = APIRouter(tags=["ui"], include_in_schema=False)


@router.get("/")
def home(request: Request) -> RedirectResponse:
    """To the list of exercises, with the address's query; the browser carries the fragment
    (where a student link's token travels) over the redirect by itself."""
    query = f"?{request.url.query}" if request.url.query else ""
    return RedirectResponse(f"/exercises{query}", status_code=307)


async def page_catalog(api: ApiDep) -> Catalog:
    """The catalog a page shows. A page carries no credential, so it shows drafts only where
    the service runs open, where /v1 takes every caller for its admin too; else the published
    exercises alone (a draft's page is a 404, as for no such exercise)."""
    return api.catalog.published if api.settings.api_keys_required() else api.catalog


PageCatalogDep = Annotated[Catalog, Depends(page_catalog)]


@router.get("/exercises", response_class=HTMLResponse)
def catalog_page(catalog: PageCatalogDep, settings: SettingsDep) -> HTMLResponse:
    return HTMLResponse(page.catalog_page(catalog, keys_required=settings.api_keys_required()))


@router.get("/exercises/{slug}", response_class=HTMLResponse)
def exercise_page(slug: str, catalog: PageCatalogDep, settings: SettingsDep) -> HTMLResponse:
    try:
        exercise = catalog.get(slug)
    except UnknownExerciseError:
        return HTMLResponse(page.not_found_page(slug), status_code=404)
    except ExerciseDefinitionError as error:
        return HTMLResponse(page.unavailable_page(slug, error.lines()), status_code=503)
    return HTMLResponse(page.exercise_page(exercise, keys_required=settings.api_keys_required()))


@router.get("/courses/{course}/dashboard", response_class=HTMLResponse)
def dashboard_page(course: str, settings: SettingsDep) -> HTMLResponse:
    """Public like the exercise page: the figures come from the staff API, the shell has none."""
    if not COURSE_PATTERN.fullmatch(course):
        return HTMLResponse(dashboard.not_found_page(course), status_code=404)
    # An open service is the default course's staff only: another course's page asks for a key
    # (or is opened with one: `autograder demo-course`) rather than meet a 404 from the API.
    keys_required = settings.api_keys_required() or course != DEFAULT_COURSE
    return HTMLResponse(dashboard.dashboard_page(course, keys_required=keys_required))


@router.get("/docs", response_class=HTMLResponse)
def swagger_page(request: Request) -> HTMLResponse:
    return HTMLResponse(api_docs.swagger_page(request.app.openapi_url))


@router.get("/redoc", response_class=HTMLResponse)
def redoc_page(request: Request) -> HTMLResponse:
    return HTMLResponse(api_docs.redoc_page(request.app.openapi_url))


class _Bundle(StaticFiles):
    """The bundle's files; until it is built, each is a 404 that says how to build it (the
    folder may not exist yet, which StaticFiles would answer with a 500)."""

    async def check_config(self) -> None:
        if page.assets_built():
            await super().check_config()

    async def get_response(self, path: str, scope: Scope) -> Response:
        if not page.assets_built():
            raise HTTPException(404, f"the exercise page's bundle is not built: {page.BUILD_HINT}")
        return await super().get_response(path, scope)


def install(app: FastAPI) -> None:
    """The page, and the bundle it loads: absent until built, which the page itself explains
    (hence check_dir=False)."""
    app.include_router(router)
    app.mount(page.ASSETS_URL, _Bundle(directory=page.DIST, check_dir=False), name="ui")
