"""Staff name a group of unexplained wrong answers once, over HTTP on SQLite and PostgreSQL: the
groups (largest first, examples beside the reference's output), the naming (past reports get the
finding, scores and the outbox untouched, the figures count it as known), who may do it, and
that a course's name never reaches another course."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from app_support import ClientFactory, SettingsFactory
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from staff_support import Class, failing

from app.access import student_links
from app.access.api_keys import create_key
from app.core.models import Course, Role, Submission
from app.demo.behaviours import Unexplained
from app.demo.reports import Bug
from app.lti.models import LtiScorePost
from app.outbox.models import WebhookDelivery
from grader.catalog import Catalog
from grader.spec import Exercise

SEED = "multi-headed-self-attention"
COURSE, OTHER = "ml-101", "cv-202"
NAME = {
    "code": "half-scaled",
    "message": "Your output is half the reference's.",
    "fix": "Drop the extra factor of 0.5 after the projection.",
    "concepts": ["scaling"],
}


@dataclass(frozen=True)
class Courses:
    client: TestClient
    keys: dict[str, str]
    classes: dict[str, Class]

    def get(self, path: str, caller: str = "instructor", course: str = COURSE) -> Any:
        answer = self.client.get(f"/v1/courses/{course}{path}", headers=self.auth(caller))
        assert answer.status_code == 200, answer.text
        return answer.json()

    def name(self, body: dict[str, Any], caller: str = "instructor", course: str = COURSE) -> Any:
        return self.client.post(
            f"/v1/courses/{course}/exercises/{SEED}/mistakes", json=body, headers=self.auth(caller)
        )

    def auth(self, caller: str) -> dict[str, str]:
        return {"X-API-Key": self.keys[caller]}


@pytest.fixture
def courses(
    make_client: ClientFactory, make_settings: SettingsFactory, database_url: str
) -> Courses:
    client = make_client(make_settings(require_api_keys=True, database_url=database_url))
    api = client.app.state.api  # type: ignore[attr-defined]
    keys, classes = {}, {}
    with api.database.session() as session:
        for name, course, role in (
            ("instructor", COURSE, Role.INSTRUCTOR),
            ("submitter", COURSE, Role.SUBMITTER),
            ("other course's instructor", OTHER, Role.INSTRUCTOR),
        ):
            _, keys[name] = create_key(session, name, course=course, role=role)
        _, keys["student"] = student_links.mint(
            session, api.settings, course=COURSE, student="ada", lifetime=timedelta(days=1)
        )
        for slug in (COURSE, OTHER):
            course_id = session.scalars(select(Course.id).where(Course.slug == slug)).one()
            classes[slug] = Class(api.database, course_id)
    return Courses(client, keys, classes)


def unexplained(exercise: Exercise, kind: Unexplained) -> Bug:
    bug = failing(exercise, tests=2)
    return Bug(None, bug.failed, unexplained=kind)


def seed(courses: Courses, catalog: Catalog) -> dict[str, str]:
    """Three students halve the output, one crashes, one has a known mistake; in the other
    course, one halves it too. Returns a submission id of each kind."""
    exercise = catalog.get(SEED)
    here, there = courses.classes[COURSE], courses.classes[OTHER]
    scaled = unexplained(exercise, Unexplained.SCALED)
    ids = {
        "scaled": here.submit(exercise, "ada", scaled, source="def halved(): ...\n"),
        "crash": here.submit(exercise, "bob", unexplained(exercise, Unexplained.CRASH)),
        "known": here.submit(exercise, "cy", failing(exercise, 2, "missing-scaling")),
        "other course": there.submit(exercise, "ada", scaled),
    }
    here.submit(exercise, "dan", scaled)
    here.submit(exercise, "eve", scaled)
    here.submit(exercise, "eve", scaled)
    return ids


def test_unexplained_wrong_answers_are_grouped_by_behaviour_most_students_first(
    courses: Courses, catalog: Catalog
) -> None:
    seed(courses, catalog)
    answer = courses.get(f"/exercises/{SEED}/clusters")
    assert answer["unexplained_students"] == 4  # ada, dan, eve halve; bob crashes
    groups = answer["clusters"]
    assert [(g["students"], g["submissions"]) for g in groups] == [(3, 4), (1, 1)]
    scaled = groups[0]
    assert scaled["facts"] == ["output: is the reference's scaled by 0.5"]
    assert len(scaled["examples"]) == 3
    example = scaled["examples"][-1]
    assert example["source"] == "def halved(): ...\n" and example["student_id"] == "ada"
    excerpt = example["excerpts"][0]
    assert excerpt["actual"] == [round(value * 0.5, 4) for value in excerpt["expected"]]
    assert answer["named"] == [] and "scaling" in answer["concepts"]


def test_a_named_group_rediagnoses_the_past_without_touching_scores_or_the_outbox(
    courses: Courses, catalog: Catalog
) -> None:
    ids = seed(courses, catalog)
    before = courses.get(f"/exercises/{SEED}/stats")["misconceptions"]
    scores = figures(courses)
    key = courses.get(f"/exercises/{SEED}/clusters")["clusters"][0]["key"]
    answer = courses.name({**NAME, "behaviour_key": key})
    assert answer.status_code == 201, answer.text
    assert answer.json()["rediagnosed"] == 4

    # The student sees the finding in the report they had, at the score they had.
    seen = courses.client.get(f"/v1/submissions/{ids['scaled']}", headers=courses.auth("student"))
    report = seen.json()["report"]
    assert report["diagnosis"] == [
        {
            "code": "half-scaled",
            "message": f"{NAME['message']} Fix: {NAME['fix']}",
            "tests": report["behaviour"]["failing_tests"],
            "line": None,
            "concepts": ["scaling"],
        }
    ]
    assert figures(courses) == scores
    with courses.classes[COURSE].database.session() as session:
        for outbox in (WebhookDelivery, LtiScorePost):
            assert session.scalar(select(func.count()).select_from(outbox)) == 0

    after = courses.get(f"/exercises/{SEED}/stats")["misconceptions"]
    assert after["unrecognised"]["students"] == before["unrecognised"]["students"] - 3
    named = next(one for one in after["known"] if one["code"] == "half-scaled")
    assert (named["students"], named["message"]) == (3, report["diagnosis"][0]["message"])
    groups = courses.get(f"/exercises/{SEED}/clusters")
    assert [group["students"] for group in groups["clusters"]] == [1]  # the crash is left
    assert groups["named"][0]["code"] == "half-scaled"


def test_a_course_s_name_never_reaches_another_course(courses: Courses, catalog: Catalog) -> None:
    ids = seed(courses, catalog)
    key = courses.get(f"/exercises/{SEED}/clusters")["clusters"][0]["key"]
    assert courses.name({**NAME, "behaviour_key": key}).status_code == 201
    other = courses.get(f"/exercises/{SEED}/clusters", "other course's instructor", OTHER)
    assert [group["key"] for group in other["clusters"]] == [key] and other["named"] == []
    with courses.classes[OTHER].database.session() as session:
        report = session.get(Submission, ids["other course"])
        assert report is not None and report.report is not None
        assert report.report["diagnosis"] == []


@pytest.mark.parametrize("caller", ["student", "submitter", "other course's instructor"])
def test_only_the_course_s_staff_see_and_name_groups(
    courses: Courses, catalog: Catalog, caller: str
) -> None:
    seed(courses, catalog)
    key = courses.get(f"/exercises/{SEED}/clusters")["clusters"][0]["key"]
    path = f"/v1/courses/{COURSE}/exercises/{SEED}/clusters"
    assert courses.client.get(path, headers=courses.auth(caller)).status_code == 404
    assert courses.name({**NAME, "behaviour_key": key}, caller).status_code == 404
    assert courses.get(f"/exercises/{SEED}/clusters")["named"] == []


def test_a_name_is_refused_when_taken_unknown_or_untagged(
    courses: Courses, catalog: Catalog
) -> None:
    seed(courses, catalog)
    crash, scaled = (
        group["key"] for group in courses.get(f"/exercises/{SEED}/clusters")["clusters"][::-1]
    )
    refusals = [
        ({**NAME, "behaviour_key": scaled, "concepts": ["vibes"]}, 422),
        ({**NAME, "behaviour_key": scaled, "code": "Half Scaled"}, 422),
        ({**NAME, "behaviour_key": scaled, "code": "missing-scaling"}, 409),  # the exercise's
        ({**NAME, "behaviour_key": "0123456789abcdef"}, 404),
    ]
    for body, status in refusals:
        assert courses.name(body).status_code == status, body
    assert courses.name({**NAME, "behaviour_key": scaled}).status_code == 201
    assert courses.name({**NAME, "behaviour_key": crash}).status_code == 409  # the code
    assert courses.name({**NAME, "behaviour_key": scaled, "code": "x"}).status_code == 409


def figures(courses: Courses) -> list[tuple[str, str | None, float | None]]:
    """Every submission's status and score, in order."""
    with courses.classes[COURSE].database.session() as session:
        rows = session.execute(
            select(Submission.id, Submission.report_status, Submission.score).order_by(
                Submission.id
            )
        ).all()
    return [(row.id, row.report_status, row.score) for row in rows]
