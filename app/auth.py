"""Who calls the API: an API key (app.api_keys) sent as a bearer token or `X-API-Key`, or
anyone on loopback when the service runs open. Every /v1 route depends on `authenticate`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from app.api_keys import find_key
from app.deps import ApiDep
from app.models import DEFAULT_COURSE_ID, Role
from app.problems import Unauthorized


@dataclass(frozen=True)
class Principal:
    """Who is calling: an API key, or anyone (the service runs open on loopback, as the default
    course's admin). What each may see and do is app.access's."""

    key_id: int | None
    course_id: int
    role: Role
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
        return Principal(None, DEFAULT_COURSE_ID, Role.ADMIN, scope=f"open:{client}")
    with api.database.session() as session:
        row = find_key(session, key)
    if row is None:
        raise Unauthorized("this API key is not known, or was revoked")
    return Principal(row.id, row.course_id, row.role, scope=f"key:{row.id}")


PrincipalDep = Annotated[Principal, Depends(authenticate)]
