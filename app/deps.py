"""FastAPI dependencies, as `Annotated` aliases. Several double as validators: `ExerciseDep`
is the exercise or a 404, `SubmissionDep` the submission or a 404, `NewSubmissionDep` a
request that names a known exercise and a source within the size limit."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Header, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session

from app.api_process import ApiProcess
from app.keys import find_key
from app.models import Submission
from app.problems import PayloadTooLarge, SubmissionNotFound, Unauthorized, UnknownExercise
from app.settings import AppSettings
from app.submissions.schemas import ID_PATTERN, SubmissionCreate
from grader.catalog import Catalog
from grader.errors import UnknownExerciseError
from grader.spec import Exercise

_ID = re.compile(ID_PATTERN)


def get_api(request: Request) -> ApiProcess:
    api: ApiProcess = request.app.state.api
    return api


ApiDep = Annotated[ApiProcess, Depends(get_api)]


def get_settings(api: ApiDep) -> AppSettings:
    return api.settings


SettingsDep = Annotated[AppSettings, Depends(get_settings)]


def get_session(api: ApiDep) -> Iterator[Session]:
    with api.database.session() as session:
        yield session


SessionDep = Annotated[Session, Depends(get_session)]


def get_catalog(api: ApiDep) -> Catalog:
    return api.catalog


CatalogDep = Annotated[Catalog, Depends(get_catalog)]


@dataclass(frozen=True)
class Principal:
    """Who is calling: an API key, or anyone (the service runs open on loopback)."""

    key_id: int | None
    # Owner of idempotency keys and of the per-key rate limit.
    scope: str


_bearer = HTTPBearer(auto_error=False, description="an API key from `autograder keys create`")
_api_key_header = APIKeyHeader(name="X-API-Key", auto_error=False)


def authenticate(
    request: Request,
    api: ApiDep,
    bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
    api_key: Annotated[str | None, Depends(_api_key_header)],
) -> Principal:
    key = bearer.credentials if bearer is not None else api_key
    if key is None:
        if api.settings.api_keys_required():
            raise Unauthorized(
                "send an API key as `Authorization: Bearer <key>` or `X-API-Key: <key>`"
            )
        client = request.client.host if request.client else "unknown"
        return Principal(key_id=None, scope=f"open:{client}")
    with api.database.session() as session:
        row = find_key(session, key)
    if row is None:
        raise Unauthorized("this API key is not known")
    return Principal(key_id=row.id, scope=f"key:{row.id}")


PrincipalDep = Annotated[Principal, Depends(authenticate)]


def valid_exercise(slug: str, catalog: CatalogDep) -> Exercise:
    try:
        return catalog.get(slug)
    except UnknownExerciseError:
        raise UnknownExercise(f"no exercise is called {slug!r}") from None


ExerciseDep = Annotated[Exercise, Depends(valid_exercise)]


def valid_submission(submission_id: str, session: SessionDep) -> Submission:
    # Anything but a well-formed id is unknown without asking the database (which may refuse
    # some characters outright: PostgreSQL has no NUL in text).
    row = session.get(Submission, submission_id) if _ID.fullmatch(submission_id) else None
    if row is None:
        raise SubmissionNotFound(f"no submission has id {submission_id!r}")
    return row


SubmissionDep = Annotated[Submission, Depends(valid_submission)]


def valid_new_submission(
    body: SubmissionCreate, catalog: CatalogDep, settings: SettingsDep
) -> SubmissionCreate:
    valid_exercise(body.exercise, catalog)
    size = len(body.source.encode("utf-8"))
    if size > settings.max_source_bytes:
        raise PayloadTooLarge(
            f"the source is {size} bytes; the limit is {settings.max_source_bytes}"
        )
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
