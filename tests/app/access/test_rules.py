"""Who may see what, on SQLite and on PostgreSQL: every submission route, for every role, in its own
and another course; the
reserved `lti:` students; and the source and callback shown only to whom they belong.
(Callbacks point at a closed port on loopback: nothing leaves.)"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from access_support import Caller, caller, linked_student
from app_support import CORRECT, SEED, ClientFactory, SettingsFactory
from fastapi.testclient import TestClient

from app.core.models import Role


@dataclass(frozen=True)
class Course:
    client: TestClient
    callers: dict[str, Caller]
    submitted: dict[str, str]  # caller name → the id of the submission it made


@pytest.fixture
def courses(
    make_client: ClientFactory, make_settings: SettingsFactory, database_url: str
) -> Iterator[Course]:
    settings = make_settings(
        require_api_keys=True, webhook_allowed_hosts=["127.0.0.1"], database_url=database_url
    )
    client = make_client(settings)
    callers = {
        "admin": caller(client, "ml-101", Role.ADMIN),
        "instructor": caller(client, "ml-101", Role.INSTRUCTOR),
        "submitter": caller(client, "ml-101", Role.SUBMITTER),
        "other submitter": caller(client, "ml-101", Role.SUBMITTER),
        "other course": caller(client, "cv-202", Role.INSTRUCTOR),
        "student s1": linked_student(client, "ml-101", "s1"),
        "other course's s1": linked_student(client, "cv-202", "s1"),
    }
    submitted = {}
    for name in ("submitter", "other submitter", "other course"):
        response = client.post(
            "/v1/submissions?wait=true",
            json={
                "exercise": SEED,
                "source": f"{CORRECT}\n# {name}\n",
                "student_id": "s1",  # the same student id in two courses: two students
                "callback_url": f"http://127.0.0.1:9/{name.replace(' ', '-')}",
            },
            headers=callers[name].headers,
        )
        assert response.status_code == 200, response.text
        submitted[name] = response.json()["id"]
    yield Course(client, callers, submitted)


# Who sees which submission: staff see their course's, a submitter what it submitted, a linked
# student what was submitted as them in their course (every submission here is student s1's).
SEES = {
    "admin": {"submitter", "other submitter"},
    "instructor": {"submitter", "other submitter"},
    "submitter": {"submitter"},
    "other submitter": {"other submitter"},
    "other course": {"other course"},
    "student s1": {"submitter", "other submitter"},
    "other course's s1": {"other course"},
}


@pytest.mark.parametrize("who", list(SEES))
def test_every_route_shows_a_caller_only_what_it_may_see(courses: Course, who: str) -> None:
    me = courses.callers[who]
    listing = courses.client.get("/v1/submissions", headers=me.headers).json()
    listed = {item["id"] for item in listing["items"]}
    assert listed == {courses.submitted[name] for name in SEES[who]}
    filtered = courses.client.get("/v1/submissions?student_id=s1", headers=me.headers).json()
    assert {item["id"] for item in filtered["items"]} == listed
    progress = courses.client.get("/v1/progress", headers=me.headers).json()
    assert next(row for row in progress if row["exercise"] == SEED)["submissions"] == len(listed)
    for owner, submission_id in courses.submitted.items():
        detail = courses.client.get(f"/v1/submissions/{submission_id}", headers=me.headers)
        results = courses.client.get(
            f"/v1/submissions/{submission_id}/results.json", headers=me.headers
        )
        if owner in SEES[who]:
            assert (detail.status_code, results.status_code) == (200, 200)
        else:  # unknown, as an id that does not exist: ids leak nothing
            assert (detail.status_code, results.status_code) == (404, 404)
            assert detail.json()["detail"] == f"no submission has id {submission_id!r}"


def test_the_code_goes_to_its_submitter_and_the_staff_the_callback_to_its_giver(
    courses: Course,
) -> None:
    submission_id = courses.submitted["submitter"]
    for who in ("submitter", "admin", "instructor", "student s1"):
        body = courses.client.get(
            f"/v1/submissions/{submission_id}", headers=courses.callers[who].headers
        ).json()
        assert body["source"] == f"{CORRECT}\n# submitter\n"
        shown = body["callback_url"]
        assert shown == ("http://127.0.0.1:9/submitter" if who == "submitter" else None)


def test_lms_student_ids_are_reserved_for_launches(courses: Course) -> None:
    response = courses.client.post(
        "/v1/submissions",
        json={"exercise": SEED, "source": CORRECT, "student_id": "lti:1:student-42"},
        headers=courses.callers["instructor"].headers,
    )
    assert response.status_code == 422
    assert response.json()["type"].endswith("reserved-student-id")
