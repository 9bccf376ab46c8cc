"""What the hidden tests did reaches the course's staff (GET .../submissions/{id}/hidden-tests)
and nothing a student reaches: submissions graded for real (in-process sandbox), the staff detail
read back, and every body a student, their link, their LMS launch, the page, the LMS's comment
or the webhook can get searched for its words and numbers; on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from app_support import ClientFactory, SettingsFactory, wait_until, webhook_receiver
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.access import student_links
from app.access.api_keys import create_key
from app.core.models import Course, Role, Submission
from app.lti.passback import comment
from app.lti.sessions import LaunchSession
from grader.report import Report

SDPA = "scaled-dot-product-attention"
COURSE = "ml-101"
# Raises on every test, in words its inputs decide: a hidden test's words are its own.
RAISES = """import torch


def scaled_dot_product(q, k, v, mask=None):
    raise ValueError(f"seen {q.sum().item():.9f}")
"""
# Right but for a factor: every test's first mismatch is its own.
SCALED = """import math

import torch


def scaled_dot_product(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores + mask
    attention = torch.softmax(scores, dim=-1)
    return 1.5 * (attention @ v), attention
"""


@dataclass(frozen=True)
class Taught:
    client: TestClient
    staff: dict[str, str]  # the instructor's key
    student: dict[str, str]  # ada's student link
    submitter: dict[str, str]  # the course's submitting key
    other_staff: dict[str, str]  # an instructor's key of another course
    course_id: int

    def hidden_tests(
        self, submission_id: str, headers: dict[str, str], course: str = COURSE
    ) -> Any:
        path = f"/v1/courses/{course}/submissions/{submission_id}/hidden-tests"
        return self.client.get(path, headers=headers)


@pytest.fixture
def course(make_client: ClientFactory, make_settings: SettingsFactory, database_url: str) -> Taught:
    settings = make_settings(
        require_api_keys=True, webhook_allowed_hosts=["127.0.0.1"], database_url=database_url
    )
    client = make_client(settings)
    api = client.app.state.api  # type: ignore[attr-defined]
    with api.database.session() as session:
        _, instructor = create_key(session, "instructor", course=COURSE, role=Role.INSTRUCTOR)
        _, submitter = create_key(session, "submitter", course=COURSE, role=Role.SUBMITTER)
        _, other = create_key(session, "other", course="cv-202", role=Role.INSTRUCTOR)
        _, link = student_links.mint(
            session, api.settings, course=COURSE, student="ada", lifetime=timedelta(days=1)
        )
        course_id = session.scalars(select(Course.id).where(Course.slug == COURSE)).one()
    return Taught(
        client,
        {"X-API-Key": instructor},
        {"X-API-Key": link},
        {"X-API-Key": submitter},
        {"X-API-Key": other},
        course_id,
    )


def submitted(course: Taught, source: str, callback_url: str | None = None) -> tuple[str, str]:
    """The submission's id, and the body of its ?wait=true answer."""
    body = {"exercise": SDPA, "source": source, "student_id": "ada", "callback_url": callback_url}
    response = course.client.post("/v1/submissions?wait=true", json=body, headers=course.submitter)
    assert response.status_code == 200, response.text
    return response.json()["id"], response.text


def student_bodies(course: Taught, submission_id: str) -> dict[str, str]:
    """Every body that the student, or anything acting for them, gets for the submission."""
    client = course.client
    api = client.app.state.api  # type: ignore[attr-defined]
    launch = LaunchSession("launch-1", SDPA, "ada", course.course_id).sign(api.settings)
    launched = {"Authorization": f"Bearer {launch}"}
    with api.database.session() as session:
        row = session.get(Submission, submission_id)
        assert row is not None and row.report is not None
        report = Report.model_validate(row.report)
    gets = {
        "submission": (f"/v1/submissions/{submission_id}", course.student),
        "history": ("/v1/submissions", course.student),
        "results.json": (f"/v1/submissions/{submission_id}/results.json", course.student),
        "lti submission": (f"/lti/submissions/{submission_id}", launched),
        "lti history": ("/lti/submissions", launched),
        "page": (f"/exercises/{SDPA}", {}),
        "page's exercise": (f"/v1/exercises/{SDPA}", course.student),
    }
    bodies = {}
    for name, (path, headers) in gets.items():
        response = client.get(path, headers=headers)
        assert response.status_code == 200, (name, response.text)
        bodies[name] = response.text
    assert submission_id in bodies["lti submission"]  # the launch does see the submission
    bodies["passback comment"] = comment(report)
    return bodies


def telling(detail: dict[str, Any]) -> list[str]:
    """What staff see of each failing hidden test that only its hidden run could tell."""
    told = []
    for test in detail["tests"]:
        if test["error"] is not None:
            told.append(test["error"]["message"])
        told += [check["message"] for check in test["outputs"] if not check["passed"]]
        told.append(test["summary"])
    return told


@pytest.mark.parametrize("source", [RAISES, SCALED], ids=["raises", "wrong values"])
def test_staff_see_what_each_hidden_test_did_and_no_student_facing_body_holds_any_of_it(
    course: Taught, source: str
) -> None:
    with webhook_receiver() as receiver:
        submission_id, answered = submitted(course, source, receiver.url)
        wait_until(lambda: len(receiver.requests) == 1)

    response = course.hidden_tests(submission_id, course.staff)

    assert response.status_code == 200, response.text
    detail = response.json()
    assert (detail["submission"], detail["exercise"], detail["student_id"]) == (
        submission_id,
        SDPA,
        "ada",
    )
    tests = detail["hidden"]["tests"]
    assert tests and not any(test["passed"] for test in tests)
    for test in tests:
        assert 1 <= test["input_set"] <= 8
        assert all(len(one["shape"]) >= 2 for one in test["inputs"][:3])  # q, k, v
        if source is RAISES:
            assert test["outcome"] == "raised"
            assert test["error"]["kind"] == "ValueError"
            assert test["error"]["message"].startswith("seen ")
            assert test["error"]["line"] == 5
        else:
            assert test["outcome"] == "wrong_output"
            (values, attention) = test["outputs"]
            assert not values["passed"] and attention["passed"]
            first = values["first_mismatch"]
            assert first["actual"] == pytest.approx(1.5 * first["expected"], abs=2e-4)
    bodies = student_bodies(course, submission_id)
    bodies["wait=true answer"] = answered
    bodies["webhook"] = receiver.requests[0].body.decode()
    for words in telling(detail["hidden"]):
        for name, body in bodies.items():
            assert words not in body, (name, words)
            assert json.dumps(words)[1:-1] not in body, (name, words)
    assert not [name for name, body in bodies.items() if "input_set" in body]


def test_only_the_course_s_staff_may_read_it(course: Taught) -> None:
    submission_id, _ = submitted(course, RAISES)

    assert course.hidden_tests(submission_id, course.student).status_code == 404
    assert course.hidden_tests(submission_id, course.submitter).status_code == 404
    assert course.hidden_tests(submission_id, course.other_staff).status_code == 404
    through_theirs = course.hidden_tests(submission_id, course.other_staff, course="cv-202")
    assert through_theirs.json()["type"] == "urn:autograder:problem:unknown-submission"
    unknown = course.hidden_tests("01JD8Z6Q3M9V7N4K2P5R8T1W0X", course.staff)
    assert unknown.status_code == 404
    assert unknown.json()["type"] == "urn:autograder:problem:unknown-submission"
