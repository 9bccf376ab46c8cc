"""FastAPI dependencies, as `Annotated` aliases. Several double as validators: `ExerciseDep`
is the exercise or a 404 (a draft, to a caller who is not staff, included; a 503 when its folder
is broken), `NewSubmissionDep` a request that
names a served exercise, a source within the size limit and a callback URL the service may
call; `find_submission` is a submission the caller may see, or a 404.

Those that do no blocking work are `async def`: FastAPI runs a plain `def` dependency in its
thread pool, and under load each such hop cost more of the API's CPU than the work it wrapped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Header, Query
from fastapi.concurrency import run_in_threadpool
from sqlalchemy import ColumnElement, select
from sqlalchemy.orm import Session

from app.access import rules as access
from app.access.auth import PrincipalDep
from app.api.api_process import ApiDep
from app.api.problems import (
    CallbackUrlRefused,
    ExerciseUnavailable,
    PayloadTooLarge,
    SubmissionNotFound,
    UnknownExercise,
)
from app.api.submission_schemas import ID_PATTERN, SubmissionCreate
from app.core.callback_urls import CallbackPolicy, CallbackRefused
from app.core.models import Submission
from app.core.settings import AppSettings
from app.core.student_ids import StudentId
from grader.catalog import Catalog
from grader.errors import ExerciseDefinitionError, UnknownExerciseError
from grader.spec import Exercise

_ID = re.compile(ID_PATTERN)


async def get_settings(api: ApiDep) -> AppSettings:
    return api.settings


SettingsDep = Annotated[AppSettings, Depends(get_settings)]


def get_session(api: ApiDep) -> Iterator[Session]:
    with api.database.session() as session:
        yield session


SessionDep = Annotated[Session, Depends(get_session)]


async def get_catalog(api: ApiDep, principal: PrincipalDep) -> Catalog:
    """The catalog as the caller may see it: staff see drafts, anyone else the published
    exercises alone (a draft is unknown to them: 404)."""
    return api.catalog if access.sees_drafts(principal) else api.catalog.published


CatalogDep = Annotated[Catalog, Depends(get_catalog)]


async def valid_exercise(slug: str, catalog: CatalogDep) -> Exercise:
    """The exercise served under `slug`; a 404 when there is none, a 503 saying why when its
    folder is broken."""
    return served_exercise(slug, catalog)


def served_exercise(slug: str, catalog: Catalog) -> Exercise:
    """`valid_exercise`, for a caller that is not a dependency."""
    try:
        return catalog.get(slug)
    except UnknownExerciseError:
        raise UnknownExercise(f"no exercise is called {slug!r}") from None
    except ExerciseDefinitionError as error:
        raise ExerciseUnavailable(f"exercise {slug!r} is broken: {error}") from None


ExerciseDep = Annotated[Exercise, Depends(valid_exercise)]


def find_submission(
    session: Session, submission_id: str, visible: ColumnElement[bool]
) -> Submission:
    """The submission, if the caller may see it (`visible`: app.access.rules); else 404 alike."""
    # Anything but a well-formed id is unknown without asking the database (which may refuse
    # some characters outright: PostgreSQL has no NUL in text).
    row = (
        session.scalars(
            select(Submission).where(Submission.id == submission_id, visible)
        ).one_or_none()
        if _ID.fullmatch(submission_id)
        else None
    )
    if row is None:
        raise SubmissionNotFound(f"no submission has id {submission_id!r}")
    return row


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

IdempotencyKeyDep = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        min_length=1,
        max_length=255,
        pattern=r"^[\x21-\x7e]+$",
        description="Retrying a POST with the same key returns the same submission; it is "
        "graded once. Scoped to the API key.",
    ),
]

# The student a key speaks for (a student's own credential names them already), in its normal
# form (app.core.student_ids).
StudentQuery = Annotated[StudentId | None, Query(description="for keys: which student")]
