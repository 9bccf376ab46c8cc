"""Student ids in their normal form at every door (app.core.student_ids): one student, one attempt
budget, whatever the spelling; invisible characters refused; LMS ids kept byte for byte."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from access_support import Caller, caller
from app_support import MISSING_SCALING, SEED, ClientFactory, SettingsFactory
from fastapi.testclient import TestClient
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import select

from app.access.auth import student_principal
from app.access.rules import submitting_as
from app.api.submission_schemas import SubmissionCreate
from app.core.models import Role, Submission
from app.core.student_ids import normal_student_id
from app.core.visible_text import is_invisible
from app.courses.models import ExercisePolicy
from app.courses.registry import existing_course

# Five spellings of one student (issue 24): as typed, capitalised, with a trailing space, in
# full-width letters, and with a no-break space inside a longer id.
CAROL = ["carol", "Carol", "carol ", "\uff43\uff41\uff52\uff4f\uff4c", " CAROL"]
HIDDEN = ["carol\u200b", "\u202ecarol", "car\tol", "carol\u2066", "caro\u00adl", "carol\ufe0f"]


@pytest.mark.parametrize("spelling", CAROL)
def test_the_spellings_of_one_id_are_one_id(spelling: str) -> None:
    assert normal_student_id(spelling) == "carol"


@pytest.mark.parametrize(
    ("given", "normal"),
    [
        ("S1234567", "s1234567"),
        ("Ada  Lovelace", "ada lovelace"),
        ("ada\u00a0lovelace", "ada lovelace"),
        ("Stra\u00dfe", "strasse"),
        ("\ufb01sh", "fish"),
    ],
)
def test_the_normal_form_is_nfkc_case_folded_and_trimmed(given: str, normal: str) -> None:
    assert normal_student_id(given) == normal


@pytest.mark.parametrize("given", HIDDEN)
def test_an_id_with_an_invisible_or_control_character_is_refused(given: str) -> None:
    with pytest.raises(ValueError, match="invisible or control characters"):
        normal_student_id(given)


@pytest.mark.parametrize("given", ["   ", "\u3000"])
def test_a_blank_id_is_refused(given: str) -> None:
    with pytest.raises(ValueError, match="blank"):
        normal_student_id(given)


def test_lms_ids_are_kept_as_the_launch_made_them() -> None:
    """An LMS `sub` is opaque: `lti:` ids are never folded, trimmed or normalised."""
    launched = "lti:platform-1:Ab\uff43 D "
    assert normal_student_id(launched) == launched
    body = SubmissionCreate(exercise=SEED, source="", student_id=launched)
    assert body.student_id == launched


@given(st.text(max_size=40))
def test_the_normal_form_is_stable_and_shows_what_it_holds(given: str) -> None:
    try:
        normal = normal_student_id(given)
    except ValueError:
        return
    if given.startswith("lti:"):
        return
    assert normal_student_id(normal) == normal
    assert normal == normal.strip() and "  " not in normal
    assert not any(is_invisible(char) for char in normal)


@dataclass(frozen=True)
class Course:
    client: TestClient
    submitter: Caller
    instructor: Caller


@pytest.fixture
def course(make_client: ClientFactory, make_settings: SettingsFactory, database_url: str) -> Course:
    """Course ml-101, where the seed exercise allows 2 attempts an hour."""
    client = make_client(make_settings(require_api_keys=True, database_url=database_url))
    instructor = caller(client, "ml-101", Role.INSTRUCTOR)
    submitter = caller(client, "ml-101", Role.SUBMITTER)
    with client.app.state.api.database.session() as session:  # type: ignore[attr-defined]
        course_id = existing_course(session, "ml-101").id
        session.add(ExercisePolicy(course_id=course_id, exercise=SEED, attempts=2, window_s=3600))
    return Course(client, submitter, instructor)


def _submit(course: Course, student: str) -> int:
    response = course.client.post(
        "/v1/submissions?wait=true",
        json={"exercise": SEED, "source": MISSING_SCALING, "student_id": student},
        headers=course.submitter.headers,
    )
    return response.status_code


def test_five_spellings_are_one_student_with_one_budget(course: Course) -> None:
    assert [_submit(course, spelling) for spelling in CAROL[:3]] == [200, 200, 429]
    with course.client.app.state.api.database.session() as session:  # type: ignore[attr-defined]
        assert set(session.scalars(select(Submission.student_id))) == {"carol"}
    for spelling in CAROL[3:]:
        assert _submit(course, spelling) == 429


def test_every_door_takes_an_id_in_its_normal_form(course: Course) -> None:
    assert _submit(course, "carol") == 200
    client, staff = course.client, course.instructor.headers
    history = client.get("/v1/submissions", params={"student_id": "CAROL "}, headers=staff)
    assert [item["student_id"] for item in history.json()["items"]] == ["carol"]
    standing = client.get(
        f"/v1/exercises/{SEED}/attempts", params={"student_id": "Carol"}, headers=staff
    )
    assert standing.json()["remaining"] == 1
    progress = client.get("/v1/progress", params={"student_id": "\uff23arol"}, headers=staff)
    assert {item["exercise"]: item["submissions"] for item in progress.json()}[SEED] == 1
    page = client.get("/v1/courses/ml-101/students/Carol", headers=staff)
    assert page.status_code == 200 and page.json()["student_id"] == "carol"
    regrade = client.post(
        f"/v1/courses/ml-101/exercises/{SEED}/regrades", json={"student_id": "Carol"}, headers=staff
    )
    assert regrade.json()["student_id"] == "carol", regrade.text


@pytest.mark.parametrize("given", HIDDEN[:2])
def test_every_door_refuses_an_invisible_character_with_a_422_that_says_so(
    course: Course, given: str
) -> None:
    client, staff = course.client, course.instructor.headers
    answers = [
        client.post(
            "/v1/submissions",
            json={"exercise": SEED, "source": "x", "student_id": given},
            headers=staff,
        ),
        client.get("/v1/submissions", params={"student_id": given}, headers=staff),
        client.get(f"/v1/exercises/{SEED}/attempts", params={"student_id": given}, headers=staff),
        client.get("/v1/progress", params={"student_id": given}, headers=staff),
        client.get(f"/v1/courses/ml-101/students/{given}", headers=staff),
        client.post(
            f"/v1/courses/ml-101/exercises/{SEED}/regrades",
            json={"student_id": given},
            headers=staff,
        ),
    ]
    for answer in answers:
        assert answer.status_code == 422, (answer.request.url, answer.text)
        assert "invisible or control characters" in answer.json()["detail"]


def test_a_launched_student_submits_under_the_id_the_launch_made() -> None:
    """What /lti/submissions does with the launch's id: the wire schema, then app.access.rules."""
    launched = "lti:p:Mixed\uff23ase "
    body = SubmissionCreate(exercise=SEED, source="", student_id=launched)
    assert submitting_as(student_principal(1, launched, "lti:p"), body.student_id) == launched


def test_a_student_whose_link_predates_normal_ids_may_still_name_itself() -> None:
    body = SubmissionCreate(exercise=SEED, source="", student_id="Carol")
    assert submitting_as(student_principal(1, "Carol", "link:1"), body.student_id) == "Carol"
