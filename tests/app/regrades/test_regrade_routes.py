"""The staff's regrade routes, on SQLite and PostgreSQL, with the runner in the background of
the embedded service: create, follow, ask again, cancel, the past reports; and 404 for anyone
who is not the course's staff."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from app_support import (
    CORRECT,
    RUNS_PER_GRADING,
    SEED,
    ClientFactory,
    FakeSandbox,
    SettingsFactory,
    wait_until,
)
from fastapi.testclient import TestClient
from regrade_support import graded_earlier

from app.access import student_links
from app.access.api_keys import create_key
from app.core.db import Database
from app.core.models import DEFAULT_COURSE_ID, Role, utcnow
from app.regrades import service
from app.regrades.models import Regrade, RegradeStatus
from grader.runner import Grader

REGRADES = f"/v1/courses/ml-101/exercises/{SEED}/regrades"


def key(client: TestClient, course: str, role: Role) -> dict[str, str]:
    api = client.app.state.api  # type: ignore[attr-defined]
    with api.database.session() as session:
        _, made = create_key(session, f"{course}-{role.value}", course=course, role=role)
    return {"X-API-Key": made}


def student(client: TestClient, course: str, student_id: str) -> dict[str, str]:
    api = client.app.state.api  # type: ignore[attr-defined]
    with api.database.session() as session:
        _, token = student_links.mint(
            session, api.settings, course=course, student=student_id, lifetime=timedelta(days=1)
        )
    return {"X-API-Key": token}


@pytest.fixture
def client(
    make_client: ClientFactory, make_settings: SettingsFactory, database_url: str
) -> TestClient:
    return make_client(
        make_settings(require_api_keys=True, database_url=database_url, regrade_poll_s=0.05)
    )


@pytest.fixture
def staff(client: TestClient) -> dict[str, str]:
    return key(client, "ml-101", Role.INSTRUCTOR)


def submitted(client: TestClient, headers: dict[str, str], n: int, student_id: str) -> str:
    response = client.post(
        "/v1/submissions?wait=true",
        json={"exercise": SEED, "source": f"{CORRECT}\n# {n}\n", "student_id": student_id},
        headers=headers,
    )
    assert response.status_code == 200, response.text
    submission_id: str = response.json()["id"]
    return submission_id


def regrade(
    client: TestClient, headers: dict[str, str], regrade_id: str, course: str = "ml-101"
) -> dict[str, Any]:
    response = client.get(f"/v1/courses/{course}/regrades/{regrade_id}", headers=headers)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def test_staff_regrade_an_exercise_follow_its_progress_and_read_the_past_reports(
    client: TestClient, staff: dict[str, str]
) -> None:
    first = submitted(client, staff, 1, "s1")
    submitted(client, staff, 2, "s2")
    created = client.post(REGRADES, json={}, headers=staff)
    assert created.status_code == 202, created.text
    body = created.json()
    assert created.headers["location"] == f"/v1/courses/ml-101/regrades/{body['id']}"
    assert {key: body[key] for key in ("exercise", "student_id", "reason", "total")} == {
        "exercise": SEED,
        "student_id": None,
        "reason": "requested",
        "total": 2,
    }
    wait_until(lambda: regrade(client, staff, body["id"])["status"] == "done")
    done = regrade(client, staff, body["id"])
    assert (done["graded"], done["changed"]) == (2, 0)  # the same version: the same scores
    assert done["finished_at"] is not None

    listing = client.get(f"/v1/courses/ml-101/regrades?exercise={SEED}", headers=staff).json()
    assert [item["id"] for item in listing["regrades"]] == [body["id"]]
    other = client.get("/v1/courses/ml-101/regrades?exercise=other", headers=staff).json()
    assert other == {"regrades": []}
    past = client.get(f"/v1/courses/ml-101/submissions/{first}/history", headers=staff).json()
    (report,) = past["past_reports"]
    assert report["regrade_id"] == body["id"]
    assert report["report"]["status"] == "passed"
    assert (
        report["exercise_version"]
        == client.get(f"/v1/exercises/{SEED}", headers=staff).json()["version"]
    )
    # Cancelling a finished regrade leaves it as it ended; asking again makes a new one.
    deleted = client.delete(f"/v1/courses/ml-101/regrades/{body['id']}", headers=staff)
    assert deleted.json()["status"] == "done"
    again = client.post(REGRADES, json={}, headers=staff)
    assert again.status_code == 202 and again.json()["id"] != body["id"]


def test_asking_again_answers_the_active_regrade_and_a_cancelled_one_stops(
    client: TestClient, staff: dict[str, str], sandbox: FakeSandbox
) -> None:
    submitted(client, staff, 1, "s1")
    submitted(client, staff, 2, "s1")
    sandbox.gate.clear()
    sandbox.runs.clear()
    active = client.post(REGRADES, json={}, headers=staff).json()
    wait_until(lambda: len(sandbox.runs) == 1)  # its first grading is in flight
    asked_again = client.post(REGRADES, json={}, headers=staff)
    assert asked_again.status_code == 200 and asked_again.json()["id"] == active["id"]
    one_student = client.post(REGRADES, json={"student_id": "s1"}, headers=staff)
    assert one_student.status_code == 202 and one_student.json()["student_id"] == "s1"

    cancelled = client.delete(f"/v1/courses/ml-101/regrades/{active['id']}", headers=staff)
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    sandbox.gate.set()
    wait_until(lambda: regrade(client, staff, one_student.json()["id"])["status"] == "done")
    stopped = regrade(client, staff, active["id"])
    assert (stopped["status"], stopped["graded"]) == ("cancelled", 0)
    assert regrade(client, staff, one_student.json()["id"])["graded"] == 2


def staff_routes(submission_id: str, regrade_id: str) -> list[tuple[str, str]]:
    return [
        ("POST", REGRADES),
        ("GET", "/v1/courses/ml-101/regrades"),
        ("GET", f"/v1/courses/ml-101/regrades/{regrade_id}"),
        ("DELETE", f"/v1/courses/ml-101/regrades/{regrade_id}"),
        ("GET", f"/v1/courses/ml-101/submissions/{submission_id}/history"),
    ]


def test_anyone_but_the_courses_staff_finds_no_such_course(
    client: TestClient, staff: dict[str, str]
) -> None:
    submission_id = submitted(client, staff, 1, "s1")
    regrade_id = client.post(REGRADES, json={}, headers=staff).json()["id"]
    outsiders = {
        "submitter": key(client, "ml-101", Role.SUBMITTER),
        "student": student(client, "ml-101", "s1"),
        "another course's instructor": key(client, "cv-202", Role.INSTRUCTOR),
    }
    for name, headers in outsiders.items():
        for method, path in staff_routes(submission_id, regrade_id):
            response = client.request(method, path, json={}, headers=headers)
            assert response.status_code == 404, (name, method, path)
            assert response.json()["type"] == "urn:autograder:problem:unknown-course"
    assert client.get("/v1/courses/ml-101/regrades").status_code == 401


def test_the_staff_of_one_course_find_nothing_of_another(
    client: TestClient, staff: dict[str, str]
) -> None:
    elsewhere = key(client, "cv-202", Role.ADMIN)
    submission_id = submitted(client, elsewhere, 1, "s1")
    regrade_id = client.post(
        f"/v1/courses/cv-202/exercises/{SEED}/regrades", json={}, headers=elsewhere
    ).json()["id"]
    problems = {
        f"/v1/courses/ml-101/regrades/{regrade_id}": "unknown-regrade",
        f"/v1/courses/ml-101/submissions/{submission_id}/history": "unknown-submission",
        "/v1/courses/ml-101/exercises/no-such-exercise/regrades": "unknown-exercise",
    }
    for path, kind in problems.items():
        method = "POST" if path.endswith("/regrades") else "GET"
        response = client.request(method, path, json={}, headers=staff)
        assert response.status_code == 404, path
        assert response.json()["type"] == f"urn:autograder:problem:{kind}"
    listing = client.get("/v1/courses/ml-101/regrades", headers=staff).json()
    assert listing == {"regrades": []}


def test_the_embedded_service_resumes_the_regrade_its_last_run_held_at_once(
    make_client: ClientFactory, make_settings: SettingsFactory, database_url: str, grader: Grader
) -> None:
    database = Database.from_url(database_url)
    database.migrate()
    graded_earlier(database, CORRECT, grader.grade(SEED, CORRECT))
    with database.session() as session:
        regrade_id = service.request(session, DEFAULT_COURSE_ID, SEED, "", None, None).regrade.id
        # The last run died holding it, its lease an hour from running out.
        held = session.get(Regrade, regrade_id)
        assert held is not None
        held.status, held.lease_holder = RegradeStatus.RUNNING, "autograder-1@gone"
        held.lease_expires_at = utcnow() + timedelta(hours=1)
    database.close()

    client = make_client(make_settings(database_url=database_url, regrade_poll_s=0.05))
    wait_until(lambda: regrade(client, {}, regrade_id, "default")["status"] == "done")
    assert regrade(client, {}, regrade_id, "default")["graded"] == 1


def test_with_a_regrade_running_students_new_submissions_are_graded_before_its_next_one(
    make_client: ClientFactory,
    make_settings: SettingsFactory,
    database_url: str,
    sandbox: FakeSandbox,
) -> None:
    client = make_client(
        make_settings(database_url=database_url, regrade_poll_s=0.05, sandbox_slots=1)
    )
    sources = [f"{CORRECT}\n# {n}\n" for n in range(4)]
    for text in sources[:2]:
        graded = client.post("/v1/submissions?wait=true", json={"exercise": SEED, "source": text})
        assert graded.status_code == 200, graded.text
    sandbox.gate.clear()
    sandbox.runs.clear()
    regrade_id = client.post(f"/v1/courses/default/exercises/{SEED}/regrades", json={}).json()["id"]
    wait_until(lambda: sandbox.runs == sources[:1])  # the regrade's first grading is in flight
    client.post("/v1/submissions", json={"exercise": SEED, "source": sources[2]})
    wait_until(lambda: len(sandbox.runs) == 2)  # a student's, in the service's one slot
    client.post("/v1/submissions", json={"exercise": SEED, "source": sources[3]})  # queued
    sandbox.gate.set()
    wait_until(lambda: regrade(client, {}, regrade_id, "default")["status"] == "done")

    runs = sandbox.runs
    students_last = max(index for index, text in enumerate(runs) if text in sources[2:])
    assert runs.index(sources[1]) > students_last
    assert [runs.count(text) for text in sources] == [RUNS_PER_GRADING] * 4
