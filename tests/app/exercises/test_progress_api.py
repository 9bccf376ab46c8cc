"""GET /v1/progress: where the caller stands on every exercise, counted over what the history
would show them: a student's own submissions of their course, nobody else's."""

from __future__ import annotations

from typing import Any

import pytest
from access_support import linked_student
from app_support import SEED, ClientFactory, SettingsFactory, store_submission
from fastapi.testclient import TestClient

from app.core.models import SubmissionStatus
from app.courses.registry import existing_course
from grader.catalog import Catalog

OTHER = "scaled-dot-product-attention"


@pytest.fixture
def client(two_courses: TestClient) -> TestClient:
    return two_courses


def stored(client: TestClient, course: str, **values: Any) -> None:
    """A submission of `course` (the seed exercise's, unless `values` say otherwise)."""
    api = client.app.state.api  # type: ignore[attr-defined]
    with api.database.session() as session:
        course_id = existing_course(session, course).id
    store_submission(api.database, course_id=course_id, **values)


def graded(client: TestClient, course: str, student: str, exercise: str, report: str) -> None:
    """A graded submission; `report` is its status and score, as "failed 2.5"."""
    status, score = report.split()
    stored(
        client,
        course,
        student_id=student,
        exercise=exercise,
        status=SubmissionStatus.DONE,
        report_status=status,
        score=float(score),
        max_score=5.0,
    )


def progress(client: TestClient, headers: dict[str, str]) -> dict[str, dict[str, Any]]:
    response = client.get("/v1/progress", headers=headers)
    assert response.status_code == 200, response.text
    return {row.pop("exercise"): row for row in response.json()}


def test_a_student_new_to_the_course_has_tried_nothing(
    client: TestClient, catalog: Catalog
) -> None:
    ada = linked_student(client, "ml-101", "ada")
    rows = progress(client, ada.headers)
    assert list(rows) == catalog.slugs()
    assert rows[SEED] == {
        "status": "not_tried",
        "submissions": 0,
        "best_score": None,
        "max_score": catalog.get(SEED).spec.max_score,
    }
    assert {row["status"] for row in rows.values()} == {"not_tried"}


def test_a_student_sees_their_best_score_and_their_passes_only(client: TestClient) -> None:
    graded(client, "ml-101", "ada", SEED, "failed 2.0")
    graded(client, "ml-101", "ada", SEED, "rejected 0.0")
    graded(client, "ml-101", "ada", SEED, "failed 3.5")
    graded(client, "ml-101", "ada", OTHER, "failed 1.0")
    graded(client, "ml-101", "ada", OTHER, "passed 5.0")
    graded(client, "ml-101", "grace", SEED, "passed 5.0")  # another student
    graded(client, "cv-202", "ada", SEED, "passed 5.0")  # another course's ada
    rows = progress(client, linked_student(client, "ml-101", "ada").headers)
    assert rows[SEED] | {"max_score": None} == {
        "status": "in_progress",
        "submissions": 3,
        "best_score": 3.5,
        "max_score": None,
    }
    assert (rows[OTHER]["status"], rows[OTHER]["best_score"]) == ("passed", 5.0)


def test_a_submission_not_graded_yet_is_in_progress_without_a_score(client: TestClient) -> None:
    stored(client, "ml-101", student_id="ada")
    rows = progress(client, linked_student(client, "ml-101", "ada").headers)
    assert (rows[SEED]["status"], rows[SEED]["best_score"]) == ("in_progress", None)


def test_progress_needs_a_credential_where_keys_are_required(client: TestClient) -> None:
    response = client.get("/v1/progress")
    assert response.status_code == 401
    assert response.headers["content-type"] == "application/problem+json"


def test_on_an_open_service_the_page_names_its_student(
    make_client: ClientFactory, make_settings: SettingsFactory
) -> None:
    client = make_client(make_settings())
    graded(client, "default", "student-a", SEED, "passed 5.0")
    rows = progress(client, {})
    assert rows[SEED]["submissions"] == 1
    for student, status in (("student-a", "passed"), ("student-b", "not_tried")):
        response = client.get(f"/v1/progress?student_id={student}")
        assert {row["exercise"]: row["status"] for row in response.json()}[SEED] == status
