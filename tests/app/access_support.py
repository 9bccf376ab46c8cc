"""Callers of the API in a course, for the tests of who may see what: a key of each role, or a
student link's token (sent the same way)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from fastapi.testclient import TestClient

from app.access import student_links
from app.access.api_keys import create_key
from app.core.models import Role


@dataclass(frozen=True)
class Caller:
    course: str
    role: Role
    key: str  # an API key, or a student link's token (sent the same way)

    @property
    def headers(self) -> dict[str, str]:
        return {"X-API-Key": self.key}


def caller(client: TestClient, course: str, role: Role) -> Caller:
    api = client.app.state.api  # type: ignore[attr-defined]
    with api.database.session() as session:
        _, key = create_key(session, f"{course}-{role.value}", course=course, role=role)
    return Caller(course, role, key)


def linked_student(client: TestClient, course: str, student: str) -> Caller:
    api = client.app.state.api  # type: ignore[attr-defined]
    with api.database.session() as session:
        _, token = student_links.mint(
            session, api.settings, course=course, student=student, lifetime=timedelta(days=1)
        )
    return Caller(course, Role.SUBMITTER, token)
