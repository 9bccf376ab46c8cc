"""FastAPI dependencies, as `Annotated` aliases; `served_exercise` is an exercise of a catalog
or a 404 (a 503 when its folder is broken), `find_submission` a submission the caller may see,
or a 404. What a caller may be served (the catalog as they see it, an exercise of it, a new
submission) is `app.access.served`'s.

Those that do no blocking work are `async def`: FastAPI runs a plain `def` dependency in its
thread pool, and under load each such hop cost more of the API's CPU than the work it wrapped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Header, Query
from sqlalchemy import ColumnElement, select
from sqlalchemy.orm import Session

from app.api.api_process import ApiDep
from app.api.problems import (
    ExerciseUnavailable,
    SubmissionNotFound,
    UnknownExercise,
)
from app.api.submission_schemas import ID_PATTERN
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


def served_exercise(slug: str, catalog: Catalog) -> Exercise:
    """The exercise served under `slug`; a 404 when there is none, a 503 saying why when its
    folder is broken."""
    try:
        return catalog.get(slug)
    except UnknownExerciseError:
        raise UnknownExercise(f"no exercise is called {slug!r}") from None
    except ExerciseDefinitionError as error:
        raise ExerciseUnavailable(f"exercise {slug!r} is broken: {error}") from None


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
