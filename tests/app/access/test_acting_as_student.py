"""On a service that runs open on loopback, a caller with no credential may act as one named
student of the default course (`X-Act-As-Student`), so that attempt budgets, which staff are
spared, can be tried locally as students meet them. Anywhere else the header is refused."""

from __future__ import annotations

import pytest
from access_support import caller
from app_support import MISSING_SCALING, SEED, ClientFactory, SettingsFactory
from fastapi.testclient import TestClient
from httpx2 import Response

from app.core.models import DEFAULT_COURSE_ID, Role
from app.courses.models import ExercisePolicy


def _budgeted(client: TestClient) -> TestClient:
    """The seed exercise allows 2 attempts an hour in the default course."""
    with client.app.state.api.database.session() as session:  # type: ignore[attr-defined]
        session.add(
            ExercisePolicy(course_id=DEFAULT_COURSE_ID, exercise=SEED, attempts=2, window_s=3600)
        )
    return client


def _submit(client: TestClient, headers: dict[str, str], **body: str) -> Response:
    return client.post(
        "/v1/submissions?wait=true",
        json={"exercise": SEED, "source": MISSING_SCALING, **body},
        headers=headers,
    )


def test_acting_as_a_named_student_the_budget_refuses_the_extra_submission(
    client: TestClient,
) -> None:
    _budgeted(client)
    ada = {"X-Act-As-Student": "Ada"}  # taken in its normal form, as any student id
    standing = client.get(f"/v1/exercises/{SEED}/attempts", headers=ada).json()
    assert (standing["limited"], standing["remaining"]) == (True, 2)
    for _ in range(2):
        assert _submit(client, ada).json()["student_id"] == "ada"
    refused = _submit(client, ada)
    assert refused.status_code == 429, refused.text
    assert refused.json()["type"] == "urn:autograder:problem:attempts-used-up"
    assert client.get(f"/v1/exercises/{SEED}/attempts", headers=ada).json()["remaining"] == 0
    # Without the header the open service is staff, whom no budget limits: the same student's
    # next submission is graded (what looked like a broken budget before).
    assert _submit(client, {}, student_id="ada").status_code == 200


def test_the_acting_student_is_that_student_only(client: TestClient) -> None:
    ada = {"X-Act-As-Student": "ada"}
    other = _submit(client, ada, student_id="grace")
    assert other.status_code == 403
    assert other.json()["type"] == "urn:autograder:problem:other-student"
    assert client.get("/v1/submissions", headers=ada).json()["items"] == []
    assert _submit(client, {}, student_id="grace").status_code == 200
    assert client.get("/v1/submissions", headers=ada).json()["items"] == []  # not grace's
    reserved = client.get("/v1/exercises", headers={"X-Act-As-Student": "lti:1:x"})
    assert reserved.status_code == 422
    # A credential says who the caller is already: the header never changes it.
    key = caller(client, "default", Role.INSTRUCTOR).headers
    assert _submit(client, {**key, **ada}).status_code == 403


@pytest.mark.parametrize(
    "settings",
    [
        {"host": "0.0.0.0"},  # beyond loopback
        {"require_api_keys": True},
        {"trusted_proxies": "127.0.0.1"},  # behind a proxy, whoever is behind it
    ],
)
def test_where_keys_are_required_the_header_is_refused(
    make_client: ClientFactory, make_settings: SettingsFactory, settings: dict[str, object]
) -> None:
    client = make_client(make_settings(**settings))
    key = caller(client, "default", Role.INSTRUCTOR).headers
    for headers in ({}, key):
        refused = _submit(client, {**headers, "X-Act-As-Student": "ada"})
        assert refused.status_code == 403, refused.text
        assert refused.json()["type"] == "urn:autograder:problem:acting-as-student-refused"
    assert _submit(client, key, student_id="ada").status_code == 200
